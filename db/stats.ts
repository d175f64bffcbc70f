import type { Sql } from "./client.js";

export type Timeframe = "1h" | "24h" | "7d" | "30d";
const MINUTE = 60_000;
const HOUR = 3_600_000;
const WINDOWS: Record<Timeframe, { ms: number; unit: "minute" | "hour" }> = {
  "1h": { ms: HOUR, unit: "minute" },
  "24h": { ms: 24 * HOUR, unit: "minute" },
  "7d": { ms: 7 * 24 * HOUR, unit: "hour" },
  "30d": { ms: 30 * 24 * HOUR, unit: "hour" },
};

/**
 * The rollup cells (group, level, count) covering [start, now]. Minute-precise windows read minute
 * buckets only up to the first whole hour and hourly buckets from there on, so a 24h window reads at
 * most 60 + 24 buckets per group, however many events they hold.
 */
function windowCells(sql: Sql, projectId: string, start: number, unit: "minute" | "hour") {
  if (unit === "hour") {
    const from = new Date(Math.floor(start / HOUR) * HOUR);
    return sql`select group_id, level, count from rollup_hour where project_id = ${projectId} and bucket >= ${from}`;
  }
  const from = Math.floor(start / MINUTE) * MINUTE;
  const hourEdge = Math.ceil(from / HOUR) * HOUR;
  return sql`
    select group_id, level, count from rollup_minute
    where project_id = ${projectId} and bucket >= ${new Date(from)} and bucket < ${new Date(hourEdge)}
    union all
    select group_id, level, count from rollup_hour where project_id = ${projectId} and bucket >= ${new Date(hourEdge)}`;
}

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d.
 * open_groups is exact (a group occurred in the window iff its last_seen is inside it); so is
 * affected_users, to the minute (each user's latest occurrence is kept to the minute).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const cells = windowCells(sql, projectId, start.getTime(), w.unit);
  const [levels, top, [{ open_groups }], [{ affected_users }]] = await Promise.all([
    sql<{ level: string; count: number }[]>`
      select level, sum(count)::bigint as count from (${cells}) c group by level`,
    sql`
      select g.id, g.message, s.count, g.last_seen, g.level, g.status
      from (select group_id, sum(count)::bigint as count from (${cells}) c group by group_id) s
      join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
      order by s.count desc, g.last_seen desc, g.id desc limit 10`,
    sql<{ open_groups: number }[]>`
      select count(*)::bigint as open_groups from error_groups
      where project_id = ${projectId} and status = 'open' and merged_into is null and last_seen >= ${start}`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  for (const l of levels) by_level[l.level] = Number(l.count);
  return {
    timeframe,
    total_errors: by_level.error + by_level.warn + by_level.info,
    by_level,
    open_groups: Number(open_groups),
    affected_users: Number(affected_users),
    top_errors: top.map((t) => ({ ...t, count: Number(t.count) })),
  };
}
