import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { lockTables } from "../support/locks.js";
import { connect, createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * A lock held by something else (a long migration, a manual `LOCK TABLE`, a stuck transaction) must
 * not hold requests for as long as it lasts: each waits DB_TIMEOUT_MS at most and answers 503 with
 * Retry-After, and a write answered 503 is rolled back in PostgreSQL, so it lands neither now nor
 * when the lock goes. The lock is released only after the answers came, so an unbounded wait would
 * never answer here (no timing is measured).
 */
describe("requests while another transaction holds an ACCESS EXCLUSIVE lock", () => {
  let app: TestApp;
  let admin: Sql;
  let apiKey: string;
  let projectId: string;

  beforeAll(async () => {
    app = await startTestApp({ DB_TIMEOUT_MS: "1500" });
    admin = connect(app.databaseUrl);
    ({ apiKey, projectId } = await createProject(admin));
    // the key is looked up (and cached) once before the locks
    expect((await postJson(app, "/api/ingest", { message: "Before the lock" }, apiKey)).status).toBe(200);
  });

  afterAll(async () => {
    await admin?.end();
    await app?.close();
  });

  /** Runs `during` while a transaction holds `tables` in ACCESS EXCLUSIVE mode; releases after it. */
  async function whileLocked<T>(tables: string, during: () => Promise<T>): Promise<T> {
    const lock = await lockTables(admin, tables);
    try {
      return await during();
    } finally {
      await lock.release();
    }
  }

  const expect503 = (r: { status: number; headers: Headers; body: unknown }) => {
    expect(r.status).toBe(503);
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(r.body).toEqual({ error: "unavailable", message: expect.any(String) });
  };

  it("ingest answers 503 with Retry-After, and the request writes nothing, then or after the lock", async () => {
    const answers = await whileLocked("events, error_groups", () =>
      Promise.all([
        postJson(app, "/api/ingest", { message: "During the lock" }, apiKey),
        postJson(app, "/api/ingest", { errors: [{ message: "During the lock, batch" }, { message: "During the lock, batch 2" }] }, apiKey),
      ]),
    );
    for (const a of answers) expect503(a);
    // after the lock: the requests answered 503 were rolled back, not waiting to commit
    expect((await postJson(app, "/api/ingest", { message: "After the lock" }, apiKey)).status).toBe(200);
    const messages = await admin<{ message: string }[]>`select message from error_groups where project_id = ${projectId} order by message`;
    expect(messages.map((m) => m.message)).toEqual(["After the lock", "Before the lock"]);
    const [{ n }] = await admin<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(2);
  });

  it("a request queued behind a write held by the lock answers 503 too, and is not written later", async () => {
    // the lock is on the pending counters only: the first write gets past its group upsert, then waits
    const answers = await whileLocked("counter_deltas", () =>
      Promise.all(Array.from({ length: 5 }, (_, i) => postJson(app, "/api/ingest", { message: `Queued ${i}` }, apiKey))),
    );
    for (const a of answers) expect503(a);
    await new Promise((r) => setTimeout(r, 500));
    const [{ n }] = await admin<{ n: number }[]>`select count(*)::int as n from error_groups where project_id = ${projectId} and message like 'Queued%'`;
    expect(n).toBe(0);
  });

  it("API reads answer 503 with Retry-After instead of waiting for the lock", async () => {
    const answers = await whileLocked("events, error_groups, rollup_minute, rollup_hour, rollup_day", () =>
      Promise.all([
        getJson(app, "/api/v1/errors?grouped=true", apiKey),
        getJson(app, "/api/v1/errors", apiKey),
        getJson(app, "/api/v1/stats?timeframe=24h", apiKey),
      ]),
    );
    for (const a of answers) expect503(a);
    expect((await getJson(app, "/api/v1/errors?grouped=true", apiKey)).status).toBe(200);
  });

  it("an economy push answers 503 and writes nothing", async () => {
    const body = { players: [{ user_id: 77, profile: { RPCharacterOne: { Cash: 5 } } }] };
    const answer = await whileLocked("economy_snapshots", () => postJson(app, "/api/economy/ingest", body, apiKey));
    expect503(answer);
    const [{ n }] = await admin<{ n: number }[]>`select count(*)::int as n from economy_snapshots where project_id = ${projectId}`;
    expect(n).toBe(0);
    expect((await postJson(app, "/api/economy/ingest", body, apiKey)).status).toBe(200);
  });
});
