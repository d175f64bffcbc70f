import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdDrain } from "../support/locks.js";
import { COUNTERS_BEHIND_S } from "../../app/routes/api.ready.js";
import { createProject, postJson, startTestApp, type TestApp } from "../support/server.js";
import { sleep } from "../support/wait.js";

/**
 * GET /api/ready (docs/operations.md#liveness-and-readiness): 200 while the database answers, with
 * whether the deferred counters are behind their bound and whether a newer release migrated the
 * database; neither of those makes it 503 (the database's stall does: test/integration/faults.test.ts).
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const ready = async () => {
  const r = await app.request("/api/ready");
  return { status: r.status, body: (await r.json()) as any };
};

describe("readiness", () => {
  it("says ok with nothing pending and the schema this release knows", async () => {
    expect(await ready()).toEqual({
      status: 200,
      body: { status: "ok", database: "ok", counters: { status: "ok", pending: 0, oldest_s: 0 }, schema: { status: "current" } },
    });
  });

  it("says the counters are behind while pending rows are older than the bound, and ok once they are applied", async () => {
    const { apiKey } = await createProject(app.sql, "Readiness");
    // no drain runs while this holds its lock
    const drain = await holdDrain(app.sql);
    try {
      const r = await postJson(app, "/api/ingest", { errors: [{ message: "ready check", user_id: 5 }] }, apiKey);
      expect(r.status).toBeLessThan(300);
      await app.sql`update counter_deltas set created_at = now() - make_interval(secs => ${COUNTERS_BEHIND_S + 50})`;
      const behind = await ready();
      expect(behind.status).toBe(200);
      expect(behind.body.counters.status).toBe("behind");
      expect(behind.body.counters.pending).toBeGreaterThanOrEqual(1);
      expect(behind.body.counters.oldest_s).toBeGreaterThanOrEqual(COUNTERS_BEHIND_S + 50);
    } finally {
      await drain.release();
    }
    let after = await ready();
    for (let i = 0; i < 200 && after.body.counters.pending > 0; i++) {
      await sleep(50);
      after = await ready();
    }
    expect(after.body.counters).toEqual({ status: "ok", pending: 0, oldest_s: 0 });
  });

  it("names the migrations a newer release applied, and stays ready", async () => {
    await app.sql`insert into schema_migrations (name) values ('999_from_a_newer_release.sql')`;
    try {
      expect(await ready()).toMatchObject({ status: 200, body: { status: "ok", schema: { status: "newer", unknown_migrations: ["999_from_a_newer_release.sql"] } } });
    } finally {
      await app.sql`delete from schema_migrations where name = '999_from_a_newer_release.sql'`;
    }
  });
});
