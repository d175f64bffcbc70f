import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { healthState, MIN, sample, script, scriptBase, server, session } from "../support/health.js";

/** POST /api/health refuses what it cannot store with a 400 naming each field, and writes nothing then. */
let app: TestApp;
let apiKey: string;
let projectId: string;
let T: number;

const post = (body: unknown) => postJson(app, "/api/health", body, apiKey);

async function nothingWritten() {
  const s = await healthState(app.sql, projectId);
  expect(Object.values(s).every((rows) => rows.length === 0)).toBe(true);
  const [{ n }] = await app.sql<{ n: number }[]>`
    select (select count(*) from health_versions where project_id = ${projectId})
      + (select count(*) from economy_idempotency where project_id = ${projectId}) as n`;
  expect(Number(n)).toBe(0);
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());
beforeEach(async () => {
  ({ apiKey, projectId } = await createProject(app.sql, "Health Input"));
  T = scriptBase();
});

describe("POST /api/health: bad input", () => {
  it("names every bad field and writes nothing", async () => {
    const good = script(T)[0] as any;
    const body = {
      server: { ...good.server, job_id: "", started_at: "yesterday", close_reason: "Crashed", place_version: null },
      sessions: [session("ok", 1, T, null), { ...session("s", 2, T, T + MIN), exit_reason: "Teleported", user_id: "abc", errors: { server: -1, client: 1.5 } }],
      samples: [sample(T, 1, 100, 16), { ...sample(T + MIN, 1, 100, 16), players: -2, memory_mb: "big", heartbeat_ms: null, ping_ms: { p50: -1 } }],
    };
    const r = await post(body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    const paths = r.body.details.map((d: any) => d.path).sort();
    expect(paths).toEqual(
      [
        "server.job_id",
        "server.place_version",
        "server.started_at",
        "server.close_reason",
        "sessions[1].user_id",
        "sessions[1].exit_reason",
        "sessions[1].errors.server",
        "sessions[1].errors.client",
        "samples[1].players",
        "samples[1].memory_mb",
        "samples[1].ping_ms.p50",
      ].sort(),
    );
    await nothingWritten();
  });

  it("takes a sample whose memory and heartbeat the engine did not give (null): it counts its players, and no percentile reads it", async () => {
    const blind = { ...sample(T + MIN, 4, 0, 0), memory_mb: null, heartbeat_ms: null, physics_fps: null, memory_tags: null };
    const r = await post({ server: server("N", "7", T), samples: [sample(T, 4, 500, 20), blind] });
    expect(r.status).toBe(200);
    const s = await healthState(app.sql, projectId);
    expect(s.samples.map((x: any) => [x.players, x.memory_mb])).toEqual([
      [4, 500],
      [4, null],
    ]);
    const item = (await getJson(app, "/api/v1/releases?window=24h", apiKey)).body.data.find((d: any) => d.version === "7");
    expect(item.health.player_minutes).toBe(8);
    // the one measured sample is every percentile (a 1% bin around 500 MB and 20 ms)
    expect(item.health.memory_mb.p50).toBeGreaterThan(495);
    expect(item.health.memory_mb.p90).toBeLessThan(505);
    expect(item.health.heartbeat_ms.p90).toBeLessThan(20.3);
  });

  it("refuses too many sessions or samples, a missing server, and a body that is not an object", async () => {
    const many = { server: server("A", "1", T), samples: Array.from({ length: 121 }, (_, i) => sample(T + i * MIN, 1, 1, 1)) };
    const r = await post(many);
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: any) => d.path)).toEqual(["samples"]);
    const sessions = { server: server("A", "1", T), sessions: Array.from({ length: 1001 }, (_, i) => session(`s${i}`, i, T, null)) };
    expect((await post(sessions)).body.details.map((d: any) => d.path)).toEqual(["sessions"]);
    expect((await post({ samples: [] })).body.details.map((d: any) => d.path)).toEqual(["server"]);
    expect((await post([1])).status).toBe(400);
    expect((await post("{not json")).status).toBe(400);
    await nothingWritten();
  });

  it("ignores unknown fields, and an Idempotency-Key reused with another body is a 409", async () => {
    const body = { ...(script(T)[0] as any), from_a_newer_sdk: { x: 1 } };
    const send = (b: unknown, key: string) =>
      app.request("/api/health", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey, "idempotency-key": key },
        body: JSON.stringify(b),
      });
    expect((await send(body, "k1")).status).toBe(200);
    expect((await send(body, "k1")).status).toBe(200);
    const other = await send(script(T)[1], "k1");
    expect(other.status).toBe(409);
    expect((await healthState(app.sql, projectId)).servers).toHaveLength(1);
  });

  it("clamps a time far ahead to the receive time, and an end before its start to the start", async () => {
    const ahead = Date.now() + 60 * MIN;
    const r = await post({ server: server("F", "1", ahead), sessions: [session("F/1", 1, T + 10 * MIN, T)], samples: [] });
    expect(r.status).toBe(200);
    const s = await healthState(app.sql, projectId);
    expect(s.servers[0].started_at.getTime()).toBeLessThan(ahead - 50 * MIN);
    expect(s.sessions[0].ended_at.getTime()).toBe(s.sessions[0].started_at.getTime());
  });

  it("answers 400 on bad read parameters", async () => {
    expect((await getJson(app, "/api/v1/releases?window=1y", apiKey)).status).toBe(400);
    expect((await getJson(app, "/api/v1/servers?limit=0", apiKey)).status).toBe(400);
    expect((await getJson(app, "/api/v1/servers", "")).status).toBe(401);
  });
});
