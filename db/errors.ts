import type { Sql } from "./client.js";
import type { PendingQuery, Row } from "postgres";

export type GroupSort = "last_seen" | "first_seen" | "count";
/** Which groups: the filter of the issues list, of GET /api/v1/errors?grouped=true and of bulk actions. */
export type GroupMatch = {
  level?: string;
  status?: string;
  search?: string;
  /** groups that occurred in this environment (any of their events, not only the latest) */
  environment?: string;
  /** groups that came back after being resolved */
  regressed?: boolean;
  /** groups whose first occurrence carried this game version */
  newInVersion?: string;
  /** groups created at or before this time (a bulk action confirmed for a counted set) */
  createdBefore?: Date;
};
export type GroupFilter = GroupMatch & {
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

/** The columns of a group read (GroupRow), from `error_groups g`. */
const groupColumns = (sql: Sql) => sql`
  g.id, g.fingerprint, g.message, g.level, g.status, g.count, g.user_count, g.first_seen, g.last_seen, g.culprit,
  g.environment, g.regressed_at, g.resolved_at, g.first_version, g.last_version, g.regressed_version, g.snooze_until,
  g.snooze_count, g.snooze_users, g.grouping_version, g.merged_into`;

/** A row of error_groups as the group reads return it (groupColumns). */
export type GroupRow = {
  id: string;
  fingerprint: string;
  message: string;
  level: string;
  status: string;
  count: number;
  user_count: number;
  first_seen: Date;
  last_seen: Date;
  culprit: string | null;
  environment: string;
  regressed_at: Date | null;
  resolved_at: Date | null;
  first_version: string | null;
  last_version: string | null;
  regressed_version: string | null;
  snooze_until: Date | null;
  snooze_count: number | null;
  snooze_users: number | null;
  /** with an environment selected: the group's occurrences there */
  environment_count?: number;
  grouping_version: number;
  merged_into: string | null;
};

/** A stored event as the event reads return it. */
export type EventRow = {
  id: string;
  group_id: string;
  message: string;
  level: string;
  stack_trace: string | null;
  user_id: number | string | null;
  player_name: string | null;
  trace_id: string | null;
  job_id: string | null;
  place_id: number | string | null;
  game_version: string | null;
  environment: string;
  context: unknown;
  tags: string[] | null;
  /** only on a page of one group's events */
  breadcrumbs?: unknown;
  count: number;
  timestamp: Date;
  event_id: string | null;
};

/**
 * Each issue's occurrences in one environment, set-based over the environment's rows: a group merged
 * into another counts for that issue (its rows stay under its own id, db/merge.ts).
 */
const issueEnvironment = (sql: Sql, projectId: string, environment: string) => sql`
  select coalesce(m.merged_into, x.group_id) as id, sum(x.count) as count, max(x.last_seen) as last_seen
  from group_environments x
  left join (select id, merged_into from error_groups where project_id = ${projectId} and merged_into is not null) m on m.id = x.group_id
  where x.project_id = ${projectId} and x.environment = ${environment}
  group by 1`;

/**
 * Whether any group of the project is merged into another. Without, an environment's rows are each
 * group's own and the filter takes its plain form: a join by group id, about twice as fast at 50,000
 * issues as summing members in.
 */
async function holdsMerges(sql: Sql, projectId: string): Promise<boolean> {
  const [r] = await sql<{ x: boolean }[]>`select exists (select 1 from error_groups where project_id = ${projectId} and merged_into is not null) as x`;
  return r.x;
}

/**
 * The where clause of a group filter over `error_groups g` (the project's groups only). `merges: false`
 * says the project holds no merged issue (holdsMerges), for the plain environment filter.
 */
export function groupWhere(sql: Sql, projectId: string, f: GroupMatch, merges = true) {
  const inEnvironment = (environment: string) =>
    merges
      ? sql`and g.id in (select ie.id from (${issueEnvironment(sql, projectId, environment)}) ie)`
      : sql`and exists (select 1 from group_environments ge where ge.project_id = g.project_id and ge.group_id = g.id and ge.environment = ${environment})`;
  return sql`
    g.project_id = ${projectId} and g.merged_into is null
    ${f.level ? sql`and g.level = ${f.level}` : sql``}
    ${f.status ? sql`and g.status = ${f.status}` : sql``}
    ${f.environment ? inEnvironment(f.environment) : sql``}
    ${f.search ? searchWhere(sql, projectId, f.search) : sql``}
    ${f.regressed ? sql`and g.regressed_at is not null` : sql``}
    ${f.newInVersion ? sql`and g.first_version = ${f.newInVersion}` : sql``}
    ${f.createdBefore ? sql`and g.created_at <= ${f.createdBefore}` : sql``}`;
}

/**
 * How many of the project's newest stored events an issue search reads for their messages and player
 * names. A substring of an event's text cannot use an index without making every ingest pay for one,
 * so, as raw search (RAW_SEARCH_WINDOW), it reads a bounded window; a smaller one, since the issues list
 * searches on every Apply and its other parts (messages, culprits, players) are indexed and unbounded:
 * at 100,000 events the window costs about a fifth of raw search's.
 */
export const ISSUE_SEARCH_WINDOW = 20_000;

/** A numeric search also names a player by user id, exactly. */
const searchedUserId = (search: string) => (/^\d{1,18}$/.test(search.trim()) ? search.trim() : null);

/**
 * The issues a search finds: one whose message or culprit holds it (trigram indexes), and, through one
 * list of ids computed once, one a matching player had (any part of their latest name, or their user
 * id for a numeric search; through group_users), one whose events among the newest ISSUE_SEARCH_WINDOW
 * hold it in their message or player name (lower() and LIKE: ILIKE, which the trigram indexes need,
 * costs about twice as much per unindexed row), and one holding a merged group whose message or
 * culprit does. The planner answers the three as one bitmap (message index, culprit index, primary key), so
 * each matching issue is read from the heap once, as with the message alone.
 */
function searchWhere(sql: Sql, projectId: string, search: string) {
  const p = likePattern(search);
  const userId = searchedUserId(search);
  return sql`and (g.message ilike ${p} or g.culprit ilike ${p} or g.id = any(array(
    select coalesce(m.merged_into, m.id) from error_groups m
    where m.project_id = ${projectId} and m.id in (
      select e.group_id from (
        select group_id, message, player_name from events where project_id = ${projectId}
        order by "timestamp" desc, id desc limit ${ISSUE_SEARCH_WINDOW}
      ) e where lower(e.message) like lower(${p}) or lower(e.player_name) like lower(${p})
      union
      select gu.group_id from group_users gu
      where gu.project_id = ${projectId} and gu.user_id in (
        select pu.user_id from project_users pu where pu.project_id = ${projectId} and pu.player_name ilike ${p}
        ${userId ? sql`union all select ${userId}::bigint` : sql``}
      )
    )
    union
    select h.merged_into from error_groups h
    where h.project_id = ${projectId} and h.merged_into is not null and (h.message ilike ${p} or h.culprit ilike ${p})
  )))`;
}

/**
 * What an issue search read of the stored events: how many (at most ISSUE_SEARCH_WINDOW), and whether
 * older ones were left out. An index-only count of the window, bounded like the search itself.
 */
export async function issueSearchScope(sql: Sql, projectId: string): Promise<{ events: number; windowFull: boolean }> {
  const [{ n }] = await sql<{ n: string }[]>`
    select count(*)::bigint as n from (
      select 1 from events where project_id = ${projectId} order by "timestamp" desc, id desc limit ${ISSUE_SEARCH_WINDOW + 1}
    ) w`;
  const count = Number(n);
  return { events: Math.min(count, ISSUE_SEARCH_WINDOW), windowFull: count > ISSUE_SEARCH_WINDOW };
}

export async function countGroups(sql: Sql, projectId: string, f: GroupMatch): Promise<number> {
  const merges = f.environment ? await holdsMerges(sql, projectId) : false;
  const [{ total }] = await sql<{ total: number }[]>`select count(*)::bigint as total from error_groups g where ${groupWhere(sql, projectId, f, merges)}`;
  return Number(total);
}

const EVENT_COLUMNS = (sql: Sql) => sql`
  e.id::text as id, e.group_id, e.message, e.level, e.stack_trace, e.user_id, e.player_name, e.trace_id, e.job_id,
  e.place_id, e.game_version, e.environment, e.context, e.tags, e.count, e."timestamp", e.received_at, e.event_id`;

/** A page of one group's events also carries each event's breadcrumbs (lists and share views do not). */
const PAGE_COLUMNS = (sql: Sql) => sql`${EVENT_COLUMNS(sql)}, e.breadcrumbs`;

/** `%` and `_` in a search are literal characters, not patterns. */
export const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export async function listGroups(sql: Sql, projectId: string, f: GroupFilter) {
  // members of a merged issue are listed through it, not on their own (groupWhere leaves them out)
  const merges = f.environment ? await holdsMerges(sql, projectId) : false;
  const where = groupWhere(sql, projectId, f, merges);
  // with an environment selected, each group carries its figures there (a merged issue: its
  // members' summed) and "count" sorts by them
  const env = !f.environment
    ? sql``
    : merges
      ? sql`left join (${issueEnvironment(sql, projectId, f.environment)}) ge on ge.id = g.id`
      : sql`left join group_environments ge on ge.project_id = g.project_id and ge.group_id = g.id and ge.environment = ${f.environment}`;
  const envColumns = f.environment
    ? sql`, coalesce(ge.count, 0)::bigint as environment_count, ge.last_seen as environment_last_seen`
    : sql``;
  const [key, direction] =
    f.sort === "count"
      ? f.environment ? [sql`ge.count`, sql`desc nulls last`] : [sql`g.count`, sql`desc`]
      : f.sort === "first_seen" ? [sql`g.first_seen`, sql`desc`] : [sql`g.last_seen`, sql`desc`];
  if (f.search) return searchGroups(sql, projectId, f, { where, env, envColumns, key, direction });
  // Unsearched, the two statements run side by side and the page's scan may go parallel: one pass
  // through a materialized list of every group of the project measured slower (it spills to disk).
  const [data, [{ total }]] = await Promise.all([
    sql`select ${groupColumns(sql)} ${envColumns} from error_groups g ${env} where ${where} order by ${key} ${direction}, g.id desc limit ${f.limit} offset ${f.offset}`,
    sql<{ total: number }[]>`select count(*)::bigint as total from error_groups g where ${where}`,
  ]);
  return { data, total: Number(total) };
}

type GroupQueryParts = { where: Fragment; env: Fragment; envColumns: Fragment; key: Fragment; direction: Fragment };
type Fragment = PendingQuery<Row[]>;

/**
 * A searched group list in one statement. The trigram index finds the candidates cheaply, but every
 * one of them is read from the heap and its message rechecked with ILIKE, which is most of the cost;
 * the matches (id and sort key only) are kept once and both the total and the page are taken from
 * them, so the recheck runs once instead of once for the page and once for the count. The one-row
 * count left-joined to the page keeps the total when the offset is past the last match.
 */
async function searchGroups(sql: Sql, projectId: string, f: GroupFilter, q: GroupQueryParts) {
  const rows = await sql<({ total: number } & Record<string, unknown>)[]>`
    with matched as materialized (
      select g.id, ${q.key} as sort_key from error_groups g ${q.env} where ${q.where}
    ), page as (
      select id, sort_key from matched order by sort_key ${q.direction}, id desc limit ${f.limit} offset ${f.offset}
    )
    select c.total, ${groupColumns(sql)} ${q.envColumns}
    from (select count(*)::bigint as total from matched) c
    left join page p on true
    left join error_groups g on g.project_id = ${projectId} and g.id = p.id
    ${q.env}
    order by p.sort_key ${q.direction}, p.id desc`;
  const total = Number(rows[0]?.total ?? 0);
  const data = rows.filter((r) => r.id !== null).map(({ total: _t, ...group }) => group);
  return { data, total };
}

/**
 * How many of the newest raw events (matching the other filters) a raw `search` reads. A substring of
 * the message cannot use an index, so an unbounded search reads every stored event; bounded, it costs
 * the same at a million rows as at a hundred thousand. `total` then counts matches among those events,
 * and `search_window_full` says that older events were not searched.
 */
export const RAW_SEARCH_WINDOW = 100_000;

export type EventPage = { data: Record<string, unknown>[]; total: number; searchWindowFull?: true };

export async function listEvents(sql: Sql, projectId: string, f: EventFilter, opts: { searchWindow?: number } = {}): Promise<EventPage> {
  const filtered = Boolean(f.level || f.search || f.environment || f.userId || f.placeId);
  const where = sql`
    e.project_id = ${projectId}
    ${f.level ? sql`and e.level = ${f.level}` : sql``}
    ${f.environment ? sql`and e.environment = ${f.environment}` : sql``}
    ${f.userId ? sql`and e.user_id = ${f.userId}` : sql``}
    ${f.placeId ? sql`and e.place_id = ${f.placeId}` : sql``}`;
  if (f.search) return searchEvents(sql, where, f, opts.searchWindow ?? RAW_SEARCH_WINDOW);
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

/** Raw search over the newest `window` events that pass the other filters (see RAW_SEARCH_WINDOW). */
async function searchEvents(sql: Sql, where: PendingQuery<Row[]>, f: EventFilter, window: number): Promise<EventPage> {
  const rows = await sql<({ total: string; window_rows: string } & Record<string, unknown>)[]>`
    with recent as materialized (
      select e.project_id, e.id, e."timestamp", e.message from events e where ${where}
      order by e."timestamp" desc, e.id desc limit ${window}
    ), matched as (
      select project_id, id, "timestamp" from recent where message ilike ${likePattern(f.search!)}
    ), counts as (
      select (select count(*) from matched) as total, (select count(*) from recent) as window_rows
    ), page as (
      select * from matched order by "timestamp" desc, id desc limit ${f.limit} offset ${f.offset}
    )
    select c.total, c.window_rows, ${EVENT_COLUMNS(sql)}
    from counts c
    left join page p on true
    left join events e on e.project_id = p.project_id and e.id = p.id and e."timestamp" = p."timestamp"
    order by p."timestamp" desc nulls last, p.id desc`;
  const total = Number(rows[0]?.total ?? 0);
  const windowFull = Number(rows[0]?.window_rows ?? 0) >= window;
  const data = rows.filter((r) => r.id !== null).map(({ total: _t, window_rows: _w, ...event }) => event);
  return { data, total, ...(windowFull ? { searchWindowFull: true as const } : {}) };
}

export async function getGroup(sql: Sql, projectId: string, groupId: string) {
  const [g] = await sql<(Row & { id: string; merged_into: string | null })[]>`select ${groupColumns(sql)} from error_groups g where g.project_id = ${projectId} and g.id = ${groupId}`;
  return g;
}

/**
 * A group, or a group with where it is merged: the stored events and rollup cells of a group merged
 * into another are in that issue, marked with the group they came from (events' `origin_group_id`,
 * rollup cells' `origin_id`; db/merge.ts), so its own part is read there. A bare id reads the group's own rows.
 */
export type GroupRef = string | { id: string; merged_into: string | null };
const refOf = (g: GroupRef) => (typeof g === "string" ? { id: g, merged_into: null } : g);
/** The events of a group (over `events e`). */
function eventsOf(sql: Sql, projectId: string, group: GroupRef) {
  const g = refOf(group);
  return g.merged_into
    ? sql`e.project_id = ${projectId} and e.group_id = ${g.merged_into} and e.origin_group_id = ${g.id}`
    : sql`e.project_id = ${projectId} and e.group_id = ${g.id}`;
}

/**
 * Hourly occurrences of one group over the last `hours` hours, oldest first, zero-filled. The rollup
 * read is bounded to those hours by the index, however long the group's history.
 */
export async function groupHourlySeries(sql: Sql, projectId: string, group: GroupRef, hours = 168) {
  const g = refOf(group);
  const first = sql`date_trunc('hour', now()) - make_interval(hours => ${hours - 1})`;
  const cells = g.merged_into ? sql`group_id = ${g.merged_into} and origin_id = ${g.id}` : sql`group_id = ${g.id}`;
  return sql<{ bucket: Date; count: number }[]>`
    with r as (
      select bucket, sum(count) as count from rollup_hour
      where project_id = ${projectId} and ${cells} and bucket >= ${first} and bucket <= date_trunc('hour', now())
      group by bucket
    )
    select b.bucket, coalesce(r.count, 0)::bigint as count
    from generate_series(${first}, date_trunc('hour', now()), interval '1 hour') as b(bucket)
    left join r on r.bucket = b.bucket
    order by b.bucket`;
}

/**
 * Hourly occurrences over the last `hours` hours (the current, partial hour last) of several listed
 * issues in one statement, for a page of the issues list: each id's counts, oldest first, zero-filled.
 * Rollup cells of groups merged into an issue are under the issue's id (db/merge.ts), so a listed
 * issue's line includes them. Read by the (project, group, bucket) index, bounded to those hours.
 */
export async function groupsHourlyCounts(sql: Sql, projectId: string, ids: string[], hours = 24): Promise<Record<string, number[]>> {
  if (ids.length === 0) return {};
  const first = sql`date_trunc('hour', now()) - make_interval(hours => ${hours - 1})`;
  const rows = await sql<{ id: string; counts: string[] }[]>`
    with r as (
      select group_id, bucket, sum(count) as count from rollup_hour
      where project_id = ${projectId} and group_id = any(${ids}::uuid[])
        and bucket >= ${first} and bucket <= date_trunc('hour', now())
      group by 1, 2
    )
    select i.id, array_agg(coalesce(r.count, 0)::bigint order by b.bucket) as counts
    from unnest(${ids}::uuid[]) as i(id)
    cross join generate_series(${first}, date_trunc('hour', now()), interval '1 hour') as b(bucket)
    left join r on r.group_id = i.id and r.bucket = b.bucket
    group by i.id`;
  return Object.fromEntries(rows.map((r) => [r.id, r.counts.map(Number)]));
}

export async function latestGroupEvents(sql: Sql, projectId: string, group: GroupRef, limit = 20) {
  return sql`
    select ${EVENT_COLUMNS(sql)} from events e
    where ${eventsOf(sql, projectId, group)}
    order by e."timestamp" desc, e.id desc limit ${limit}`;
}

/**
 * Player names and user ids of a group's oldest and newest stored events (the group's message is
 * its first event's), for scrubbing them out of what a share link shows. Bounded by the index.
 */
export async function groupIdentities(sql: Sql, projectId: string, group: GroupRef, each = 50) {
  return sql<{ player_name: string | null; user_id: string | null }[]>`
    (select e.player_name, e.user_id::text from events e where ${eventsOf(sql, projectId, group)}
     order by e."timestamp" asc, e.id asc limit ${each})
    union
    (select e.player_name, e.user_id::text from events e where ${eventsOf(sql, projectId, group)}
     order by e."timestamp" desc, e.id desc limit ${each})`;
}

export type GroupEventPage = { events: unknown[]; newer: string | null; older: string | null };

/**
 * One page of a group's stored events, newest first, by keyset on (timestamp, id): `before` gives
 * the page of events older than that event, `after` the page of events newer than it. Answers the
 * page and the ids to page on from (null at either end).
 */
export async function groupEventPage(
  sql: Sql,
  projectId: string,
  group: GroupRef,
  cursor: { before?: string; after?: string },
  limit = 20,
): Promise<GroupEventPage> {
  const anchorId = cursor.before ?? cursor.after;
  const base = eventsOf(sql, projectId, group);
  const anchor = anchorId ? sql`(select e."timestamp", e.id from events e where ${base} and e.id = ${anchorId})` : null;
  let rows: { id: string; timestamp: Date }[];
  if (cursor.after && anchor) {
    const newer = await sql<{ id: string; timestamp: Date }[]>`
      select ${PAGE_COLUMNS(sql)} from events e, ${anchor} a
      where ${base} and (e."timestamp", e.id) > (a."timestamp", a.id)
      order by e."timestamp", e.id limit ${limit}`;
    rows = newer.reverse();
  } else if (cursor.before && anchor) {
    rows = await sql<{ id: string; timestamp: Date }[]>`
      select ${PAGE_COLUMNS(sql)} from events e, ${anchor} a
      where ${base} and (e."timestamp", e.id) < (a."timestamp", a.id)
      order by e."timestamp" desc, e.id desc limit ${limit}`;
  } else {
    rows = await sql<{ id: string; timestamp: Date }[]>`
      select ${PAGE_COLUMNS(sql)} from events e where ${base} order by e."timestamp" desc, e.id desc limit ${limit}`;
  }
  if (rows.length === 0) return { events: [], newer: null, older: null };
  const first = rows[0];
  const last = rows[rows.length - 1];
  const [{ has_newer, has_older }] = await sql<{ has_newer: boolean; has_older: boolean }[]>`
    select
      exists (select 1 from events e where ${base} and (e."timestamp", e.id) > (${first.timestamp}::timestamptz, ${first.id}::bigint)) as has_newer,
      exists (select 1 from events e where ${base} and (e."timestamp", e.id) < (${last.timestamp}::timestamptz, ${last.id}::bigint)) as has_older`;
  return { events: rows, newer: has_newer ? first.id : null, older: has_older ? last.id : null };
}

export type TagCount = { value: string; count: number };
export type TagBreakdown = { key: string; total: number; values: TagCount[] };

/**
 * Top values per tag over a group's latest stored events (up to `sample` rows, occurrences weighted
 * by each row's count): place, game version, environment, server (job id), tags and every top-level
 * `context` key with a scalar value.
 */
export async function groupTagBreakdown(sql: Sql, projectId: string, group: GroupRef, sample = 5000, top = 5): Promise<{ sampled: number; tags: TagBreakdown[] }> {
  const rows = await sql<{ key: string; value: string; count: string; total: string; sampled: string }[]>`
    with ev as (
      select e.place_id, e.game_version, e.environment, e.job_id, e.context, e.tags, e.count from events e
      where ${eventsOf(sql, projectId, group)}
      order by e."timestamp" desc, e.id desc limit ${sample}
    ), kv as (
      select 'place' as key, place_id::text as value, count from ev where place_id is not null
      union all select 'version', game_version, count from ev where game_version is not null
      union all select 'environment', environment, count from ev
      union all select 'server', job_id, count from ev where job_id is not null
      union all select 'tag', t, count from ev, unnest(tags) t where tags is not null
      union all select 'context.' || c.key, left(c.value #>> '{}', 200), count
        from ev, jsonb_each(case when jsonb_typeof(context) = 'object' then context else '{}'::jsonb end) c
        where jsonb_typeof(c.value) in ('string', 'number', 'boolean')
    ), counted as (
      select key, value, sum(count) as count from kv group by 1, 2
    ), ranked as (
      select key, value, count, sum(count) over (partition by key) as total,
        row_number() over (partition by key order by count desc, value) as rn
      from counted
    )
    select key, value, count::bigint, total::bigint, (select count(*) from ev)::bigint as sampled
    from ranked where rn <= ${top}
    order by case key when 'environment' then 0 when 'version' then 1 when 'place' then 2 when 'server' then 3 when 'tag' then 4 else 5 end,
      key, count desc, value`;
  const byKey = new Map<string, TagBreakdown>();
  for (const r of rows) {
    let t = byKey.get(r.key);
    if (!t) byKey.set(r.key, (t = { key: r.key, total: Number(r.total), values: [] }));
    t.values.push({ value: r.value, count: Number(r.count) });
  }
  // context keys are open-ended: the first 20 are plenty for a breakdown
  const tags = [...byKey.values()].filter((t, i, all) => !t.key.startsWith("context.") || all.slice(0, i).filter((x) => x.key.startsWith("context.")).length < 20);
  return { sampled: rows.length ? Number(rows[0].sampled) : 0, tags };
}

/**
 * The project's traces, newest first (by first event), paged. `first_message` is the issue of the
 * trace's earliest stored event, by event time and then id as the trace's page orders them
 * (`group_ids` is a set, in id order); null once the trace's events have expired.
 */
export async function listTraces(sql: Sql, projectId: string, limit: number, offset: number) {
  const [data, [{ total }]] = await Promise.all([
    sql`select t.trace_id, t.first_seen, t.last_seen, t.event_count, t.group_ids, g.message as first_message
        from (
          select * from traces where project_id = ${projectId}
          order by first_seen desc, trace_id desc limit ${limit} offset ${offset}
        ) t
        left join lateral (
          select e.group_id from events e where e.project_id = t.project_id and e.trace_id = t.trace_id
          order by e."timestamp", e.id limit 1
        ) fe on true
        left join error_groups g on g.project_id = t.project_id and g.id = fe.group_id
        order by t.first_seen desc, t.trace_id desc`,
    sql<{ total: number }[]>`select count(*)::bigint as total from traces where project_id = ${projectId}`,
  ]);
  return { data, total: Number(total) };
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
