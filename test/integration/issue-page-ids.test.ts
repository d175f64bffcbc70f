import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { login, makeProject, makeUser } from "../support/team.js";
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
