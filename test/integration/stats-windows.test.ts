import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectSeries } from "../../db/dashboard.js";
import { deleteGroup, setGroupStatus } from "../../db/groups.js";
import { deleteProject } from "../../db/projects.js";
import { mergeGroups, unmergeGroups } from "../../db/merge.js";
import { moveStatsWindows, windowStats, type StatsRead, type Timeframe } from "../../db/stats.js";
import { runRetention } from "../../jobs/retention.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { DAY, HOUR, MINUTE, ingest, iso } from "../support/query-fixtures.js";
import { TABLE, keptEqualsCells, projectHoursEqualCells } from "../support/stats-windows.js";

/**
 * The stats windows' kept per-group sums (stats_window_sums, db/migrations/103_stats_windows.sql)
 * must always equal the rollup cells from the window's `since` on, whoever writes or removes cells:
 * ingest, late events, merges, unmerges, group deletes, retention; and a window whose `since` fell
 * behind (no write since) must still read exactly, and move forward on the next write or by the job.
 * Rollups are written by the deferred counters (db/counter-deltas.ts): `ingest` waits for them.
 */

let app: TestApp;
const TIMEFRAMES: Timeframe[] = ["1h", "24h", "7d", "30d"];
const COLUMN: Record<Timeframe, string> = { "1h": "h1", "24h": "h24", "7d": "d7", "30d": "d30" };
const SPAN: Record<Timeframe, number> = { "1h": HOUR, "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY };

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const expectKeptEqualsCells = (projectId: string) => keptEqualsCells(app.sql, projectId);

/** The window's figures summed from the finest cells alone, as before the kept sums. */
async function fromCells(projectId: string, tf: Timeframe, now: number) {
  const unit = tf === "1h" || tf === "24h" ? MINUTE : HOUR;
  const from = new Date(Math.floor((now - SPAN[tf]) / unit) * unit);
  const cells = app.sql`select group_id, level, count from ${app.sql(TABLE[tf])} where project_id = ${projectId} and bucket >= ${from}`;
  const levels = await app.sql<{ level: string; n: number }[]>`select level, sum(count)::int as n from (${cells}) c group by level`;
  const top = await app.sql`
    select g.id, g.message, s.count::int as count, g.last_seen, g.level, g.status
    from (select group_id, sum(count) as count from (${cells}) c group by 1 having sum(count) > 0) s
    join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
    order by s.count desc, g.last_seen desc, g.id desc limit 10`;
  // open groups that occurred in the window: its exact start, from each group's own last sighting
  const [{ open }] = await app.sql<{ open: number }[]>`
    select count(*)::int as open from error_groups g
    where g.project_id = ${projectId} and g.status = 'open' and g.merged_into is null and g.last_seen >= ${new Date(now - SPAN[tf])}
      and g.id in (select group_id from (${cells}) c group by 1 having sum(count) > 0)`;
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  for (const l of levels) by_level[l.level] = l.n;
  return { by_level, open_groups: open, top_errors: top.map((t) => ({ ...t })) };
}

/** The four ways a window is read: its groups from its kept sums or its cells, and their ranking from all their rows or a few. */
const READS: StatsRead[] = [
  { from: "kept", groups: "many" },
  { from: "cells", groups: "many" },
  { from: "kept", groups: "few" },
  { from: "cells", groups: "few" },
];

/** Every window read every way, and as windowStats chooses (chooseRead). */
async function expectReadsExact(projectId: string) {
  for (const tf of TIMEFRAMES) {
    for (const read of [...READS, undefined]) {
      const now = Date.now();
      const got = await windowStats(app.sql, projectId, tf, new Date(now), read);
      expect({ tf, read, by_level: got.by_level, open_groups: got.open_groups, top_errors: got.top_errors }).toEqual({ tf, read, ...(await fromCells(projectId, tf, now)) });
    }
  }
}

/** A word for `i` (digits would be read as a varying number and group the messages as one issue). */
const letters = (i: number) => "abcdefghijklmnopqrstuvwxyz"[Math.floor(i / 26) % 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26] + "x";

const groupOf = async (projectId: string, message: string) =>
  (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message} and merged_into is null`)[0].id;

describe("kept stats windows", () => {
  it("follow ingest and late events at every age, merges, unmerges and deletes", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "kept-windows");
    const now = Date.now();
    const levels = ["error", "warn", "info"];
    const events = [];
    // 14 groups; occurrences now, and late ones at ages inside and outside each window
    for (let i = 0; i < 120; i++) {
      const age = [0, 30 * MINUTE, 59 * MINUTE, 61 * MINUTE, 23 * HOUR, 25 * HOUR, 6 * DAY, 8 * DAY, 29 * DAY, 31 * DAY][i % 10];
      events.push({ message: `Kept window ${String.fromCharCode(97 + (i % 14))}`, level: levels[i % 3], count: 1 + (i % 3), timestamp: iso(now - age - (i % 7) * 1000) });
    }
    await ingest(app, apiKey, events);
    expect(await expectKeptEqualsCells(projectId)).toBeGreaterThan(14);
    await expectReadsExact(projectId);

    const a = await groupOf(projectId, "Kept window a");
    const b = await groupOf(projectId, "Kept window b");
    const c = await groupOf(projectId, "Kept window c");
    await mergeGroups(app.sql, projectId, a, [b, c]);
    // events of a merged fingerprint land in the target
    await ingest(app, apiKey, [{ message: "Kept window b", level: "warn", timestamp: iso(now - 20 * MINUTE) }]);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
    const [{ n }] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from stats_window_counts where project_id = ${projectId} and group_id in (${b}, ${c})`;
    expect(n).toBe(0);

    await unmergeGroups(app.sql, projectId, a, [b]);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);

    expect(await deleteGroup(app.sql, projectId, await groupOf(projectId, "Kept window d"))).toBe(true);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);

    // retention removes raw events only; every window still reads the same
    await runRetention(app.sql, 7);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
  });

  it("rank many groups tied at the tenth count by last sighting, and count open groups, as a count over the cells does", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "kept-windows-ties");
    const now = Date.now();
    // 320 groups seen once each (more than are read whole to break a tie), a minute to an hour and
    // to days apart, and five seen three times: five above the tie, the other five of the ten tied
    for (let batch = 0; batch < 4; batch++) {
      await ingest(app, apiKey, Array.from({ length: 80 }, (_, j) => {
        const i = batch * 80 + j;
        return { message: `Tied ${letters(i)}`, level: ["error", "warn", "info"][i % 3], timestamp: iso(now - (i % 40) * 7 * MINUTE - Math.floor(i / 40) * 5 * HOUR - (i % 13) * 1000) };
      }));
    }
    await ingest(app, apiKey, Array.from({ length: 5 }, (_, i) => ({ message: `Above ${letters(i)}`, count: 3, timestamp: iso(now - i * 3 * HOUR) })));
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
    const [{ tied }] = await app.sql<{ tied: number }[]>`select count(*)::int as tied from stats_window_sums where project_id = ${projectId} and timeframe = '30d' and count = 1`;
    expect(tied).toBeGreaterThan(256);

    // the latest tied groups change status or go: the ranking and open_groups follow
    const latest = await app.sql<{ id: string }[]>`
      select id from error_groups where project_id = ${projectId} and message like 'Tied %' order by last_seen desc, id desc limit 6`;
    await setGroupStatus(app.sql, projectId, [latest[0].id], "resolved");
    await setGroupStatus(app.sql, projectId, [latest[1].id], "ignored");
    await mergeGroups(app.sql, projectId, latest[2].id, [latest[3].id]);
    expect(await deleteGroup(app.sql, projectId, latest[4].id)).toBe(true);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
    const got = await windowStats(app.sql, projectId, "30d");
    expect(got.open_groups).toBe(325 - 4);
    expect(got.top_errors.map((t) => t.count)).toEqual([3, 3, 3, 3, 3, 2, 1, 1, 1, 1]);

    await unmergeGroups(app.sql, projectId, latest[2].id, [latest[3].id]);
    await ingest(app, apiKey, [{ message: `Tied ${letters(300)}`, timestamp: iso(now - 2 * DAY) }]);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
  });

  it("remove a project's hours that a group's delete leaves at zero, and keep the rest equal to the cells", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "project-hours-zero");
    const now = Date.now();
    await ingest(app, apiKey, [
      { message: "Zero hours alone", level: "info", count: 4, timestamp: iso(now - 3 * DAY) },
      { message: "Zero hours alone", level: "info", timestamp: iso(now - 2 * HOUR) },
      { message: "Zero hours shared", level: "info", timestamp: iso(now - 2 * HOUR) },
    ]);
    const rows = () => app.sql<{ bucket: Date; level: string; count: number }[]>`
      select bucket, level, count::int from rollup_project_hour where project_id = ${projectId} order by bucket`;
    expect((await rows()).map((r) => r.count)).toEqual([4, 2]);
    expect(await deleteGroup(app.sql, projectId, await groupOf(projectId, "Zero hours alone"))).toBe(true);
    // the hour it had alone is gone, not left at zero; the shared one is lowered
    expect((await rows()).map((r) => r.count)).toEqual([1]);
    await projectHoursEqualCells(app.sql, projectId);
  });

  it("draw the overview's charts from the project's hour cells, equal to the groups' cells, until the project's delete", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "project-hours");
    const now = Date.now();
    const levels = ["error", "warn", "info"];
    await ingest(app, apiKey, Array.from({ length: 90 }, (_, i) => ({
      message: `Project hour ${"abcdef"[i % 6]}`, level: levels[i % 3], count: 1 + (i % 4),
      timestamp: iso(now - [0, 2 * HOUR, 20 * HOUR, 3 * DAY, 6 * DAY + 5 * HOUR, 12 * DAY, 29 * DAY, 31 * DAY][i % 8] - (i % 5) * MINUTE),
    })));
    // what each chart drew before: the groups' hour cells, the 30 days from their day cells
    const before = async (tf: "24h" | "7d" | "30d") => {
      const step = { "24h": "1 hour", "7d": "6 hours", "30d": "1 day" }[tf];
      const points = { "24h": 24, "7d": 28, "30d": 30 }[tf];
      const table = tf === "30d" ? "rollup_day" : "rollup_hour";
      const rows = await app.sql<{ bucket: Date; level: string; count: number }[]>`
        with b as (select date_bin(${step}::interval, now(), timestamptz 'epoch') as last)
        select date_bin(${step}::interval, r.bucket, timestamptz 'epoch') as bucket, r.level, sum(r.count)::int as count
        from ${app.sql(table)} r, b where r.project_id = ${projectId}
          and r.bucket >= b.last - ${step}::interval * ${points - 1} and r.bucket < b.last + ${step}::interval
        group by 1, 2`;
      const sums = { error: 0, warn: 0, info: 0 } as Record<string, number>;
      for (const r of rows) sums[r.level] += r.count;
      return { points, sums, cells: rows.length };
    };
    for (const tf of ["24h", "7d", "30d"] as const) {
      const series = await projectSeries(app.sql, projectId, tf);
      const want = await before(tf);
      expect(want.cells).toBeGreaterThan(0);
      const sums = { error: 0, warn: 0, info: 0 } as Record<string, number>;
      for (const p of series) for (const l of levels) sums[l] += p[l as "error"];
      expect({ tf, points: series.length, sums }).toEqual({ tf, points: want.points, sums: want.sums });
    }
    expect(await projectHoursEqualCells(app.sql, projectId)).toBeGreaterThan(8);
    expect(await deleteGroup(app.sql, projectId, await groupOf(projectId, "Project hour b"))).toBe(true);
    await projectHoursEqualCells(app.sql, projectId);
    expect(await deleteProject(app.sql, projectId)).toBe(true);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from rollup_project_hour where project_id = ${projectId}`;
    expect(n).toBe(0);
  });

  /** As if two hours had passed without a write: each window's since is two hours older and its sums hold those hours' cells. */
  async function fallBehind(projectId: string) {
    for (const tf of TIMEFRAMES) {
      const [{ since }] = await app.sql<{ since: Date }[]>`
        update stats_window_marks set since = since - interval '2 hours' where project_id = ${projectId} and timeframe = ${tf} returning since`;
      const col = COLUMN[tf];
      await app.sql`
        insert into stats_window_counts as s (project_id, group_id, ${app.sql(`${col}_error`)}, ${app.sql(`${col}_warn`)}, ${app.sql(`${col}_info`)})
        select project_id, group_id, coalesce(sum(count) filter (where level = 'error'), 0),
          coalesce(sum(count) filter (where level = 'warn'), 0), coalesce(sum(count) filter (where level = 'info'), 0)
        from ${app.sql(TABLE[tf])} where project_id = ${projectId} and bucket >= ${since} and bucket < ${new Date(since.getTime() + 2 * HOUR)}
        group by 1, 2
        on conflict (project_id, group_id) do update set
          ${app.sql(`${col}_error`)} = s.${app.sql(`${col}_error`)} + excluded.${app.sql(`${col}_error`)},
          ${app.sql(`${col}_warn`)} = s.${app.sql(`${col}_warn`)} + excluded.${app.sql(`${col}_warn`)},
          ${app.sql(`${col}_info`)} = s.${app.sql(`${col}_info`)} + excluded.${app.sql(`${col}_info`)}`;
    }
    await expectKeptEqualsCells(projectId);
  }

  const allCurrent = async (projectId: string) =>
    (await app.sql<{ current: boolean }[]>`
      select since = stats_window_target(timeframe) as current from stats_window_marks where project_id = ${projectId}`).every((m) => m.current);

  const BEHIND = (now: number) => [
    { message: "Behind a", timestamp: iso(now - 50 * MINUTE) },
    { message: "Behind a", timestamp: iso(now - 70 * MINUTE) },
    { message: "Behind b", level: "warn", timestamp: iso(now - 5 * MINUTE) },
    { message: "Behind b", level: "warn", timestamp: iso(now - 2 * HOUR) },
  ];

  it("read exactly while behind, and move forward on the next write", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "kept-windows-behind");
    await ingest(app, apiKey, BEHIND(Date.now()));
    await fallBehind(projectId);
    // the read subtracts what its window no longer holds
    await expectReadsExact(projectId);
    expect((await windowStats(app.sql, projectId, "1h")).total_errors).toBe(2);

    await ingest(app, apiKey, [{ message: "Behind c", level: "info" }]);

    expect(await allCurrent(projectId)).toBe(true);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
    expect((await windowStats(app.sql, projectId, "1h")).total_errors).toBe(3);
  });

  it("move forward without writes by the minute's job", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "kept-windows-idle");
    await ingest(app, apiKey, BEHIND(Date.now()));
    await fallBehind(projectId);
    expect(await allCurrent(projectId)).toBe(false);
    await moveStatsWindows(app.sql);
    expect(await allCurrent(projectId)).toBe(true);
    await expectKeptEqualsCells(projectId);
    await expectReadsExact(projectId);
    expect((await windowStats(app.sql, projectId, "1h")).total_errors).toBe(2);
  });

  it("read from the cells for a project without kept windows", async () => {
    const { projectId, apiKey } = await createProject(app.sql, "kept-windows-none");
    await ingest(app, apiKey, [{ message: "Unkept a" }, { message: "Unkept a" }, { message: "Unkept b", level: "warn" }]);
    await app.sql`delete from stats_window_marks where project_id = ${projectId}`;
    await expectReadsExact(projectId);
    expect((await windowStats(app.sql, projectId, "24h")).total_errors).toBe(3);
  });
});
