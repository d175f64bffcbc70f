import type { Sql } from "./client.js";
import { EVENT_COLUMNS, likePattern } from "./errors.js";
import { familyIds } from "./merge.js";

export type PlayerRow = { user_id: string; player_name: string | null; last_seen: Date; issues: string };

/**
 * Players who ran into errors, found by user id (exact) or by name (case-insensitive prefix of the
 * latest name seen, then substring), most recently affected first.
 */
export async function findPlayers(sql: Sql, projectId: string, query: string, limit = 50) {
  const q = query.trim();
  const id = /^\d{1,19}$/.test(q) && BigInt(q) <= 9223372036854775807n ? q : null;
  return sql<PlayerRow[]>`
    select pu.user_id::text, pu.player_name, pu.last_seen,
      -- issues, not member rows: a group merged into another counts as that issue (db/merge.ts)
      (select count(distinct coalesce(m.merged_into, gu.group_id)) from group_users gu
       left join error_groups m on m.project_id = gu.project_id and m.id = gu.group_id and m.merged_into is not null
       where gu.project_id = pu.project_id and gu.user_id = pu.user_id)::bigint as issues
    from project_users pu
    where pu.project_id = ${projectId}
      and (${q} = '' or pu.player_name ilike ${likePattern(q)} or pu.user_id = ${id}::bigint)
    order by (pu.user_id = ${id}::bigint) desc nulls last, (lower(pu.player_name) = lower(${q})) desc nulls last,
      pu.last_seen desc, pu.user_id desc
    limit ${limit}`;
}

export async function getPlayer(sql: Sql, projectId: string, userId: string) {
  const [p] = await sql<{ user_id: string; player_name: string | null; last_seen: Date }[]>`
    select user_id::text, player_name, last_seen from project_users where project_id = ${projectId} and user_id = ${userId}`;
  return p;
}

/** The groups a player ran into, most recent first (the group's last occurrence). */
export async function playerGroups(sql: Sql, projectId: string, userId: string, limit = 100) {
  return sql`
    select g.id, g.message, g.level, g.status, g.count, g.user_count, g.last_seen, g.first_seen, g.culprit, g.regressed_at
    from error_groups g
    where g.project_id = ${projectId} and g.merged_into is null and g.id in (
      -- a group merged into another is reached through that issue (db/merge.ts)
      select coalesce(x.merged_into, x.id) from group_users gu join error_groups x on x.project_id = gu.project_id and x.id = gu.group_id
      where gu.project_id = ${projectId} and gu.user_id = ${userId})
    order by g.last_seen desc, g.id desc limit ${limit}`;
}

/** The players a group affected (a merged issue: any of its members), most recently active first. */
export async function groupPlayers(sql: Sql, projectId: string, groupId: string, limit = 50) {
  return sql<{ user_id: string; player_name: string | null; last_seen: Date }[]>`
    select pu.user_id::text, pu.player_name, pu.last_seen
    from project_users pu
    where pu.project_id = ${projectId} and pu.user_id in (
      select gu.user_id from group_users gu where gu.project_id = ${projectId} and gu.group_id = any(${familyIds(sql, projectId, groupId)}))
    order by pu.last_seen desc, pu.user_id desc limit ${limit}`;
}

/**
 * A player's latest stored events, newest first: the page of the events list filtered to the
 * player, without the list's total, which a player's page does not show (counting up to 10,000 of a
 * busy player's events cost more than the page).
 */
export async function playerEvents(sql: Sql, projectId: string, userId: string, limit = 20) {
  return sql`
    select ${EVENT_COLUMNS(sql)} from events e
    where e.project_id = ${projectId} and e.user_id = ${userId}
    order by e."timestamp" desc, e.id desc limit ${limit}`;
}
