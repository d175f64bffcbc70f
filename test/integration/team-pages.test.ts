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
  `/projects/${projectId}/traces`,
  `/projects/${projectId}/releases`,
  `/projects/${projectId}/players`,
  `/projects/${projectId}/players?search=builder`,
  `/projects/${projectId}/players/5`,
  `/projects/${projectId}/settings`,
];

/** Page text without React's markers between adjacent text parts. */
const text = async (r: Response) => (await r.text()).replaceAll("<!-- -->", "");
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
    // affected players link to the player's page, which links back to the issue
    expect(detail).toContain(`/projects/${projectId}/players/5`);
    const player = await (await get(`/projects/${projectId}/players/5`, cookies.member)).text();
    expect(player).toContain(`/projects/${projectId}/issues/${groupId}`);
    const traces = await (await get(`/projects/${projectId}/traces`, cookies.member)).text();
    expect(traces).toContain(`/projects/${projectId}/traces/${TRACE}`);
  });

  it("say so when a page number is past the last page", async () => {
    const r = await get(`/projects/${projectId}/issues?page=999`, cookies.member);
    expect(r.status).toBe(200);
    const html = await text(r);
    expect(html).toContain("There is no page 999");
    expect(html).toContain("Go to the last page");
    expect(html).not.toContain("No issues match these filters");
  });

  it("bulk-change every issue matching the filters after a confirmation that shows the count", async () => {
    const confirm = await text(await get(`/projects/${projectId}/issues?status=open&confirm=ignored`, cookies.member));
    // one issue is "the 1 issue", never "all 1 issue" (React's text separators aside)
    expect(confirm.replaceAll("<!-- -->", "")).toMatch(/Ignore the 1 issue matching these filters\?/);
    const asOf = /name="as_of" value="([^"]+)"/.exec(confirm)![1];
    const r = await post(`/projects/${projectId}/issues?index`, { scope: "filter", filter: "status=open", as_of: asOf, intent: "ignored" }, cookies.member);
    expect(r.status).toBe(200);
    expect(await text(r)).toContain("Ignored 1 issue matching the filters.");
    const [{ status }] = await app.sql`select status from error_groups where id = ${groupId}`;
    expect(status).toBe("ignored");
    await app.sql`update error_groups set status = 'open' where id = ${groupId}`;
  });

  it("the account page stores a local time zone for this browser", async () => {
    const r = await post("/account", { intent: "time-zone", mode: "local", zone: "Europe/Berlin" }, cookies.member);
    expect(r.status).toBe(200);
    const cookie = r.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^rm_tz=Europe%2FBerlin;/);
    const page = await (await get(`/projects/${projectId}/issues/${groupId}`, `${cookies.member}; ${cookie.split(";")[0]}`)).text();
    expect(page).toMatch(/GMT\+[12]/);
    const bad = await post("/account", { intent: "time-zone", mode: "local", zone: "Mars/Olympus" }, cookies.member);
    expect(bad.status).toBe(400);
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
