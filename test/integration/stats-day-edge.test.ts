import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectSeries } from "../../db/dashboard.js";
import { windowStats, type Timeframe } from "../../db/stats.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { DAY, HOUR, MINUTE, floorHour, ingest, iso } from "../support/query-fixtures.js";
import { countersApplied } from "../support/counters.js";

/**
 * Stats windows read the coarsest rollup that fits and correct the bucket the window starts in with
 * finer ones, added after the start or subtracted before it (db/stats.ts `cover`). Whatever minute
 * of the hour and hour of the day a window starts at, the figures must equal those summed from the
 * finest buckets alone: hour buckets for 7d/30d, minute buckets up to the first whole hour and hour
 * buckets after it for 1h/24h (what those windows read before day rollups existed).
 *
 * Fixture: 13 groups, one occurrence every 97 minutes over the last 33 days and one every 7 minutes
 * over the last 27 hours (counts 1..4, three levels), so every hour of the day and many minutes of
 * the hour hold occurrences of several groups, and the top ten is a real cut; one more group last
 * seen 7 days ago, at a window's rounded start, and one resolved group keep open_groups apart from
 * the groups the window's figures count.
 */

let app: TestApp;
let projectId: string;
const now = Date.now();
const LEVELS = ["error", "warn", "info"];
const SPAN: Record<Timeframe, number> = { "1h": HOUR, "24h": DAY, "7d": 7 * DAY, "30d": 30 * DAY };

beforeAll(async () => {
  app = await startTestApp();
  let apiKey: string;
  ({ apiKey, projectId } = await createProject(app.sql, "day-edge"));
  const events = [];
  for (let i = 0; i * 97 * MINUTE < 33 * DAY; i++) {
    events.push({ message: `Day edge ${String.fromCharCode(97 + (i % 13))}`, level: LEVELS[i % 3], count: 1 + (i % 4), user_id: 1 + (i % 9), timestamp: iso(now - i * 97 * MINUTE) });
  }
  for (let i = 0; i * 7 * MINUTE < 27 * HOUR; i++) {
    events.push({ message: `Day edge ${String.fromCharCode(97 + (i % 13))}`, level: LEVELS[i % 3], count: 1 + (i % 4), timestamp: iso(now - i * 7 * MINUTE - 30_000) });
  }
  // a group seen once, 5 minutes into the hour 7 days ago: a 7d window starting 20 minutes into that
  // hour counts the occurrence (its start rounds down to the hour) but not the group as seen in it
  events.push({ message: "Day edge old", level: "error", timestamp: iso(floorHour(now) - 7 * DAY + 5 * MINUTE) });
  for (let i = 0; i < events.length; i += 100) await ingest(app, apiKey, events.slice(i, i + 100));
  await app.sql`update error_groups set status = 'resolved' where project_id = ${projectId} and message = 'Day edge b'`;
});
afterAll(() => app?.close());

/** The window's figures from the finest buckets (hours for 7d/30d; minutes, then hours for 1h/24h). */
async function fromFinest(start: number, unit: "minute" | "hour") {
  await countersApplied(app.sql);
  const from = unit === "hour" ? floorHour(start) : Math.floor(start / MINUTE) * MINUTE;
  const hourEdge = Math.ceil(from / HOUR) * HOUR;
  const cells = app.sql`
    select group_id, level, count from rollup_minute
    where project_id = ${projectId} and bucket >= ${new Date(from)} and bucket < ${new Date(hourEdge)}
    union all
    select group_id, level, count from rollup_hour where project_id = ${projectId} and bucket >= ${new Date(hourEdge)}`;
  const levels = await app.sql<{ level: string; n: number }[]>`select level, sum(count)::int as n from (${cells}) c group by level`;
  const top = await app.sql`
    select g.id, g.message, s.count::int as count, g.last_seen, g.level, g.status
    from (select group_id, sum(count) as count from (${cells}) c group by 1) s
    join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
    order by s.count desc, g.last_seen desc, g.id desc limit 10`;
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  for (const l of levels) by_level[l.level] = l.n;
  return { by_level, top_errors: top.map((t) => ({ ...t })) };
}

/** windowStats at `at` against the finest-bucket figures of the same window; returns what it got. */
async function expectSameAsFinest(at: Date, timeframe: Timeframe) {
  const start = at.getTime() - SPAN[timeframe];
  await countersApplied(app.sql);
  const got = await windowStats(app.sql, projectId, timeframe, at);
  const want = await fromFinest(start, timeframe === "1h" || timeframe === "24h" ? "minute" : "hour");
  // at and timeframe ride along so a failure names the window
  expect({ at: at.toISOString(), timeframe, by_level: got.by_level, top_errors: got.top_errors }).toEqual({ at: at.toISOString(), timeframe, ...want });
  expect(got.total_errors).toBe(want.by_level.error + want.by_level.warn + want.by_level.info);
  // open_groups by its definition: open groups last seen from the window's exact start on
  const [{ open }] = await app.sql<{ open: number }[]>`
    select count(*)::int as open from error_groups
    where project_id = ${projectId} and status = 'open' and merged_into is null and last_seen >= ${new Date(start)}`;
  expect({ at: at.toISOString(), timeframe, open_groups: got.open_groups }).toEqual({ at: at.toISOString(), timeframe, open_groups: open });
  return { start, got };
}

describe("stats windows across bucket edges", () => {
  it("keeps day rollups equal to the hour rollups they summarize", async () => {
    const [r] = await app.sql<{ days: number; day_total: number; hour_total: number }[]>`
      select (select count(*)::int from rollup_day where project_id = ${projectId}) as days,
        (select sum(count)::int from rollup_day where project_id = ${projectId}) as day_total,
        (select sum(count)::int from rollup_hour where project_id = ${projectId}) as hour_total`;
    expect(r.days).toBeGreaterThan(13 * 30);
    expect(r.day_total).toBe(r.hour_total);
    const mismatched = await app.sql`
      select d.bucket, d.group_id, d.level, d.count, h.n from rollup_day d
      full join (
        select date_trunc('day', bucket, 'UTC') as bucket, group_id, level, origin_id, sum(count) as n from rollup_hour
        where project_id = ${projectId} group by 1, 2, 3, 4
      ) h on h.bucket = d.bucket and h.group_id = d.group_id and h.level = d.level and h.origin_id = d.origin_id
      where d.project_id = ${projectId} and d.count is distinct from h.n`;
    expect(mismatched).toEqual([]);
  });

  it("answers every start hour of the day (at, just after and just before midnight) as the hour buckets do", async () => {
    const startHours = new Set<number>();
    // 48 "now"s an hour apart, each 20 minutes into its hour: the window starts at every hour of the day, twice
    for (let k = 0; k < 48; k++) {
      const at = new Date(floorHour(now) - k * HOUR + 20 * MINUTE);
      for (const timeframe of ["7d", "30d"] as const) {
        const { start, got } = await expectSameAsFinest(at, timeframe);
        startHours.add(new Date(start).getUTCHours());
        expect(got.top_errors).toHaveLength(10);
      }
    }
    expect(startHours.size).toBe(24);
  });

  it("answers 1h and 24h windows starting at every kind of minute as the minute and hour buckets do", async () => {
    const cases = new Set<string>();
    // "now"s 7 minutes apart over 3 hours, each 10 s into its minute
    for (let k = 0; k < 26; k++) {
      const at = new Date(Math.floor(now / MINUTE) * MINUTE - k * 7 * MINUTE + 10_000);
      for (const timeframe of ["1h", "24h"] as const) {
        const { start, got } = await expectSameAsFinest(at, timeframe);
        cases.add(new Date(start).getUTCMinutes() < 30 ? "early" : "late");
        expect(got.total_errors).toBeGreaterThan(0);
      }
    }
    expect(cases).toEqual(new Set(["early", "late"]));
  });

  it("draws the dashboard's 30-day series from day buckets as from hour buckets", async () => {
    const series = await projectSeries(app.sql, projectId, "30d");
    const fromHours = await app.sql<{ bucket: Date; level: string; n: number }[]>`
      select date_bin('1 day', bucket, timestamptz 'epoch') as bucket, level, sum(count)::int as n from rollup_hour
      where project_id = ${projectId} and bucket >= date_bin('1 day', now(), timestamptz 'epoch') - interval '29 days'
      group by 1, 2`;
    const want = new Map<number, Record<string, number>>();
    for (const r of fromHours) {
      const p = want.get(r.bucket.getTime()) ?? { error: 0, warn: 0, info: 0 };
      p[r.level] = r.n;
      want.set(r.bucket.getTime(), p);
    }
    expect(series).toHaveLength(30);
    expect(want.size).toBe(30);
    for (const p of series) expect({ bucket: p.bucket.toISOString(), error: p.error, warn: p.warn, info: p.info }).toEqual({ bucket: p.bucket.toISOString(), ...want.get(p.bucket.getTime()) });
  });
});
