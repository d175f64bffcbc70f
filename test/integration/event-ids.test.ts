import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, jsonHeaders, startTestApp, type TestApp } from "../support/server.js";

/** An event's id, as a client gave it: stored on the event row and returned by the events API. */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(async () => {
  await app?.close();
});

const ingest = (apiKey: string, body: unknown) => app.request("/api/ingest", { method: "POST", headers: jsonHeaders(apiKey), body: JSON.stringify(body) });

describe("event ids", () => {
  it("stores a native event's event_id (normalized), returns it from the events API, and refuses one that is not a UUID", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "Ids");
    const id = "{0A1B2C3D-1111-4222-8333-444455556666}";
    const r = await ingest(apiKey, {
      errors: [
        { message: "with an id", stack_trace: "ServerScriptService.Shop:1", event_id: id },
        { message: "without one", stack_trace: "ServerScriptService.Shop:2", event_id: null },
      ],
    });
    expect(r.status).toBe(200);
    const rows = await app.sql<{ message: string; event_id: string | null; group_id: string }[]>`
      select message, event_id::text, group_id from events where project_id = ${projectId} order by message`;
    expect(rows.map((e) => [e.message, e.event_id])).toEqual([
      ["with an id", "0a1b2c3d-1111-4222-8333-444455556666"],
      ["without one", null],
    ]);
    const page = await app.request(`/api/v1/errors/${rows[0].group_id}/events`, { headers: jsonHeaders(apiKey) });
    expect(page.status).toBe(200);
    expect((await page.json()).data.map((e: any) => [e.message, e.event_id])).toEqual([["with an id", "0a1b2c3d-1111-4222-8333-444455556666"]]);

    for (const bad of ["not-a-uuid", "0a1b2c3d11114222833344445555666", 42, "{0a1b2c3d-1111-4222-8333-444455556666"]) {
      const refused = await ingest(apiKey, { errors: [{ message: "ok" }, { message: "bad id", event_id: bad }] });
      expect(refused.status).toBe(400);
      const body = await refused.json();
      expect(body).toMatchObject({ error: "invalid_payload", details: [{ path: "errors[1].event_id" }] });
    }
    expect((await app.sql`select count(*)::int as n from events where project_id = ${projectId}`)[0].n).toBe(2);
  });

  it("stores a Sentry event's event_id, and the id it answers for an event sent without one", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "Sentry ids");
    const store = (event: unknown) =>
      app.request(`/api/${projectId}/store/?sentry_key=${apiKey}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(event) });
    const given = "6a1f0c3e9b2d4e7f8a1b2c3d4e5f6a7b";
    expect(await (await store({ event_id: given, message: "given id" })).json()).toEqual({ id: given });
    const made = (await (await store({ message: "made id" })).json()).id as string;
    expect(made).toMatch(/^[0-9a-f]{32}$/);
    const rows = await app.sql<{ message: string; event_id: string }[]>`
      select message, replace(event_id::text, '-', '') as event_id from events where project_id = ${projectId} order by message`;
    expect(rows).toEqual([
      { message: "given id", event_id: given },
      { message: "made id", event_id: made },
    ]);
  });
});
