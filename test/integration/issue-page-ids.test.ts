import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { HOSTILE_SEGMENTS } from "../support/hostile.js";

// The issue page reads the issue, its merges and its collaboration on one pool. A malformed id
// sent to PostgreSQL with a read beside it on the same connection (postgres.js pipelines them)
// failed that other read and left its own waiting: a 500 or, after the database budget, a 503.
describe("the issue page under concurrent requests with malformed ids", () => {
  let app: TestApp;
  let cookie: string;
  let projectId: string;
  beforeAll(async () => {
    app = await startTestApp();
    const owner = await makeUser(app.sql);
    projectId = (await makeProject(app.sql, owner.id, [])).projectId;
    cookie = await login(app, owner.email);
  });
  afterAll(() => app?.close());

  it("answers each with a 4xx, never a 5xx, and the pool keeps answering", { timeout: 120_000 }, async () => {
    const ids = [...HOSTILE_SEGMENTS, "%7B00000000-0000-0000-0000-000000000000%7D", "00000000-0000-0000-0000-000000000000"];
    const urls = Array.from({ length: 3 }, () => ids.map((id) => `/projects/${projectId}/issues/${id}`)).flat();
    const answers = await Promise.all(
      urls.map(async (url) => {
        const r = await app.request(url, { headers: { cookie }, redirect: "manual" });
        await r.text();
        return { url, status: r.status };
      }),
    );
    expect(answers.filter((a) => a.status >= 500)).toEqual([]);
    expect(answers.every((a) => a.status >= 400 && a.status < 500)).toBe(true);
    const overview = await app.request(`/projects/${projectId}`, { headers: { cookie }, redirect: "manual" });
    expect(overview.status).toBe(200);
  });
});

// The page's three reads (the issue, its merges, its collaboration) each checked the project's access
// and read the group again. The read now does both once and hands the project and the group
// to the other two.
describe("the issue page's reads", () => {
  let app: TestApp;
  afterAll(() => app?.close());

  it("check the project's access once and read the group row once, and still show merges and the timeline", async () => {
    app = await startTestApp();
    const owner = await makeUser(app.sql);
    const { projectId, apiKey } = await makeProject(app.sql, owner.id, []);
    const cookie = await login(app, owner.email);
    await ingest(app, apiKey, { errors: [{ message: "Issue page reads a" }, { message: "Issue page reads b" }] });
    const [a, b] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} order by message`;
    const merged = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body: { ids: [a.id, b.id], target_id: a.id } });
    expect(merged.status).toBe(200);

    const statements: string[] = [];
    app.sql.options.debug = (_connection: number, query: string) => void statements.push(query);
    let page: Response;
    try {
      // the issue route's loader alone, without the layouts' above it
      const route = encodeURIComponent("routes/_dash.projects.$projectId.issues.$groupId");
      page = await app.request(`/projects/${projectId}/issues/${a.id}.data?_routes=${route}`, { headers: { cookie }, redirect: "manual" });
    } finally {
      app.sql.options.debug = false;
    }
    expect(page.status).toBe(200);
    const body = await page.text();
    // the merged issue and the timeline's entries are still there
    expect(body).toContain(b.id);
    expect(body).toContain("merged");
    const authorizations = statements.filter((q) => /from project_members m join projects p/.test(q));
    const groupReads = statements.filter((q) => /from error_groups g where g\.project_id = \$1 and g\.id = \$2/.test(q) || /from error_groups where project_id = \$1 and id = \$2/.test(q));
    expect({ authorizations: authorizations.length, groupReads: groupReads.length }).toEqual({ authorizations: 1, groupReads: 1 });
  });
});
