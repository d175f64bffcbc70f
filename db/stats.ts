import type { Sql } from "./client.js";

export type Timeframe = "1h" | "24h" | "7d" | "30d";
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WINDOWS: Record<Timeframe, { ms: number; unit: "minute" | "hour" }> = {
  "1h": { ms: HOUR, unit: "minute" },
  "24h": { ms: 24 * HOUR, unit: "minute" },
  "7d": { ms: 7 * DAY, unit: "hour" },
  "30d": { ms: 30 * DAY, unit: "hour" },
};

/** The rollups ingest writes (occurrences per group, level and origin); merges and deletes move them all alike. */
export const ROLLUP_TABLES = ["rollup_minute", "rollup_hour", "rollup_day"] as const;

/**
 * The rollup cells (group, level, count) whose counts sum to the occurrences in [start, now]; a cell
 * may count negatively. Minute-precise windows read minute buckets only up to the first whole hour
 * and hourly buckets from there on (at most 60 + 24 buckets per group).
 * Hour-precise windows read day buckets for whole days and hour buckets only for the day the window
 * starts in: its hours from the start when the start is late in the day, or else the whole day less
 * its hours before the start. So a 30d window reads at most 31 + 12 buckets per group, not 720.
 */
function windowCells(sql: Sql, projectId: string, start: number, unit: "minute" | "hour") {
  if (unit === "hour") {
    const from = Math.floor(start / HOUR) * HOUR;
    const day = Math.floor(from / DAY) * DAY;
    const hoursBefore = (from - day) / HOUR;
    if (hoursBefore === 0) {
      return sql`select group_id, level, count from rollup_day where project_id = ${projectId} and bucket >= ${new Date(day)}`;
    }
    if (hoursBefore <= 12) {
      return sql`
        select group_id, level, count from rollup_day where project_id = ${projectId} and bucket >= ${new Date(day)}
        union all
        select group_id, level, -count from rollup_hour
        where project_id = ${projectId} and bucket >= ${new Date(day)} and bucket < ${new Date(from)}`;
    }
    return sql`
      select group_id, level, count from rollup_hour
      where project_id = ${projectId} and bucket >= ${new Date(from)} and bucket < ${new Date(day + DAY)}
      union all
      select group_id, level, count from rollup_day where project_id = ${projectId} and bucket >= ${new Date(day + DAY)}`;
  }
  const from = Math.floor(start / MINUTE) * MINUTE;
  const hourEdge = Math.ceil(from / HOUR) * HOUR;
  return sql`
    select group_id, level, count from rollup_minute
    where project_id = ${projectId} and bucket >= ${new Date(from)} and bucket < ${new Date(hourEdge)}
    union all
    select group_id, level, count from rollup_hour where project_id = ${projectId} and bucket >= ${new Date(hourEdge)}`;
}

type Figure = { kind: "level" | "top"; id: string | null; message: string | null; count: number; last_seen: Date | null; level: string; status: string | null };

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d.
 * The cells are read once, summed per group and level, and both the per-level totals and the top
 * groups come from those sums (one statement).
 * open_groups is exact (a group occurred in the window iff its last_seen is inside it); so is
 * affected_users, to the minute (each user's latest occurrence is kept to the minute).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const cells = windowCells(sql, projectId, start.getTime(), w.unit);
  const [figures, [{ open_groups }], [{ affected_users }]] = await Promise.all([
    sql<Figure[]>`
      with sums as materialized (
        select group_id, level, sum(count) as n from (${cells}) c group by 1, 2
      ), top as (
        select g.id, g.message, s.count, g.last_seen, g.level, g.status,
          row_number() over (order by s.count desc, g.last_seen desc, g.id desc) as rank
        from (select group_id, sum(n)::bigint as count from sums group by 1 having sum(n) > 0) s
        join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
        order by rank limit 10
      )
      select 'level' as kind, null::uuid as id, null::text as message, sum(n)::bigint as count, null::timestamptz as last_seen,
        level, null::text as status, 0::bigint as rank
      from sums group by level
      union all
      select 'top', id, message, count, last_seen, level, status, rank from top
      order by kind, rank`,
    sql<{ open_groups: number }[]>`
      select count(*)::bigint as open_groups from error_groups
      where project_id = ${projectId} and status = 'open' and merged_into is null and last_seen >= ${start}`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  for (const f of figures) if (f.kind === "level") by_level[f.level] = Number(f.count);
  return {
    timeframe,
    total_errors: by_level.error + by_level.warn + by_level.info,
    by_level,
    open_groups: Number(open_groups),
    affected_users: Number(affected_users),
    top_errors: figures
      .filter((f) => f.kind === "top")
      .map((f) => ({ id: f.id, message: f.message, count: Number(f.count), last_seen: f.last_seen, level: f.level, status: f.status })),
  };
}
