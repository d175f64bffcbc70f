import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";

let app: TestApp;
let apiKey: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey } = await createProject(app.sql));
});
afterAll(() => app?.close());

describe("service basics", () => {
  it("answers the health check without a key", async () => {
    const r = await getJson(app, "/api/ingest");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok" });
  });

  it("reports readiness with the database", async () => {
    const r = await getJson(app, "/api/ready");
    expect(r).toMatchObject({ status: 200, body: { status: "ok", database: "ok" } });
  });

  it("answers unknown /api paths with the JSON 404 body", async () => {
    const r = await postJson(app, "/api/does-not-exist", {});
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: "not_found" });
    expect(typeof r.body.message).toBe("string");
  });

  it("ingests an event that the v1 API then lists", async () => {
    const ingest = await postJson(app, "/api/ingest", { message: "smoke test" }, apiKey);
    expect(ingest.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 0 });
    const list = await getJson(app, "/api/v1/errors?grouped=true", apiKey);
    expect(list.body.total).toBe(1);
    expect(list.body.data[0]).toMatchObject({ message: "smoke test", count: 1, status: "open" });
  });
});
