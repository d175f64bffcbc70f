import type { Sql } from "./client.js";

export type GroupSort = "last_seen" | "first_seen" | "count";
export type GroupFilter = {
  level?: string;
  status?: string;
  search?: string;
  environment?: string;
  sort: GroupSort;
  limit: number;
  offset: number;
};
export type EventFilter = {
  level?: string;
  search?: string;
  environment?: string;
  userId?: string;
  placeId?: string;
  limit: number;
  offset: number;
};

const GROUP_COLUMNS = (sql: Sql) => sql`
  id, fingerprint, message, level, status, count, user_count, first_seen, last_seen, culprit, environment,
  regressed_at, resolved_at, grouping_version, merged_into`;

const EVENT_COLUMNS = (sql: Sql) => sql`
  e.id::text as id, e.group_id, e.message, e.level, e.stack_trace, e.user_id, e.player_name, e.trace_id, e.job_id,
  e.place_id, e.game_version, e.environment, e.context, e.tags, e.count, e."timestamp", e.received_at`;

/** `%` and `_` in a search are literal characters, not patterns. */
export const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listGroups(sql: Sql, projectId: string, f: GroupFilter) {
  // members of a merged issue are listed through it, not on their own
  const where = sql`
    project_id = ${projectId} and merged_into is null
    ${f.level ? sql`and level = ${f.level}` : sql``}
    ${f.status ? sql`and status = ${f.status}` : sql``}
    ${f.environment ? sql`and environment = ${f.environment}` : sql``}
    ${f.search ? sql`and message ilike ${likePattern(f.search)}` : sql``}`;
  const order =
    f.sort === "count" ? sql`count desc, id desc` : f.sort === "first_seen" ? sql`first_seen desc, id desc` : sql`last_seen desc, id desc`;
  const [data, [{ total }]] = await Promise.all([
    sql`select ${GROUP_COLUMNS(sql)} from error_groups where ${where} order by ${order} limit ${f.limit} offset ${f.offset}`,
    sql<{ total: number }[]>`select count(*)::bigint as total from error_groups where ${where}`,
  ]);
  return { data, total: Number(total) };
}

export async function listEvents(sql: Sql, projectId: string, f: EventFilter) {
  const filtered = Boolean(f.level || f.search || f.environment || f.userId || f.placeId);
  const where = sql`
    e.project_id = ${projectId}
    ${f.level ? sql`and e.level = ${f.level}` : sql``}
    ${f.environment ? sql`and e.environment = ${f.environment}` : sql``}
    ${f.userId ? sql`and e.user_id = ${f.userId}` : sql``}
    ${f.placeId ? sql`and e.place_id = ${f.placeId}` : sql``}
    ${f.search ? sql`and e.message ilike ${likePattern(f.search)}` : sql``}`;
  // Unfiltered, the total is the sum of the per-group stored-row counters kept at ingest and
  // retention, so the first page stays as fast at a million rows as at ten thousand.
  const totalQuery = filtered
    ? sql<{ total: number }[]>`select count(*)::bigint as total from events e where ${where}`
    : sql<{ total: number }[]>`select coalesce(sum(stored_count), 0)::bigint as total from error_groups where project_id = ${projectId}`;
  const [data, [{ total }]] = await Promise.all([
    sql`select ${EVENT_COLUMNS(sql)} from events e where ${where} order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`,
    totalQuery,
  ]);
  return { data, total: Number(total) };
}

export async function getGroup(sql: Sql, projectId: string, groupId: string) {
  const [g] = await sql`select ${GROUP_COLUMNS(sql)} from error_groups where project_id = ${projectId} and id = ${groupId}`;
  return g;
}

/** Hourly occurrences of one group over the last `hours` hours, oldest first, zero-filled. */
export async function groupHourlySeries(sql: Sql, projectId: string, groupId: string, hours = 168) {
  return sql<{ bucket: Date; count: number }[]>`
    select b.bucket, coalesce(sum(r.count), 0)::bigint as count
    from generate_series(date_trunc('hour', now()) - make_interval(hours => ${hours - 1}), date_trunc('hour', now()), interval '1 hour') as b(bucket)
    left join rollup_hour r on r.project_id = ${projectId} and r.group_id = ${groupId} and r.bucket = b.bucket
    group by b.bucket order by b.bucket`;
}

export async function latestGroupEvents(sql: Sql, projectId: string, groupId: string, limit = 20) {
  return sql`
    select ${EVENT_COLUMNS(sql)} from events e
    where e.project_id = ${projectId} and e.group_id = ${groupId}
    order by e."timestamp" desc, e.id desc limit ${limit}`;
}

export async function getTrace(sql: Sql, projectId: string, traceId: string) {
  const [trace] = await sql`
    select trace_id, first_seen, last_seen, event_count, group_ids
    from traces where project_id = ${projectId} and trace_id = ${traceId}`;
  if (!trace) return undefined;
  const events = await sql`
    select ${EVENT_COLUMNS(sql)}, g.fingerprint from events e
    join error_groups g on g.project_id = e.project_id and g.id = e.group_id
    where e.project_id = ${projectId} and e.trace_id = ${traceId}
    order by e."timestamp", e.id`;
  return { trace, events };
}
