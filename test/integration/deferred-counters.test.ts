import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { writeEvents, type EventRow } from "../../db/events.js";
import { mergeGroups, unmergeGroups } from "../../db/merge.js";
import { deleteGroup, setGroupStatus } from "../../db/groups.js";
import { insertProject } from "../../db/projects.js";
import { runRetention } from "../../jobs/retention.js";
import { ensurePartitions } from "../../jobs/partitions.js";
import {
  CounterDrainer, DRAIN_DELAY_MS, DRAIN_INTERVAL_MS, DRAIN_SPACING, DRAIN_TARGET_MS, STALENESS_BOUND_MS, SWEEP_MS, applyPendingOf, drainOnce, pendingDeltas,
} from "../../db/counter-deltas.js";
import { counterDrainSeconds } from "../../db/metrics.js";
import { createProject, freshDatabaseUrl, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { keptEqualsCells } from "../support/stats-windows.js";

/**
 * Deferred counters (db/counter-deltas.ts): users, environments, versions and rollups are applied
 * off the ingest transaction. Most cases run on a database with no service attached, so nothing
 * drains but what the test runs: a pending row stays pending until then, as after a crash.
 */

const THROTTLE = { limit: 1000, windowSeconds: 60 };
const MINUTE = 60_000;

function row(projectId: string, fingerprint: string, over: Partial<EventRow> = {}): EventRow {
  return {
    projectId, fingerprint, olderFingerprints: [], message: `boom ${fingerprint}`, level: "error", stackTrace: null,
    userId: null, playerName: null, traceId: null, jobId: null, placeId: null, gameVersion: null, environment: "production",
    context: null, tags: null, timestamp: Date.now(), count: 1, culprit: null, ...over,
  };
}

let sql: Sql;
beforeAll(async () => {
  sql = createSql(await freshDatabaseUrl(), 8);
  await migrate(sql);
  await ensurePartitions(sql);
});
afterAll(() => sql?.end());

const drainAll = async () => {
  while ((await drainOnce(sql)) !== 0);
};

/** What reads see of a group: its user count, and its occurrences per users, environments, versions and rollups. */
async function figures(projectId: string, fingerprint: string, db: Sql = sql) {
  const [g] = await db<{ id: string; count: number; user_count: number; status: string }[]>`
    select id, count::int, user_count::int, status from error_groups where project_id = ${projectId} and fingerprint = ${fingerprint}`;
  const [r] = await db<{ users: number; env: number; ver: number; minute: number; hour: number; day: number }[]>`
    select (select count(*)::int from group_users where project_id = ${projectId} and group_id = ${g.id}) as users,
      (select coalesce(sum(count), 0)::int from group_environments where project_id = ${projectId} and group_id = ${g.id}) as env,
      (select coalesce(sum(count), 0)::int from group_versions where project_id = ${projectId} and group_id = ${g.id}) as ver,
      (select coalesce(sum(count), 0)::int from rollup_minute where project_id = ${projectId} and group_id = ${g.id}) as minute,
      (select coalesce(sum(count), 0)::int from rollup_hour where project_id = ${projectId} and group_id = ${g.id}) as hour,
      (select coalesce(sum(count), 0)::int from rollup_day where project_id = ${projectId} and group_id = ${g.id}) as day`;
  return { count: g.count, user_count: g.user_count, status: g.status, ...r };
}

/** The occurrences per game version (migration 120), summed over hours. */
const versionHours = (projectId: string) =>
  sql<{ version: string; environment: string; level: string; n: number }[]>`
    select version, environment, level, sum(count)::int as n from rollup_version_hour where project_id = ${projectId}
    group by 1, 2, 3 order by 1, 2, 3`;

describe("the pending row", () => {
  it("holds a batch's counters until a drain applies them, once: a drain that rolls back applies nothing", async () => {
    const p = (await insertProject(sql, "pending")).id;
    await writeEvents(sql, [
      row(p, "a", { userId: "1", gameVersion: "1.0" }), row(p, "a", { userId: "2", environment: "staging" }), row(p, "a", { userId: "1" }),
    ], THROTTLE);
    // the group row and the events are written with the request; the rest waits
    expect(await figures(p, "a")).toEqual({ count: 3, user_count: 0, status: "open", users: 0, env: 0, ver: 0, minute: 0, hour: 0, day: 0 });
    expect((await pendingDeltas(sql)).rows).toBe(1);

    // a drain whose transaction fails leaves the row pending and the counters as they were
    await expect(sql.begin(async (tx) => {
      await applyPendingOf(tx, p);
      throw new Error("rolled back");
    })).rejects.toThrow("rolled back");
    expect((await pendingDeltas(sql)).rows).toBe(1);
    expect((await figures(p, "a")).hour).toBe(0);

    expect(await versionHours(p)).toEqual([]);

    await drainAll();
    const applied = { count: 3, user_count: 2, status: "open", users: 2, env: 3, ver: 1, minute: 3, hour: 3, day: 3 };
    expect(await figures(p, "a")).toEqual(applied);
    expect(await versionHours(p)).toEqual([{ version: "1.0", environment: "production", level: "error", n: 1 }]);
    // nothing left: another drain changes nothing
    expect(await drainOnce(sql)).toBe(0);
    expect(await figures(p, "a")).toEqual(applied);
    expect(await versionHours(p)).toEqual([{ version: "1.0", environment: "production", level: "error", n: 1 }]);
  });

  it("pending rows left by a process that stopped are applied by the next start", async () => {
    const p = (await insertProject(sql, "restart")).id;
    for (let b = 0; b < 5; b++) await writeEvents(sql, [row(p, "r", { userId: String(b % 3) })], THROTTLE);
    expect((await pendingDeltas(sql)).rows).toBe(5);
    const drainer = new CounterDrainer(sql).start();
    try {
      for (let i = 0; (await pendingDeltas(sql)).rows > 0; i++) {
        if (i > 400) throw new Error("the started drainer did not apply the pending rows");
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      await drainer.stop();
    }
    expect(await figures(p, "r")).toMatchObject({ count: 5, user_count: 3, hour: 5, minute: 5 });
  });
});

describe("the drainer's pace", () => {
  /** drains this process has run so far (the drain duration histogram's count) */
  const drains = async () => (await counterDrainSeconds.get()).values.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
  const until = async (what: string, ok: () => Promise<boolean>) => {
    for (let i = 0; !(await ok()); i++) {
      if (i > 600) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it("under load, one drain per interval takes every write meanwhile; after a quiet spell, a write is drained soon", async () => {
    const p = (await insertProject(sql, "pace")).id;
    const interval = 4000;
    // drains as long as a loaded database's: the interval alone sets the pace
    const drainer = new CounterDrainer(sql, { delayMs: 20, intervalMs: interval, spacing: 1e9, sweepMs: 600_000 }).start();
    try {
      // start() drains once at once (rows a stopped process left)
      const first = await drains();
      await until("the first drain", async () => (await drains()) > first);
      const before = await drains();
      const startedAt = performance.now();
      // writes in a burst, each kicking the drainer as the writer's afterCommit does
      for (let b = 0; b < 8; b++) {
        await writeEvents(sql, [row(p, `pace${b % 3}`, { userId: String(b) })], THROTTLE);
        drainer.kick();
        await new Promise((r) => setTimeout(r, 30));
      }
      await until("the burst applied", async () => (await pendingDeltas(sql)).rows === 0);
      // one drain took the whole burst, no sooner than the interval after the one before
      expect(await drains()).toBe(before + 1);
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(interval - 500);
      expect(await figures(p, "pace0")).toMatchObject({ count: 3, user_count: 3, minute: 3 });

      // a quiet spell past the interval: the next write is drained after the short delay, not a whole interval
      await new Promise((r) => setTimeout(r, interval));
      const quietAt = performance.now();
      await writeEvents(sql, [row(p, "pace-quiet")], THROTTLE);
      drainer.kick();
      await until("the quiet write applied", async () => (await pendingDeltas(sql)).rows === 0);
      expect(performance.now() - quietAt).toBeLessThan(interval);
    } finally {
      await drainer.stop();
    }
  }, 60_000);

  it("drains of a few milliseconds keep their short delay: the pace follows how long the last drain took", async () => {
    const p = (await insertProject(sql, "pace-light")).id;
    const interval = 4000;
    const drainer = new CounterDrainer(sql, { delayMs: 20, intervalMs: interval, sweepMs: 600_000 }).start();
    try {
      const first = await drains();
      await until("the first drain", async () => (await drains()) > first);
      for (let b = 0; b < 3; b++) {
        const at = performance.now();
        await writeEvents(sql, [row(p, "light", { userId: String(b) })], THROTTLE);
        drainer.kick();
        await until("the write applied", async () => (await pendingDeltas(sql)).rows === 0);
        // the last drain (one small batch) took milliseconds: this one does not wait for the interval
        expect(performance.now() - at).toBeLessThan(interval / 2);
      }
      expect(await figures(p, "light")).toMatchObject({ count: 3, user_count: 3 });
    } finally {
      await drainer.stop();
    }
  }, 60_000);
});

describe("exact once caught up", () => {
  it("with concurrent writers and a drainer per instance, the counters equal the events written", async () => {
    const p = (await insertProject(sql, "concurrent")).id;
    // three instances' drainers on one database: one drain at a time, none applies a row twice
    const drainers = [0, 1, 2].map(() => new CounterDrainer(sql, { delayMs: 5, sweepMs: 50, batches: 7 }).start());
    const writers = 6;
    const batches = 15;
    try {
      await Promise.all(Array.from({ length: writers }, async (_, w) => {
        for (let b = 0; b < batches; b++) {
          await writeEvents(sql, [
            row(p, `fp${b % 4}`, { userId: String((w * 7 + b) % 23), environment: b % 2 ? "staging" : "production", gameVersion: `v${w % 3}` }),
            row(p, `fp${(b + 1) % 4}`, {
              userId: String(b % 5), count: 2, timestamp: Date.now() - (b % 3) * 61 * MINUTE, gameVersion: `v${b % 2}`, level: b % 3 === 0 ? "warn" : "error",
            }),
          ], THROTTLE);
        }
      }));
      for (const d of drainers) await d.drainNow();
    } finally {
      await Promise.all(drainers.map((d) => d.stop()));
    }
    expect((await pendingDeltas(sql)).rows).toBe(0);
    // the truth, from the stored events (nothing is throttled at this limit)
    const truth = await sql<{ fingerprint: string; n: number; users: number; versions: number }[]>`
      select g.fingerprint, sum(e.count)::int as n, count(distinct e.user_id)::int as users,
        coalesce(sum(e.count) filter (where e.game_version is not null), 0)::int as versions
      from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
      where e.project_id = ${p} group by 1 order by 1`;
    expect(truth).toHaveLength(4);
    for (const t of truth) {
      const f = await figures(p, t.fingerprint);
      expect({ fp: t.fingerprint, ...f }).toEqual({
        fp: t.fingerprint, count: t.n, user_count: t.users, status: "open", users: t.users, env: t.n, ver: t.versions, minute: t.n, hour: t.n, day: t.n,
      });
    }
    // occurrences per version, environment, hour and level: the stored events' (none throttled here)
    const byVersionHour = await sql<{ version: string; environment: string; level: string; bucket: Date; n: number }[]>`
      select game_version as version, environment, level, date_trunc('hour', "timestamp", 'UTC') as bucket, sum(count)::int as n
      from events where project_id = ${p} and game_version is not null group by 1, 2, 3, 4 order by 1, 2, 3, 4`;
    expect(byVersionHour.length).toBeGreaterThan(0);
    expect(await sql`select version, environment, level, bucket, count::int as n from rollup_version_hour where project_id = ${p} order by 1, 2, 3, 4`)
      .toEqual(byVersionHour);
    // the project's hour cells (migration 137: the overview's charts) hold every event written
    const byHour = await sql`
      select date_trunc('hour', "timestamp", 'UTC') as bucket, level, sum(count)::int as n from events where project_id = ${p} group by 1, 2 order by 1, 2`;
    expect(byHour.length).toBeGreaterThan(0);
    expect(await sql`select bucket, level, count::int as n from rollup_project_hour where project_id = ${p} and count <> 0 order by 1, 2`).toEqual(byHour);
    const [{ players }] = await sql<{ players: number }[]>`select count(*)::int as players from project_users where project_id = ${p}`;
    const [{ distinct }] = await sql<{ distinct: number }[]>`select count(distinct user_id)::int as distinct from events where project_id = ${p}`;
    expect(players).toBe(distinct);
  });
});

describe("what re-keys counters applies the pending rows first", () => {
  it("merge and unmerge move exactly what was written before them, pending or not", async () => {
    const p = (await insertProject(sql, "merge")).id;
    await writeEvents(sql, [row(p, "m1", { userId: "1" }), row(p, "m1", { userId: "2" }), row(p, "m2", { userId: "2" }), row(p, "m2", { userId: "3" })], THROTTLE);
    const ids = Object.fromEntries((await sql<{ id: string; fingerprint: string }[]>`
      select id, fingerprint from error_groups where project_id = ${p}`).map((g) => [g.fingerprint, g.id]));
    // pending, not applied: the merge applies them for the groups as they were
    expect((await pendingDeltas(sql)).rows).toBe(1);
    await mergeGroups(sql, p, ids.m1, [ids.m2]);
    expect((await pendingDeltas(sql)).rows).toBe(0);
    const target = async () => (await sql<{ count: number; user_count: number; hour: number }[]>`
      select count::int, user_count::int,
        (select coalesce(sum(count), 0)::int from rollup_hour r where r.project_id = g.project_id and r.group_id = g.id) as hour
      from error_groups g where project_id = ${p} and id = ${ids.m1}`)[0];
    expect(await target()).toEqual({ count: 4, user_count: 3, hour: 4 });

    // written into the merged issue, still pending at the unmerge
    await writeEvents(sql, [row(p, "m2", { userId: "4" }), row(p, "m2", { userId: "1" })], THROTTLE);
    await unmergeGroups(sql, p, ids.m1, [ids.m2]);
    expect((await pendingDeltas(sql)).rows).toBe(0);
    expect(await figures(p, "m1")).toMatchObject({ count: 2, user_count: 2, users: 2, hour: 2, minute: 2 });
    expect(await figures(p, "m2")).toMatchObject({ count: 4, user_count: 4, users: 4, hour: 4, minute: 4 });
  });

  it("the drain adds to the stats windows itself, and a merge right after it still goes through the triggers", async () => {
    const p = (await insertProject(sql, "windows")).id;
    const now = Date.now();
    // occurrences now and at ages around each window's start, and one older than all of them
    const ages = [0, 59 * MINUTE, 61 * MINUTE, 23 * 60 * MINUTE, 25 * 60 * MINUTE, 6 * 1440 * MINUTE, 8 * 1440 * MINUTE, 29 * 1440 * MINUTE, 31 * 1440 * MINUTE];
    await writeEvents(sql, ages.flatMap((age, i) => [
      row(p, "w1", { timestamp: now - age, level: (["error", "warn", "info"] as const)[i % 3], count: 1 + i }),
      row(p, "w2", { timestamp: now - age, count: 2 }),
    ]), THROTTLE);
    await drainAll();
    // every window holds what its cells hold, for both groups
    expect(await keptEqualsCells(sql, p)).toBe(8);
    const [{ h1, d30 }] = await sql<{ h1: number; d30: number }[]>`
      select sum(h1_error + h1_warn + h1_info)::int as h1, sum(d30_error + d30_warn + d30_info)::int as d30 from stats_window_counts where project_id = ${p}`;
    expect({ h1, d30 }).toEqual({ h1: 1 + 2 + 2 * 2, d30: [1, 2, 3, 4, 5, 6, 7, 8].reduce((a, b) => a + b, 0) + 8 * 2 });

    // pending at the merge: the merge drains them in its own transaction, then re-keys the cells,
    // which the triggers must still see
    await writeEvents(sql, [row(p, "w2", { timestamp: now - 2 * MINUTE }), row(p, "w1", { timestamp: now - 3 * 1440 * MINUTE })], THROTTLE);
    const ids = Object.fromEntries((await sql<{ id: string; fingerprint: string }[]>`
      select id, fingerprint from error_groups where project_id = ${p}`).map((g) => [g.fingerprint, g.id]));
    await mergeGroups(sql, p, ids.w1, [ids.w2]);
    expect(await keptEqualsCells(sql, p)).toBe(4);
    await unmergeGroups(sql, p, ids.w1, [ids.w2]);
    expect(await keptEqualsCells(sql, p)).toBe(8);
  });

  it("a group's delete leaves nothing of it behind, pending rows included", async () => {
    const p = (await insertProject(sql, "delete")).id;
    await writeEvents(sql, [row(p, "d", { userId: "1", gameVersion: "2" })], THROTTLE);
    const [{ id }] = await sql<{ id: string }[]>`select id from error_groups where project_id = ${p}`;
    expect(await deleteGroup(sql, p, id)).toBe(true);
    await drainAll();
    const [left] = await sql<{ n: number }[]>`
      select (select count(*) from group_users where project_id = ${p})::int + (select count(*) from group_versions where project_id = ${p})::int
        + (select count(*) from group_environments where project_id = ${p})::int + (select count(*) from rollup_hour where project_id = ${p})::int
        + (select count(*) from rollup_minute where project_id = ${p})::int + (select count(*) from rollup_day where project_id = ${p})::int as n`;
    expect(left.n).toBe(0);
  });

  it("a snooze until N more players counts only players after it, and reopens the group when the N-th is applied", async () => {
    const p = (await insertProject(sql, "snooze")).id;
    await writeEvents(sql, [row(p, "s", { userId: "1" }), row(p, "s", { userId: "2" })], THROTTLE);
    const [{ id }] = await sql<{ id: string }[]>`select id from error_groups where project_id = ${p}`;
    // the two players of the pending row were seen before the snooze: they do not count toward it
    await setGroupStatus(sql, p, [id], "ignored", { users: 2 });
    await writeEvents(sql, [row(p, "s", { userId: "1" }), row(p, "s", { userId: "3" })], THROTTLE);
    await drainAll();
    expect(await figures(p, "s")).toMatchObject({ user_count: 3, status: "ignored" });
    await writeEvents(sql, [row(p, "s", { userId: "4" })], THROTTLE);
    // counted, and reopened, when applied
    expect((await figures(p, "s")).status).toBe("ignored");
    await drainAll();
    expect(await figures(p, "s")).toMatchObject({ user_count: 4, status: "open" });
  });

  it("retention before or after a drain ends in the same hour and day rollups", async () => {
    const p = (await insertProject(sql, "retention")).id;
    const old = Date.now() - 3 * 86_400_000;
    await writeEvents(sql, [row(p, "o", { timestamp: old, count: 2 }), row(p, "o", { timestamp: Date.now() - 5 * MINUTE })], THROTTLE);
    await runRetention(sql, 1);
    await drainAll();
    expect(await figures(p, "o")).toMatchObject({ count: 3, hour: 3, day: 3 });
    // the old minute cell the drain wrote after the run goes with the next one; recent cells stay
    await runRetention(sql, 1);
    expect((await figures(p, "o")).minute).toBe(1);
    expect(await figures(p, "o")).toMatchObject({ hour: 3, day: 3 });
  });
});

describe("a drain's plan on tables without statistics", () => {
  // A new database (or one with autovacuum off) has no statistics: the drain's statement, prepared
  // while its tables were nearly empty, kept a plan that found each group row by project alone. Once
  // one project held thousands of groups, a drain of a large batch read every group of the project
  // for each of its groups: in the bench's burst of new issues each drain ran past the statement
  // timeout, rolled back and was tried again, so the counters stopped being applied.
  const HOT = ["error_groups", "group_users", "project_users", "group_environments", "group_versions",
    "rollup_minute", "rollup_hour", "rollup_day", "stats_window_counts", "counter_deltas"];
  let one: Sql;
  beforeAll(async () => {
    one = createSql(await freshDatabaseUrl(), 1);
    await migrate(one);
    await ensurePartitions(one);
    // statistics as on a database whose autovacuum has not run yet (a partitioned table: its partitions)
    const tables = await one<{ name: string }[]>`
      select c.oid::regclass::text as name from pg_class c
      where c.relkind = 'r' and (c.relname = any(${HOT}) or exists (
        select 1 from pg_inherits i join pg_class parent on parent.oid = i.inhparent where i.inhrelid = c.oid and parent.relname = any(${HOT})))`;
    for (const { name } of tables) await one.unsafe(`alter table ${name} set (autovacuum_enabled = false)`);
  });
  afterAll(() => one?.end());

  it("finds each group row by its key: rows read stay in proportion to the groups drained", async () => {
    const p = (await insertProject(one, "plan")).id;
    // the statement is planned and cached on this connection while the tables are small
    for (let i = 0; i < 8; i++) {
      await writeEvents(one, [row(p, `warm${i}a`, { userId: String(i) }), row(p, `warm${i}b`, { userId: String(i + 1) })], THROTTLE);
      await one.begin((tx) => applyPendingOf(tx, p));
    }
    const GROUPS = 3000;
    for (let k = 0; k < 3; k++) {
      await writeEvents(one, Array.from({ length: GROUPS / 3 }, (_, i) => row(p, `burst${k}-${i}`, { userId: String(i % 50) })), THROTTLE);
    }
    const read = await one.begin(async (tx) => {
      await applyPendingOf(tx, p);
      const [r] = await tx<{ fetched: number }[]>`
        select (coalesce(idx_tup_fetch, 0) + coalesce(seq_tup_read, 0))::int as fetched from pg_stat_xact_user_tables where relname = 'error_groups'`;
      return r.fetched;
    });
    expect(await figures(p, "burst2-7", one)).toMatchObject({ count: 1, user_count: 1, hour: 1, minute: 1 });
    // one look-up per group drained (and a scan of the project's rows at most), not one per pair of groups
    expect(read).toBeLessThan(10 * GROUPS);
  }, 120_000);
});

describe("the service", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it("drains within its bound: sooner than the bound after a write, and on a sweep shorter than it", () => {
    expect(DRAIN_DELAY_MS).toBeLessThan(STALENESS_BOUND_MS / 4);
    expect(SWEEP_MS).toBeLessThan(STALENESS_BOUND_MS);
    // under load: an event waits at most one interval for its drain, which should take at most the target
    expect(DRAIN_INTERVAL_MS + DRAIN_TARGET_MS).toBeLessThan(STALENESS_BOUND_MS);
    expect(DRAIN_SPACING).toBeGreaterThan(1);
  });

  it("applies a write's counters by itself, with no read asking for them", async () => {
    const { apiKey } = await createProject(app.sql, "service");
    const r = await postJson(app, "/api/ingest", { errors: [{ message: "Counted later", user_id: 5, game_version: "9" }, { message: "Counted later", user_id: 6 }] }, apiKey);
    expect(r.status).toBe(200);
    // nothing here drains: the service does, shortly after the write
    await countersApplied(app.sql);
    const list = await getJson(app, "/api/v1/errors?grouped=true", apiKey);
    expect(list.body.data[0]).toMatchObject({ count: 2, user_count: 2 });
    const stats = await getJson(app, "/api/v1/stats?timeframe=1h", apiKey);
    expect(stats.body.total_errors).toBe(2);
  });
});
