/** Reads of one issue (or of a few, for the list's sparklines): hourly series, latest events, identities, event pages, tag breakdown. */
import type { Sql } from "./client.js";
import { EVENT_COLUMNS, PAGE_COLUMNS } from "./errors.js";

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

/** At most this many of the names and ids kept on a group's and its merged members' rows are read. */
const KEPT_IDENTITIES_READ = 1000;

/**
 * Player names and user ids of a group's oldest and newest stored events, and those its row and its
 * merged members' rows keep (db/identities.ts: who the events whose text the rows show name, even
 * once those events are deleted), for scrubbing them out of what a share link shows. A kept entry of
 * digits only is an id. Bounded by the indexes and KEPT_IDENTITIES_READ.
 */
export async function groupIdentities(sql: Sql, projectId: string, group: GroupRef, each = 50) {
  const id = refOf(group).id;
  return sql<{ player_name: string | null; user_id: string | null }[]>`
    (select e.player_name, e.user_id::text from events e where ${eventsOf(sql, projectId, group)}
     order by e."timestamp" asc, e.id asc limit ${each})
    union
    (select e.player_name, e.user_id::text from events e where ${eventsOf(sql, projectId, group)}
     order by e."timestamp" desc, e.id desc limit ${each})
    union
    (select case when x !~ '^[0-9]+$' then x end, case when x ~ '^[0-9]+$' then x end from (
       (select unnest(k.identities) as x from error_groups k where k.project_id = ${projectId} and k.id = ${id})
       union all
       (select unnest(k.identities) from error_groups k where k.project_id = ${projectId} and k.merged_into = ${id})
     ) kept limit ${KEPT_IDENTITIES_READ})`;
}

export type GroupEventPage = { events: unknown[]; newer: string | null; older: string | null };

/**
 * One page of a group's stored events, newest first, by keyset on (timestamp, id): `before` gives
 * the page of events older than that event, `after` the page of events newer than it. Answers the
 * page and the ids to page on from (null at either end). One statement: it reads one row past the
 * page to know whether more lie that way, and the anchor (a stored event of the group) lies the
 * other way; the first page has nothing newer.
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
  let newer: boolean;
  let older: boolean;
  if (cursor.after && anchor) {
    const after = await sql<{ id: string; timestamp: Date }[]>`
      select ${PAGE_COLUMNS(sql)} from events e, ${anchor} a
      where ${base} and (e."timestamp", e.id) > (a."timestamp", a.id)
      order by e."timestamp", e.id limit ${limit + 1}`;
    newer = after.length > limit;
    rows = after.slice(0, limit).reverse();
    older = true;
  } else {
    rows = await sql<{ id: string; timestamp: Date }[]>`
      select ${PAGE_COLUMNS(sql)} from events e ${anchor ? sql`, ${anchor} a` : sql``}
      where ${base} ${anchor ? sql`and (e."timestamp", e.id) < (a."timestamp", a.id)` : sql``}
      order by e."timestamp" desc, e.id desc limit ${limit + 1}`;
    older = rows.length > limit;
    rows = rows.slice(0, limit);
    newer = Boolean(anchor);
  }
  if (rows.length === 0) return { events: [], newer: null, older: null };
  return { events: rows, newer: newer ? rows[0].id : null, older: older ? rows[rows.length - 1].id : null };
}

export type TagCount = { value: string; count: number };
export type TagBreakdown = { key: string; total: number; values: TagCount[] };

/**
 * How many of a group's latest stored events its tag breakdown reads. A group's events are spread
 * over its days among every other group's, so each one read is a heap page of its own: 5,000 made the
 * issue page's largest read (docs/benchmarks.md, "Dashboard pages at 10M events"). A share over
 * 1,000 events has a sampling error of about ±3 points, and the page says how many it read (docs/api.md).
 */
export const TAG_SAMPLE = 1000;

/**
 * Top values per tag over a group's latest stored events (up to `sample` rows, occurrences weighted
 * by each row's count): place, game version, environment, server (job id), tags and every top-level
 * `context` key with a scalar value.
 */
export async function groupTagBreakdown(sql: Sql, projectId: string, group: GroupRef, sample = TAG_SAMPLE, top = 5): Promise<{ sampled: number; tags: TagBreakdown[] }> {
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
