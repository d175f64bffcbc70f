import type { Sql } from "./client.js";
import type { Timeframe } from "./stats.js";

/**
 * How each timeframe is drawn: bucket width, and which rollup holds buckets that fine. From an hour
 * on, the project's own hour cells (rollup_project_hour, migration 137: three a hour, whatever the
 * number of groups); the last hour from the groups' minute cells, which only its active groups have.
 */
const SERIES: Record<Timeframe, { table: "rollup_minute" | "rollup_project_hour"; step: string; points: number; unit: "minute" | "hour" | "day" }> = {
  "1h": { table: "rollup_minute", step: "1 minute", points: 60, unit: "minute" },
  "24h": { table: "rollup_project_hour", step: "1 hour", points: 24, unit: "hour" },
  "7d": { table: "rollup_project_hour", step: "6 hours", points: 28, unit: "hour" },
  "30d": { table: "rollup_project_hour", step: "1 day", points: 30, unit: "day" },
};

export type SeriesPoint = { bucket: Date; error: number; warn: number; info: number };

/** Occurrences per level over the timeframe, oldest first, zero-filled, from the rollups. */
export async function projectSeries(sql: Sql, projectId: string, timeframe: Timeframe): Promise<SeriesPoint[]> {
  const s = SERIES[timeframe];
  const step = sql`${s.step}::interval`;
  // buckets are aligned to the epoch, so the last one holds "now"
  const last = sql`date_bin(${step}, now(), timestamptz 'epoch')`;
  const first = sql`${last} - ${step} * ${s.points - 1}`;
  const rows = await sql<{ bucket: Date; level: string | null; count: number }[]>`
    with r as (
      select date_bin(${step}, bucket, timestamptz 'epoch') as bucket, level, sum(count)::bigint as count
      from ${sql(s.table)}
      where project_id = ${projectId} and bucket >= ${first} and bucket < ${last} + ${step}
      group by 1, 2
    )
    select b.bucket, r.level, coalesce(r.count, 0)::bigint as count
    from generate_series(${first}, ${last}, ${step}) as b(bucket)
    left join r on r.bucket = b.bucket
    order by b.bucket`;
  const byBucket = new Map<number, SeriesPoint>();
  for (const r of rows) {
    const k = r.bucket.getTime();
    let p = byBucket.get(k);
    if (!p) byBucket.set(k, (p = { bucket: r.bucket, error: 0, warn: 0, info: 0 }));
    if (r.level === "error" || r.level === "warn" || r.level === "info") p[r.level] += Number(r.count);
  }
  return [...byBucket.values()];
}

/**
 * Every environment the project's events came from (any event of any issue, not only each issue's
 * latest), by name: a loose index scan of group_environments' (project, environment) index, one probe
 * per distinct name however many issues there are.
 */
export async function listEnvironments(sql: Sql, projectId: string, limit = 100): Promise<string[]> {
  const rows = await sql<{ environment: string }[]>`
    with recursive envs as (
      (select environment from group_environments where project_id = ${projectId} order by environment limit 1)
      union all
      select (select x.environment from group_environments x
              where x.project_id = ${projectId} and x.environment > envs.environment order by x.environment limit 1)
      from envs where envs.environment is not null
    )
    select environment from envs where environment is not null limit ${limit}`;
  return rows.map((r) => r.environment);
}

/**
 * The environments each of some issues occurred in, most occurrences first (a merged issue: its
 * members' too).
 */
export async function issueEnvironments(sql: Sql, projectId: string, ids: string[]): Promise<Record<string, { environment: string; count: number }[]>> {
  if (ids.length === 0) return {};
  const rows = await sql<{ id: string; environment: string; count: string }[]>`
    select coalesce(g.merged_into, g.id) as id, ge.environment, sum(ge.count)::bigint as count
    from error_groups g
    join group_environments ge on ge.project_id = g.project_id and ge.group_id = g.id
    where g.project_id = ${projectId} and (g.id = any(${ids}::uuid[]) or g.merged_into = any(${ids}::uuid[]))
    group by 1, 2
    order by 1, 3 desc, 2`;
  const out: Record<string, { environment: string; count: number }[]> = {};
  for (const r of rows) (out[r.id] ??= []).push({ environment: r.environment, count: Number(r.count) });
  return out;
}

export async function hasGroups(sql: Sql, projectId: string): Promise<boolean> {
  const rows = await sql`select 1 from error_groups where project_id = ${projectId} limit 1`;
  return rows.length > 0;
}

/** Messages of some of the project's groups, by id (share-link lists). */
export async function groupMessages(sql: Sql, projectId: string, ids: string[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  const rows = await sql<{ id: string; message: string }[]>`
    select id, message from error_groups where project_id = ${projectId} and id = any(${ids}::uuid[])`;
  return Object.fromEntries(rows.map((r) => [r.id, r.message]));
}
