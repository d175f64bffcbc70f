import type { Sql } from "./client.js";
import type { Timeframe } from "./stats.js";

/** How each timeframe is drawn: bucket width, and which rollup holds buckets that fine. */
const SERIES: Record<Timeframe, { table: "rollup_minute" | "rollup_hour" | "rollup_day"; step: string; points: number; unit: "minute" | "hour" | "day" }> = {
  "1h": { table: "rollup_minute", step: "1 minute", points: 60, unit: "minute" },
  "24h": { table: "rollup_hour", step: "1 hour", points: 24, unit: "hour" },
  "7d": { table: "rollup_hour", step: "6 hours", points: 28, unit: "hour" },
  "30d": { table: "rollup_day", step: "1 day", points: 30, unit: "day" },
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

export async function listEnvironments(sql: Sql, projectId: string): Promise<string[]> {
  const rows = await sql<{ environment: string }[]>`
    select distinct environment from error_groups where project_id = ${projectId} and merged_into is null order by environment limit 50`;
  return rows.map((r) => r.environment);
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
