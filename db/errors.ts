import type { Sql } from "./client.js";
import type { PendingQuery, Row } from "postgres";
import { searchByMessage, type SearchReadOptions } from "./event-messages.js";

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
  /**
   * client: client-only groups (every event tagged `origin:client`); server: the rest, a mixed
   * group included (one event the server raised makes a group server-origin, docs/api.md)
   */
  origin?: "client" | "server";
  /** groups created at or before this time (a bulk action confirmed for a counted set) */
  createdBefore?: Date;
  /** groups assigned to this user, or (null) to nobody */
  assignee?: string | null;
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
  g.snooze_count, g.snooze_users, g.grouping_version, g.merged_into, g.title, g.assignee_id, g.client_only`;

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
  /** a named grouping rule's title for its issue; null: the title is the message's template */
  title: string | null;
  /** the member the issue is assigned to, if any */
  assignee_id: string | null;
  /** every event was reported by a game client (tagged `origin:client`): its text may be made up */
  client_only: boolean;
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
    ${f.origin ? sql`and g.client_only = ${f.origin === "client"}` : sql``}
    ${f.createdBefore ? sql`and g.created_at <= ${f.createdBefore}` : sql``}
    ${f.assignee === undefined ? sql`` : f.assignee === null ? sql`and g.assignee_id is null` : sql`and g.assignee_id = ${f.assignee}`}`;
}

/** A numeric search also names a player by user id, exactly. */
const searchedUserId = (search: string) => (/^\d{1,18}$/.test(search.trim()) ? search.trim() : null);

/**
 * The groups a search finds other than by their own texts: a stored event's text under the group it
 * was written for (db/event-messages.ts), or a player whose latest name holds the term (or whose user
 * id it is, for a numeric search), through group_users. Ids of groups as stored, merged members included.
 */
const groupsByStoredTextOrPlayer = (sql: Sql, projectId: string, p: string, userId: string | null) => sql`
  select t.group_id from event_messages t
  where t.project_id = ${projectId} and t.message ilike ${p} and t.stored_count > 0
  union
  select gu.group_id from group_users gu
  where gu.project_id = ${projectId} and gu.user_id in (
    select pu.user_id from project_users pu where pu.project_id = ${projectId} and pu.player_name ilike ${p}
    ${userId ? sql`union all select ${userId}::bigint` : sql``}
  )`;

/**
 * The issues a search finds: one whose message, culprit or a stack frame (script path and function
 * name: error_groups.frames, app/ingest/frames.server.ts) holds it (trigram indexes), and, through one
 * list of ids computed once, one a stored event of which holds it in its message (the stored events'
 * texts, each under the group it was written for: db/event-messages.ts), one a matching player had
 * (any part of their latest name, or their user id for a numeric search; through group_users), and one
 * holding a merged group whose message, culprit or frames do. The planner answers them as one bitmap
 * (message, culprit and frames indexes, primary key), so each matching issue is read from the heap once, as
 * with the message alone.
 */
function searchWhere(sql: Sql, projectId: string, search: string) {
  const p = likePattern(search);
  const userId = searchedUserId(search);
  return sql`and (g.message ilike ${p} or g.culprit ilike ${p} or g.frames ilike ${p} or g.id = any(array(
    select coalesce(m.merged_into, m.id) from error_groups m
    where m.project_id = ${projectId} and m.id in (
      ${groupsByStoredTextOrPlayer(sql, projectId, p, userId)}
    )
    union
    select h.merged_into from error_groups h
    where h.project_id = ${projectId} and h.merged_into is not null and (h.message ilike ${p} or h.culprit ilike ${p} or h.frames ilike ${p})
  )))`;
}

/**
 * A list's total counts its matches exactly up to TOTAL_CAP; past that it answers TOTAL_CAP and says
 * the figure is a floor (`totalExact: false`; the API's `total_exact`, the dashboard's "10,000+"), as
 * counting every match of a common term among millions of rows costs more than the page itself.
 * Counts that are not a list's total (occurrences, players, stats, a bulk action's count) stay exact.
 */
export const TOTAL_CAP = 10_000;

/** A list's page with its total (see TOTAL_CAP). */
export type ListTotal = { total: number; totalExact: boolean };

/** A count of matches as a list answers it: exact up to TOTAL_CAP, else TOTAL_CAP and not exact. */
export const cappedTotal = (matches: number): ListTotal => ({ total: Math.min(matches, TOTAL_CAP), totalExact: matches <= TOTAL_CAP });

/**
 * The count of a select's rows, reading at most TOTAL_CAP + 1 of them (cappedTotal makes it a list's
 * total). `rows` is ordered as its list's page is, by the index that page reads: without an order, a
 * prepared statement's generic plan (which assumes a project holds its average share of the table)
 * takes the limit for a reason to scan the whole table, every project's rows, from its start.
 */
export const countUpTo = (sql: Sql, rows: PendingQuery<Row[]>) =>
  sql<{ n: string }[]>`select count(*)::bigint as n from (${rows} limit ${TOTAL_CAP + 1}) capped`.then(([r]) => Number(r.n));

export async function countGroups(sql: Sql, projectId: string, f: GroupMatch): Promise<number> {
  const merges = f.environment ? await holdsMerges(sql, projectId) : false;
  const [{ total }] = await sql<{ total: number }[]>`select count(*)::bigint as total from error_groups g where ${groupWhere(sql, projectId, f, merges)}`;
  return Number(total);
}

/** The columns of a raw event as every read answers it (over `events e`). */
export const EVENT_COLUMNS = (sql: Sql) => sql`
  e.id::text as id, e.group_id, e.message, e.level, e.stack_trace, e.user_id, e.player_name, e.trace_id, e.job_id,
  e.place_id, e.game_version, e.environment, e.context, e.tags, e.count, e."timestamp", e.received_at, e.event_id`;

/** A page of one group's events also carries each event's breadcrumbs (lists and share views do not). */
export const PAGE_COLUMNS = (sql: Sql) => sql`${EVENT_COLUMNS(sql)}, e.breadcrumbs`;

/** `%` and `_` in a search are literal characters, not patterns. */
export const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

export type GroupSearchOptions = {
  /** tests: answer a search from error_groups (searchGroups) even where group_search could (searchNarrow) */
  way?: "groups";
};

export async function listGroups(sql: Sql, projectId: string, f: GroupFilter, opts: GroupSearchOptions = {}): Promise<{ data: Row[] } & ListTotal> {
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
  if (f.search && opts.way !== "groups" && searchesNarrow(f)) return searchNarrow(sql, projectId, f);
  if (f.search) return searchGroups(sql, projectId, f, { where, env, envColumns, key, direction });
  // Unsearched, the two statements run side by side and the page's scan may go parallel: one pass
  // through a materialized list of every group of the project measured slower (it spills to disk).
  // The count reads the project's groups through its index and counts them all: a capped count
  // (countUpTo) has no index in the page's order to stop early on, and the page reads them all anyway.
  const [data, [{ n }]] = await Promise.all([
    sql`select ${groupColumns(sql)} ${envColumns} from error_groups g ${env} where ${where} order by ${key} ${direction}, g.id desc limit ${f.limit} offset ${f.offset}`,
    sql<{ n: string }[]>`select count(*)::bigint as n from error_groups g where ${where}`,
  ]);
  const matches = Number(n);
  return { data, ...cappedTotal(matches) };
}

type GroupQueryParts = { where: Fragment; env: Fragment; envColumns: Fragment; key: Fragment; direction: Fragment };
type Fragment = PendingQuery<Row[]>;

/**
 * A searched group list in one statement. The trigram index finds the candidates cheaply, but every
 * one of them is read from the heap and its message rechecked with ILIKE, which is most of the cost;
 * the matches (id and sort key only) are kept once and both the total and the page are taken from
 * them, so the recheck runs once instead of once for the page and once for the count. The total
 * counts at most TOTAL_CAP + 1 of them (cappedTotal). The one-row count left-joined to the page keeps
 * the total when the offset is past the last match.
 */
async function searchGroups(sql: Sql, projectId: string, f: GroupFilter, q: GroupQueryParts): Promise<{ data: Row[] } & ListTotal> {
  const rows = await sql<({ matches: string } & Record<string, unknown>)[]>`
    with matched as materialized (
      select g.id, ${q.key} as sort_key from error_groups g ${q.env} where ${q.where}
    ), page as (
      select id, sort_key from matched order by sort_key ${q.direction}, id desc limit ${f.limit} offset ${f.offset}
    )
    select c.matches, ${groupColumns(sql)} ${q.envColumns}
    from (select count(*)::bigint as matches from (select 1 from matched limit ${TOTAL_CAP + 1}) m) c
    left join page p on true
    left join error_groups g on g.project_id = ${projectId} and g.id = p.id
    ${q.env}
    order by p.sort_key ${q.direction}, p.id desc`;
  const matches = Number(rows[0]?.matches ?? 0);
  const data = rows.filter((r) => r.id !== null).map(({ matches: _m, ...group }) => group);
  return { data, ...cappedTotal(matches) };
}

/** The separator of a group's texts in group_search.search_text (db/migrations/135_group_search.sql). */
const TEXT_SEPARATOR = "\u001f";

/**
 * Whether a grouped search can be answered from group_search (searchNarrow): sorted by last or first
 * seen, filtered by nothing but status and level, and without the texts' separator. Every other
 * search reads error_groups itself (searchGroups).
 */
function searchesNarrow(f: GroupFilter): boolean {
  return (
    (f.sort === "last_seen" || f.sort === "first_seen") &&
    !f.search!.includes(TEXT_SEPARATOR) &&
    !f.environment && !f.regressed && !f.newInVersion && !f.origin && !f.createdBefore && f.assignee === undefined
  );
}

/**
 * The deepest page (limit + offset) a dense search finds by walking the issues in the page's order,
 * and the most issues that walk reads before the search reads every match instead. Past TOTAL_CAP
 * own matches, a term is in at least one issue of ten in a project of 100,000: 4,000 issues hold the
 * page's 500 at one in eight, and the walk costs about 4 buffers an issue.
 */
const WALK_REACH = 500;
const WALK_ROWS = 4_000;

/**
 * A grouped search through group_search (db/migrations/135_group_search.sql), the narrow copy of each
 * group's texts, status, level and sort keys, matching what searchWhere matches:
 *  - an issue whose own message, culprit or frames hold the term (one LIKE over the lowered texts:
 *    `lower(x) like lower(p)` is what ILIKE computes in this multibyte database);
 *  - through one list of ids computed once, the issue a matching member is merged into, and an issue
 *    a stored event of which (event_messages) or a matching player (group_users) belongs to.
 *
 * The texts matching the term (`texts`, through the trigram index) are read as far as they are needed.
 * Their issues are counted first, up to TOTAL_CAP + 1 (`own`). Up to TOTAL_CAP, or for a page deeper
 * than WALK_REACH, every match is read ("all"): the matches (id and sort key) are kept once, the total
 * counts at most TOTAL_CAP + 1 of them, and the page comes from the newest keys (below).
 *
 * Past TOTAL_CAP the total is a floor whatever else matches, and the page is found by walking the
 * issues in its order ("walk": by last seen, group_search_order's minute; by first seen,
 * group_search's own index: db/migrations/138_group_search_order.sql), each checked as "all" matches
 * it, until limit + offset of them are found: a few hundred issues for a term in one issue of four,
 * where "all" reads every one of its matches. A walk that reads WALK_ROWS issues without finding as
 * many gives way to "all" in the same statement (each part runs only when its condition holds).
 *
 * Either way, the page's key here is exact by first seen, and by last seen the minute the issue was
 * last seen in: the matches down to the key of the (limit + offset)-th one are the only ones that can
 * be on the page (every other one has an earlier key than at least limit + offset matches), and only
 * those are read from error_groups, where their exact key orders them.
 */
async function searchNarrow(sql: Sql, projectId: string, f: GroupFilter): Promise<{ data: Row[] } & ListTotal> {
  const p = likePattern(f.search!);
  const userId = searchedUserId(f.search!);
  const filters = sql`
    ${f.status ? sql`and s.status = ${f.status}` : sql``}
    ${f.level ? sql`and s.level = ${f.level}` : sql``}`;
  const reach = f.limit + f.offset;
  const pageKey = f.sort === "first_seen" ? sql`g.first_seen` : sql`g.last_seen`;
  const pageOrder = f.sort === "first_seen" ? sql`p.first_seen` : sql`p.last_seen`;
  // one error_groups row per candidate, by its key (offset 0 keeps the lookup per candidate)
  const page = (candidates: Fragment) => sql`
    select g.* from ${candidates} c
    cross join lateral (select ${groupColumns(sql)} from error_groups g where g.project_id = ${projectId} and g.id = c.id offset 0) g
    order by ${pageKey} desc, g.id desc limit ${f.limit} offset ${f.offset}`;
  const key = f.sort === "first_seen" ? sql`first_seen` : sql`seen_minute`;
  const shallow = reach <= WALK_REACH;
  // the walk's issues in the page's order
  const keys = f.sort === "first_seen" ? sql`group_search` : sql`group_search_order`;
  // whether the issue `id` is a match: not a member, through the filters, and found by its texts, a
  // stored text or a player, or a member found either way
  const hit = (id: Fragment) => sql`
    select 1 from group_search s
    where s.project_id = ${projectId} and s.group_id = ${id} and s.merged_into is null ${filters}
      and (s.search_text like lower(${p}) or s.group_id in (select group_id from found) or s.group_id in (select id from members))
    offset 0`;
  const walk = sql`
    , members as materialized (
      -- the issues a merged member of which holds the term or was found by a stored text or a player
      select e.merged_into as id from error_groups e
      cross join lateral (select x.search_text from group_search x where x.project_id = ${projectId} and x.group_id = e.id offset 0) x
      where e.project_id = ${projectId} and e.merged_into is not null
        and (x.search_text like lower(${p}) or e.id in (select group_id from found))
    ), walk as materialized (
      select w.group_id, w.key from (
        select k.group_id, k.${key} as key from ${keys} k
        where k.project_id = ${projectId} and (select n from own) > ${TOTAL_CAP}
        order by k.${key} desc, k.group_id desc limit ${WALK_ROWS}
      ) w
      cross join lateral (${hit(sql`w.group_id`)}) h
      order by w.key desc, w.group_id desc limit ${reach}
    ), cut as materialized (
      select count(*) = ${reach} as found, min(key) as key from walk
    ), walk_candidates as materialized (
      -- the walked matches, and every one at the key of the last of them (the walk stopped among them)
      select group_id as id from walk where key > (select key from cut)
      union all
      select k.group_id from ${keys} k cross join lateral (${hit(sql`k.group_id`)}) h
      where k.project_id = ${projectId} and k.${key} = (select key from cut)
    ), walk_page as (${page(sql`walk_candidates`)})`;
  const filterKey = `${f.status ?? ""}|${f.level ?? ""}`;
  const hint = `${projectId}\u0000${f.sort}\u0000${filterKey}\u0000${f.search}`;
  const seen = shallow ? searchHints.get(hint) : undefined;
  // A term this process last found with at most TOTAL_CAP own matches is searched without the walk
  // and the count of its own matches, as a page deeper than WALK_REACH is: planning is most of such a
  // search's cost, and this statement is planned in about a third of the time. Its answer is exact
  // whatever the term's matches are now; past TOTAL_CAP, the hint goes and the next search counts again.
  const walks = shallow && seen !== "sparse";
  const walked = walks ? sql`(select found from cut)` : sql`false`;
  // Walking, the own matches are counted only when the project's version (db/migrations/142_group_search_dense.sql)
  // is not the one this term was remembered at as having more than TOTAL_CAP of them. The version is read
  // in the same statement as the count, so a change committed after it bumps past what is remembered.
  const memo = sql`
    from (select coalesce((select version from group_search_version where project_id = ${projectId}), 0) as version) v
    left join group_search_dense d on d.project_id = ${projectId} and d.pattern = lower(${p}) and d.filters = ${filterKey} and d.version = v.version`;
  const ownRemembered = sql`
    select v.version, d.version is not null as remembered,
      case when d.version is not null then ${TOTAL_CAP + 1}::bigint
      else (select count(*)::bigint from (select 1 from texts s where s.merged_into is null ${filters} limit ${TOTAL_CAP + 1}) m) end as n
    ${memo}`;
  const found = sql`found as materialized (${groupsByStoredTextOrPlayer(sql, projectId, p, userId)})`;
  // A term remembered as dense (as this process last saw it) is first searched by the walk alone: a
  // statement of half the size, planned in half the time. Its own matches are the remembered ones or
  // none, so a term no longer remembered, or a walk that does not find the page, reads the page as
  // any other term does, in the statement below.
  if (shallow && seen === "dense") {
    const rows = await sql<Record<string, unknown>[]>`
      with own as materialized (select ${TOTAL_CAP + 1}::bigint as n ${memo} where d.version is not null), ${found}
      ${walk}
      select p.*, (select found from cut) as walked
      from (select 1) one
      left join (select * from walk_page where (select found from cut)) p on true
      order by ${pageOrder} desc, p.id desc`;
    if (rows[0]?.walked === true) return { data: groupsOf(rows, 1), ...cappedTotal(TOTAL_CAP + 1) };
    searchHints.delete(hint);
  }
  const rows = await sql<({ matches: string } & Record<string, unknown>)[]>`
    with texts as materialized (
      select s.group_id, s.merged_into, s.status, s.level, s.${key} as key from group_search s
      where s.project_id = ${projectId} and s.search_text like lower(${p})
    ), own as materialized (
      ${walks ? ownRemembered : sql`select count(*)::bigint as n from (select 1 from texts s where s.merged_into is null ${filters} limit ${TOTAL_CAP + 1}) m`}
    ), ${found}, others as (
      -- groups a stored event's text or a player finds, but not by their own texts (those are in texts):
      -- a stored text is mostly its group's message, so this leaves the few that can add an issue (the
      -- list of matched texts is hashed only when a stored text or a player matches at all)
      select o.group_id from found o where o.group_id not in (select group_id from texts)
    ), matched as materialized (
      select s.group_id as id, s.key from texts s where s.merged_into is null ${filters}
      union all
      -- the rest: issues whose own texts do not hold the term (so none is listed twice)
      select s.group_id, s.${key} from group_search s
      where s.project_id = ${projectId} and s.merged_into is null ${filters} and s.search_text not like lower(${p}) and s.group_id = any(array(
        select m.merged_into from texts m where m.merged_into is not null
        union
        select coalesce(x.merged_into, x.group_id) from others o
        cross join lateral (select x.merged_into, x.group_id from group_search x where x.project_id = ${projectId} and x.group_id = o.group_id offset 0) x
      ))
    ), all_candidates as materialized (
      select id from matched
      where key >= coalesce((select key from matched order by key desc offset ${reach - 1} limit 1), '-infinity')
    ), all_page as (${page(sql`all_candidates`)})
    ${walks ? walk : sql``}
    select p.*, case when ${walked} then (select n from own) else (select count(*) from (select 1 from matched limit ${TOTAL_CAP + 1}) m) end as matches,
      ${walks ? sql`o.version as own_version, o.remembered, o.n as own, ${walked} as walked` : sql`null as own_version, null as remembered, null as own, false as walked`}
    from (select 1) one
    ${walks ? sql`cross join own o` : sql``}
    left join (
      select * from all_page where not ${walked}
      ${walks ? sql`union all select * from walk_page where ${walked}` : sql``}
    ) p on true
    order by ${pageOrder} desc, p.id desc`;
  const head = rows[0];
  const matches = Number(head?.matches ?? 0);
  if (walks && head) rememberHint(hint, head.walked === true ? "dense" : Number(head.own) <= TOTAL_CAP ? "sparse" : undefined);
  else if (seen === "sparse" && matches > TOTAL_CAP) searchHints.delete(hint);
  if (head && head.remembered === false && Number(head.own) > TOTAL_CAP) await rememberDense(sql, projectId, p, filterKey, Number(head.own_version));
  return { data: groupsOf(rows, 5), ...cappedTotal(matches) };
}

/**
 * The issues of a search's rows: each row is an issue's columns followed by `extra` columns about the
 * whole answer, dropped here last first. A property deleted in the reverse of the order it was added
 * in leaves the row as fast to serialize as one that never had it; copying the rest of a row into a
 * new object (a rest pattern) cost about as much as reading it.
 */
function groupsOf(rows: Record<string, unknown>[], extra: number): Row[] {
  const data: Row[] = [];
  if (rows.length === 0) return data;
  const drop = Object.keys(rows[0]).slice(-extra).reverse();
  for (const r of rows) {
    if (r.id === null) continue;
    for (const k of drop) delete r[k];
    data.push(r as Row);
  }
  return data;
}

/**
 * What this process last found of a term (searchNarrow), as hints: "dense" when its page was found by
 * walking (more than TOTAL_CAP own matches), "sparse" when it had at most TOTAL_CAP own matches. At most
 * SEARCH_HINTS of them. A hint only chooses which statement runs first; each answers exactly.
 */
const searchHints = new Map<string, "dense" | "sparse">();
const SEARCH_HINTS = 1_000;
function rememberHint(hint: string, seen: "dense" | "sparse" | undefined) {
  if (seen === undefined) {
    searchHints.delete(hint);
    return;
  }
  if (searchHints.size >= SEARCH_HINTS && !searchHints.has(hint)) searchHints.clear();
  searchHints.set(hint, seen);
}

/**
 * Remembers that `pattern` (through `filterKey`) had more than TOTAL_CAP own matches at the project's
 * `version` (db/migrations/142_group_search_dense.sql). A newer version already remembered stays. On a
 * read-only replica, or once the project is gone, nothing is remembered: the next search counts again.
 */
async function rememberDense(sql: Sql, projectId: string, pattern: string, filterKey: string, version: number) {
  try {
    await sql`
      insert into group_search_dense as d (project_id, pattern, filters, version) values (${projectId}, lower(${pattern}), ${filterKey}, ${version})
      on conflict (project_id, pattern, filters) do update set version = excluded.version where d.version < excluded.version`;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // 25006: a read-only transaction (a replica); 23503: the project was deleted meanwhile
    if (code !== "25006" && code !== "23503") throw err;
  }
}

/**
 * How many of the newest raw events (matching the other filters) a raw `search` with other filters
 * reads (alone, it reads every stored event through their texts: db/event-messages.ts). The texts do
 * not know the events' levels, environments or players, so a filtered search matches the message
 * event by event; bounded, it costs the same at a million rows as at a hundred thousand. `total` then
 * counts matches among those events (up to TOTAL_CAP), and `search_window_full` says that older events
 * were not searched.
 */
export const RAW_SEARCH_WINDOW = 100_000;

export type EventPage = { data: Record<string, unknown>[]; searchWindowFull?: true } & ListTotal;

export async function listEvents(
  sql: Sql,
  projectId: string,
  f: EventFilter,
  opts: { searchWindow?: number; searchRead?: SearchReadOptions } = {},
): Promise<EventPage> {
  const filtered = Boolean(f.level || f.search || f.environment || f.userId || f.placeId);
  const where = sql`
    e.project_id = ${projectId}
    ${f.level ? sql`and e.level = ${f.level}` : sql``}
    ${f.environment ? sql`and e.environment = ${f.environment}` : sql``}
    ${f.userId ? sql`and e.user_id = ${f.userId}` : sql``}
    ${f.placeId ? sql`and e.place_id = ${f.placeId}` : sql``}`;
  // a search alone reads every stored event through their distinct texts; with other filters, a window
  if (f.search && !f.level && !f.environment && !f.userId && !f.placeId) {
    const found = await searchByMessage(sql, projectId, likePattern(f.search), f, EVENT_COLUMNS(sql), opts.searchRead);
    return { data: found.data, ...cappedTotal(found.total) };
  }
  if (f.search) return searchEvents(sql, where, f, opts.searchWindow ?? RAW_SEARCH_WINDOW);
  // Unfiltered, the total is the sum of the per-group stored-row counters kept at ingest and
  // retention, so the first page stays as fast at a million rows as at ten thousand; filtered, the
  // matches are counted up to TOTAL_CAP + 1.
  const [data, matches] = await Promise.all([
    sql`select ${EVENT_COLUMNS(sql)} from events e where ${where} order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`,
    filtered
      ? countUpTo(sql, sql`select 1 from events e where ${where} order by e."timestamp" desc, e.id desc`)
      : sql<{ n: string }[]>`select coalesce(sum(stored_count), 0)::bigint as n from error_groups where project_id = ${projectId}`.then(([r]) => Number(r.n)),
  ]);
  return { data, ...cappedTotal(matches) };
}

/**
 * Raw search over the newest `window` events that pass the other filters (see RAW_SEARCH_WINDOW), as
 * two statements side by side: the window's matches counted in one streaming pass (no row of it is
 * kept), and the page read from the newest end of the window, which stops once it has the page. A
 * single statement keeping the window's rows for both spilled them to a temporary file at 100,000.
 * lower() and LIKE match as ILIKE does (in a multibyte database ILIKE lowers both sides first) at
 * about half its cost per row.
 */
async function searchEvents(sql: Sql, where: PendingQuery<Row[]>, f: EventFilter, window: number): Promise<EventPage> {
  const pattern = likePattern(f.search!);
  const recent = (columns: PendingQuery<Row[]>) => sql`
    select ${columns} from events e where ${where} order by e."timestamp" desc, e.id desc limit ${window}`;
  const [[counts], data] = await Promise.all([
    sql<{ total: string; window_rows: string }[]>`
      select count(*) filter (where lower(r.message) like lower(${pattern})) as total, count(*) as window_rows
      from (${recent(sql`e.message`)}) r`,
    sql`
      select ${EVENT_COLUMNS(sql)} from (${recent(sql`e.*`)}) e
      where lower(e.message) like lower(${pattern})
      order by e."timestamp" desc, e.id desc limit ${f.limit} offset ${f.offset}`,
  ]);
  const windowFull = Number(counts.window_rows) >= window;
  return { data, ...cappedTotal(Number(counts.total)), ...(windowFull ? { searchWindowFull: true as const } : {}) };
}

export async function getGroup(sql: Sql, projectId: string, groupId: string) {
  const [g] = await sql<(Row & { id: string; merged_into: string | null })[]>`select ${groupColumns(sql)} from error_groups g where g.project_id = ${projectId} and g.id = ${groupId}`;
  return g;
}
