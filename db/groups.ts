import { asJson, type Sql, type TxSql } from "./client.js";
import { ROLLUP_TABLES } from "./stats.js";
import { groupWhere, type GroupMatch } from "./errors.js";
import { mergeLockKey } from "./events.js";
import { applyPendingOf } from "./counter-deltas.js";
import { NOBODY, type By } from "./activity.js";

export type GroupStatus = "open" | "resolved" | "ignored";

/** An ignore that ends by itself: at a time, after N more occurrences, or after N more players. */
export type Snooze = { until?: Date; occurrences?: number; users?: number };

/**
 * Sets the status of the project's groups among `ids`; resolving stamps resolved_at (kept when the
 * group already was resolved), any other status clears it. Ids outside the project, and groups merged
 * into another, are skipped.
 * Rows are locked in fingerprint order, the ingest write's order, so a bulk change over many groups
 * cannot deadlock with ingest or with another bulk change.
 */
export async function setGroupStatus(sql: Sql, projectId: string, ids: string[], status: GroupStatus, snooze?: Snooze, by: By = NOBODY) {
  if (ids.length === 0) return [];
  // a group merged into another keeps the status it had; the issue it is in has the live one
  return updateStatus(sql, projectId, sql`g.project_id = ${projectId} and g.id = any(${ids}::uuid[]) and g.merged_into is null`, status, snooze, by);
}

/** The same change for every group matching a filter; answers the changed rows. */
export async function setStatusWhere(sql: Sql, projectId: string, match: GroupMatch, status: GroupStatus, snooze?: Snooze, by: By = NOBODY) {
  return updateStatus(sql, projectId, groupWhere(sql, projectId, match), status, snooze, by);
}

/**
 * A status change clears any snooze; an ignore with a snooze stores its end as targets on the
 * group's own counters (count + N, user_count + N), which the ingest write (occurrences) and the
 * deferred counters (players, db/counter-deltas.ts) compare as they count. A snooze on players
 * first applies the project's pending counters, so players seen before it do not count toward it.
 * Each group whose status changed (or that got a new snooze) gets its timeline entry in the same
 * statement: who, from and to, and for a resolve the version the issue was last seen in.
 */
async function updateStatus(sql: Sql, projectId: string, where: ReturnType<typeof groupWhere>, status: GroupStatus, snooze: Snooze | undefined, by: By) {
  const s = status === "ignored" ? snooze ?? {} : {};
  const snoozed = s.until || s.occurrences || s.users
    ? { ...(s.until ? { until: s.until.toISOString() } : {}), ...(s.occurrences ? { occurrences: s.occurrences } : {}), ...(s.users ? { users: s.users } : {}) }
    : null;
  const details = { ...(by.via ? { via: by.via } : {}), ...(snoozed ? { snooze: snoozed } : {}) };
  if (s.users == null) return update(sql);
  return sql.begin(async (tx) => {
    await applyPendingOf(tx, projectId);
    return update(tx);
  });
  function update(sql: Sql | TxSql) {
    return sql<{ id: string; status: GroupStatus; resolved_at: Date | null }[]>`
    with s as (
      select g.id, g.status as previous from error_groups g where ${where} order by g.fingerprint for update
    ), u as (
      update error_groups t set
        status = ${status},
        resolved_at = case when ${status} = 'resolved' then (case when t.status = 'resolved' then t.resolved_at else now() end) end,
        snooze_until = ${s.until ?? null}::timestamptz,
        snooze_count = t.count + ${s.occurrences ?? null}::bigint,
        snooze_users = t.user_count + ${s.users ?? null}::bigint
      from s
      where t.project_id = ${projectId} and t.id = s.id
      returning t.id, t.status, t.resolved_at, t.last_version, s.previous
    ), a as (
      insert into issue_activity (project_id, group_id, actor_id, kind, details)
      select ${projectId}, u.id, ${by.actorId}::uuid, 'status',
        ${asJson(sql as Sql, details)}::jsonb || jsonb_build_object('from', u.previous, 'to', u.status,
          'version', case when u.status = 'resolved' then u.last_version end)
      from u where u.previous is distinct from u.status or ${snoozed !== null}
    )
    select id, status, resolved_at from u`;
  }
}

/** Reopens every ignored group whose snooze time has passed (the time end needs no new event). */
export async function reopenExpiredSnoozes(sql: Sql): Promise<number> {
  const rows = await sql`
    with u as (
      update error_groups t set status = 'open', snooze_until = null, snooze_count = null, snooze_users = null
      from (select project_id, id from error_groups where snooze_until <= now() and status = 'ignored'
            order by project_id, fingerprint for update) s
      where t.project_id = s.project_id and t.id = s.id
      returning t.project_id, t.id
    ), a as (
      insert into issue_activity (project_id, group_id, actor_id, kind, details)
      select project_id, id, null, 'status', '{"from": "ignored", "to": "open", "via": "snooze_ended"}'::jsonb from u
    )
    select id from u`;
  return rows.length;
}

/**
 * Deletes a group and, in the same transaction, everything the hot tables hold for it (they have no
 * foreign keys): its events, distinct users and rollups. Traces that also saw other groups keep
 * those: the group leaves their group_ids and its events leave their event_count; a trace left with
 * no group is deleted. Share links go through their foreign key. project_users is left alone (it
 * only remembers a user's latest occurrence, which ages out of every window).
 * The project's merge lock is held exclusively, so no ingest is writing meanwhile and no event of
 * the group can land after the delete has read the events table. Groups merged into it go with it.
 */
export async function deleteGroup(sql: Sql, projectId: string, groupId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtextextended(${mergeLockKey(projectId)}, 0))`;
    // pending counters of the group would come back after the delete
    await applyPendingOf(tx, projectId);
    const members = await tx<{ id: string }[]>`
      select id from error_groups where project_id = ${projectId} and merged_into = ${groupId}`;
    const gone = await tx`delete from error_groups where project_id = ${projectId} and id = ${groupId} and merged_into is null returning id`;
    if (gone.length === 0) return false;
    // member rows went through their foreign key; their own distinct users, environments and versions go here
    if (members.length > 0) {
      const ids = members.map((m) => m.id);
      await tx`delete from group_users where project_id = ${projectId} and group_id = any(${ids}::uuid[])`;
      await tx`delete from group_environments where project_id = ${projectId} and group_id = any(${ids}::uuid[])`;
      await tx`delete from group_versions where project_id = ${projectId} and group_id = any(${ids}::uuid[])`;
    }
    const traced = await tx<{ trace_id: string; n: number }[]>`
      with del as (
        delete from events where project_id = ${projectId} and group_id = ${groupId} returning trace_id
      )
      select trace_id, count(*)::int as n from del where trace_id is not null group by trace_id order by trace_id`;
    // the texts of its events and its members' (each event's own group is one of them)
    await tx`delete from event_messages where project_id = ${projectId} and group_id = any(${[groupId, ...members.map((m) => m.id)]}::uuid[])`;
    await tx`delete from group_users where project_id = ${projectId} and group_id = ${groupId}`;
    await tx`delete from group_environments where project_id = ${projectId} and group_id = ${groupId}`;
    await tx`delete from group_versions where project_id = ${projectId} and group_id = ${groupId}`;
    for (const t of ROLLUP_TABLES) await tx`delete from ${tx(t)} where project_id = ${projectId} and group_id = ${groupId}`;
    if (traced.length > 0) {
      await tx`select 1 from traces where project_id = ${projectId} and trace_id = any(${traced.map((t) => t.trace_id)}::uuid[])
               order by trace_id for update`;
      await tx`
        update traces t set
          group_ids = array_remove(t.group_ids, ${groupId}::uuid),
          event_count = greatest(t.event_count - x.n, 0)
        from json_to_recordset(${asJson(tx, traced)}::json) as x(trace_id uuid, n int)
        where t.project_id = ${projectId} and t.trace_id = x.trace_id`;
    }
    // traces whose only group this was, including those whose events retention already removed
    await tx`delete from traces where project_id = ${projectId} and group_ids = array[${groupId}::uuid]`;
    await tx`delete from traces where project_id = ${projectId} and cardinality(group_ids) = 0`;
    return true;
  });
}
