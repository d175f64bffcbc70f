import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { insertProject } from "../../db/projects.js";
import { EventWriter } from "../../app/ingest/writer.server.js";
import { connect, freshDatabaseUrl } from "../support/server.js";
import { eventRow } from "../support/event-row.js";

/**
 * One writer transaction in flight per shard, but not while it only waits for its COMMIT: the next
 * write starts then, with what queued meanwhile. Each commit here is held by a deferred trigger on
 * the pending counters' row (one per write) that waits for an advisory lock the test holds, so a
 * write that reached its COMMIT stays there until the test lets it go.
 */
describe("the ingest writer while a commit is in flight", () => {
  let databaseUrl: string;
  let admin: Sql;
  let holder: Sql;
  let sql: Sql;
  let projectId: string;
  const LOCK = 913_139;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    admin = connect(databaseUrl);
    await migrate(admin);
    await admin.unsafe(`
      create function test_hold_commit() returns trigger language plpgsql as $$
      begin perform pg_advisory_xact_lock_shared(${LOCK}); return null; end $$;
      create constraint trigger test_hold_commit after insert on counter_deltas
        deferrable initially deferred for each row execute function test_hold_commit();`);
    ({ id: projectId } = await insertProject(admin, "Commit overlap"));
    holder = createSql(databaseUrl, 1);
    sql = createSql(databaseUrl, 6);
  });

  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await holder?.end({ timeout: 1 });
    await admin?.end();
  });

  const row = (fingerprint: string) => eventRow(projectId, fingerprint);

  /** Backends of this database waiting in a commit for the test's lock. */
  const heldCommits = async () =>
    (
      await admin<{ n: number }[]>`select count(*)::int as n from pg_locks l join pg_stat_activity a using (pid)
        where l.locktype = 'advisory' and l.objid = ${LOCK} and not l.granted and a.datname = current_database()`
    )[0].n;

  async function until(what: () => Promise<boolean>, tries = 200) {
    for (let i = 0; i < tries; i++) {
      if (await what()) return true;
      await new Promise((r) => setTimeout(r, 25));
    }
    return false;
  }

  it("starts the next write while the previous one's COMMIT waits, and each commits exactly once", async () => {
    const writer = new EventWriter(sql, { throttle: { limit: 1000, windowSeconds: 60 }, shards: 1, concurrency: 1, maxEventsPerWrite: 5000, timeoutMs: 30_000 });
    await holder`select pg_advisory_lock(${LOCK})`;
    const first = writer.submit([row("overlap-a"), row("overlap-b")]);
    expect(await until(async () => (await heldCommits()) === 1)).toBe(true);
    // queued after the first write reached its COMMIT: before, it waited for that commit's answer
    const second = writer.submit([row("overlap-c"), row("overlap-e")]);
    const both = await until(async () => (await heldCommits()) === 2);
    // a third waits: one write committing per slot, and the second holds the slot while it commits
    const third = writer.submit([row("overlap-a")]);
    const third_ = await until(async () => (await heldCommits()) === 3, 20);
    await holder`select pg_advisory_unlock(${LOCK})`;
    const answers = await Promise.all([first, second, third]);
    expect(both).toBe(true);
    expect(third_).toBe(false);
    expect(answers).toEqual([{ stored: 2, throttled: 0 }, { stored: 2, throttled: 0 }, { stored: 1, throttled: 0 }]);
    expect(await writer.pendingEvents).toBe(0);
    const counts = await admin<{ fingerprint: string; count: number }[]>`
      select fingerprint, count::int from error_groups where project_id = ${projectId} order by fingerprint`;
    expect(counts).toEqual([
      { fingerprint: "overlap-a", count: 2 },
      { fingerprint: "overlap-b", count: 1 },
      { fingerprint: "overlap-c", count: 1 },
      { fingerprint: "overlap-e", count: 1 },
    ]);
    const [{ n }] = await admin<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(5);
  });
});
