import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { ingest, login, makeProject, makeUser } from "../support/team.js";

/** The dashboard pages follow the same gate as the Team API: sign-in first, 404 outside your projects, 403 for roles. */
let app: TestApp;
let projectId: string;
let groupId: string;
const cookies: Record<string, string> = {};
const TRACE = "0b4e28ba-2fa1-11d2-883f-0016d3cca427";

const pages = () => [
  `/projects/${projectId}`,
  `/projects/${projectId}?timeframe=7d`,
  `/projects/${projectId}/issues?status=all&level=error&search=nil&sort=count&page=1`,
  `/projects/${projectId}/issues/${groupId}`,
  `/projects/${projectId}/traces/${TRACE}`,
  `/projects/${projectId}/settings`,
];

const get = (path: string, cookie?: string) => app.request(path, { headers: cookie ? { cookie } : {}, redirect: "manual" });
const post = (path: string, form: Record<string, string>, cookie: string) =>
  app.request(path, {
    method: "POST",
    headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
    body: new URLSearchParams(form).toString(),
    redirect: "manual",
  });

beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  const member = await makeUser(app.sql);
  const outsider = await makeUser(app.sql);
  let apiKey: string;
  ({ projectId, apiKey } = await makeProject(app.sql, owner.id, [{ userId: member.id, role: "member" }]));
  await makeProject(app.sql, outsider.id);
  await ingest(app, apiKey, { message: "attempt to index nil", user_id: 5, player_name: "builderman", trace_id: TRACE });
  [{ id: groupId }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
  cookies.owner = await login(app, owner.email);
  cookies.member = await login(app, member.email);
  cookies.outsider = await login(app, outsider.email);
});
afterAll(() => app?.close());

describe("dashboard pages", () => {
  it("redirect to sign-in without a session", async () => {
    for (const p of [...pages(), "/projects", "/projects/new", "/account"]) {
      const r = await get(p);
      expect(r.status, p).toBe(302);
      expect(r.headers.get("location"), p).toBe(`/login?next=${encodeURIComponent(p)}`);
    }
  });

  it("render for a member of the project", async () => {
    for (const p of pages()) {
      const r = await get(p, cookies.member);
      expect(r.status, p).toBe(200);
      expect(r.headers.get("content-type")).toContain("text/html");
    }
    const detail = await (await get(`/projects/${projectId}/issues/${groupId}`, cookies.member)).text();
    expect(detail).toContain("attempt to index nil");
    expect(detail).toContain("builderman");
  });

  it("answer 404 to a user of another project", async () => {
    for (const p of pages()) {
      const r = await get(p, cookies.outsider);
      expect(r.status, p).toBe(404);
      expect(await r.text()).not.toContain("attempt to index nil");
    }
  });

  it("refuse owner/admin actions to a member with 403, and let the member triage", async () => {
    const settings = `/projects/${projectId}/settings`;
    const forms: Record<string, string>[] = [
      { intent: "key-create", name: "sneaky" },
      { intent: "member-add", email: "friend@example.test", role: "admin" },
      { intent: "rename", name: "Mine now" },
    ];
    for (const form of forms) {
      const r = await post(settings, form, cookies.member);
      expect(r.status, form.intent).toBe(403);
    }
    const del = await post(`/projects/${projectId}/issues/${groupId}`, { intent: "delete" }, cookies.member);
    expect(del.status).toBe(403);
    const keys = await app.sql`select 1 from api_keys where project_id = ${projectId}`;
    expect(keys).toHaveLength(1);

    const resolve = await post(`/projects/${projectId}/issues/${groupId}`, { intent: "status", status: "resolved" }, cookies.member);
    expect(resolve.status).toBe(200);
    const bulk = await post(`/projects/${projectId}/issues?index`, { intent: "open", ids: groupId }, cookies.member);
    expect(bulk.status).toBe(200);
    const [{ status }] = await app.sql`select status from error_groups where id = ${groupId}`;
    expect(status).toBe("open");
  });

  it("the public share page renders without a session and hides player names", async () => {
    const r = await post(`/projects/${projectId}/issues/${groupId}`, { intent: "share-create", role: "viewer", expires_in_days: "" }, cookies.owner);
    expect(r.status).toBe(200);
    const html = await r.text();
    const url = /\/share\/(shr_[A-Za-z0-9_-]+)/.exec(html)![0];
    const page = await get(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    const text = await page.text();
    expect(text).toContain("attempt to index nil");
    expect(text).not.toContain("builderman");
    expect((await get("/share/shr_nope")).status).toBe(404);
  });
});
