import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, postJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * A refused batch names every invalid event (SPEC section 2): its 400's details hold at least one
 * entry for each invalid index, however many problems the batch has, so a client can drop exactly
 * those events and resend the rest.
 */

let app: TestApp;
let apiKey: string;
let projectId: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey, projectId } = await createProject(app.sql));
});
afterAll(() => app?.close());

/** Six ways to be invalid, some with several problems in one event. */
const BAD: ((i: number) => Record<string, unknown>)[] = [
  (i) => ({ message: "\u3000", level: "fatal", user_id: -1, trace_id: `nope-${i}` }),
  () => ({ message: "ok", level: "fatal" }),
  () => ({ message: 7, count: "many", tags: "x" }),
  () => ({ message: "ok", timestamp: "yesterday", place_id: "abc", environment: " " }),
  () => ({ message: "ok", context: "not an object", fingerprint: [] }),
  () => ({ message: "ok", player_name: "p".repeat(300), job_id: "j".repeat(300), game_version: "v".repeat(300) }),
];

describe("a batch of 100 events, 60 of them invalid in different fields", () => {
  it("is refused with details that name each of the 60 invalid events", async () => {
    const invalid = new Set<number>();
    const errors = Array.from({ length: 100 }, (_, i) => {
      if (i % 5 < 3) {
        invalid.add(i);
        return BAD[i % BAD.length](i);
      }
      return { message: `fine ${i}` };
    });
    expect(invalid.size).toBe(60);
    const r = await postJson(app, "/api/ingest", { errors }, apiKey);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    const named = new Set((r.body.details as { path: string }[]).map((d) => Number(/^errors\[(\d+)\]/.exec(d.path)?.[1])));
    expect([...named].sort((a, b) => a - b)).toEqual([...invalid].sort((a, b) => a - b));
    expect(r.body.details.length).toBeLessThanOrEqual(100);
    expect(r.body.message).toMatch(/^60 invalid events/);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(0);
  });

  it("lists further problems of an event while there is room", async () => {
    const r = await postJson(app, "/api/ingest", { errors: [{ message: "ok" }, BAD[0](1)] }, apiKey);
    expect(r.body.details.map((d: { path: string }) => d.path)).toEqual(["errors[1].message", "errors[1].level", "errors[1].user_id", "errors[1].trace_id"]);
  });
});
