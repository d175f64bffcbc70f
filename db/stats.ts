import type { Sql } from "./client.js";

export type Timeframe = "1h" | "24h" | "7d" | "30d";
const WINDOWS: Record<Timeframe, { ms: number; table: "rollup_minute" | "rollup_hour"; unit: "minute" | "hour" }> = {
  "1h": { ms: 3_600_000, table: "rollup_minute", unit: "minute" },
  "24h": { ms: 86_400_000, table: "rollup_minute", unit: "minute" },
  "7d": { ms: 7 * 86_400_000, table: "rollup_hour", unit: "hour" },
  "30d": { ms: 30 * 86_400_000, table: "rollup_hour", unit: "hour" },
};

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d.
 * open_groups and affected_users are exact: a group or user occurred in the window iff its latest
 * occurrence is inside it.
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const bucketStart = sql`date_trunc(${w.unit}, ${start}::timestamptz)`;
  const table = sql(w.table);
  const [levels, top, [{ open_groups }], [{ affected_users }]] = await Promise.all([
    sql<{ level: string; count: number }[]>`
      select level, sum(count)::bigint as count from ${table}
      where project_id = ${projectId} and bucket >= ${bucketStart} group by level`,
    sql`
      select g.id, g.message, s.count, g.last_seen, g.level, g.status
      from (select group_id, sum(count)::bigint as count from ${table}
            where project_id = ${projectId} and bucket >= ${bucketStart} group by group_id) s
      join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
      order by s.count desc, g.last_seen desc, g.id desc limit 10`,
    sql<{ open_groups: number }[]>`
      select count(*)::bigint as open_groups from error_groups
      where project_id = ${projectId} and status = 'open' and last_seen >= ${start}`,
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
