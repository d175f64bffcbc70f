import type { Sql } from "./client.js";
import { mergeLockKey } from "./events.js";

export type GroupStatus = "open" | "resolved" | "ignored";

/**
 * Sets the status of the project's groups among `ids`; resolving stamps resolved_at (kept when the
 * group already was resolved), any other status clears it. Ids outside the project are skipped.
 * Rows are locked in id order, so two bulk updates cannot deadlock each other.
 */
export async function setGroupStatus(sql: Sql, projectId: string, ids: string[], status: GroupStatus) {
  if (ids.length === 0) return [];
  return sql<{ id: string; status: GroupStatus; resolved_at: Date | null }[]>`
    update error_groups g set
      status = ${status},
      resolved_at = case when ${status} = 'resolved' then (case when g.status = 'resolved' then g.resolved_at else now() end) end
    from (select id from error_groups where project_id = ${projectId} and id = any(${ids}::uuid[]) order by id for update) s
    where g.project_id = ${projectId} and g.id = s.id
    returning g.id, g.status, g.resolved_at`;
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
    const members = await tx<{ id: string }[]>`
      select id from error_groups where project_id = ${projectId} and merged_into = ${groupId}`;
    const gone = await tx`delete from error_groups where project_id = ${projectId} and id = ${groupId} and merged_into is null returning id`;
    if (gone.length === 0) return false;
    // member rows went through their foreign key; their own distinct users go here
    if (members.length > 0) {
      await tx`delete from group_users where project_id = ${projectId} and group_id = any(${members.map((m) => m.id)}::uuid[])`;
    }
    const traced = await tx<{ trace_id: string; n: number }[]>`
      with del as (
        delete from events where project_id = ${projectId} and group_id = ${groupId} returning trace_id
      )
      select trace_id, count(*)::int as n from del where trace_id is not null group by trace_id order by trace_id`;
    await tx`delete from group_users where project_id = ${projectId} and group_id = ${groupId}`;
    await tx`delete from rollup_minute where project_id = ${projectId} and group_id = ${groupId}`;
    await tx`delete from rollup_hour where project_id = ${projectId} and group_id = ${groupId}`;
    if (traced.length > 0) {
      await tx`select 1 from traces where project_id = ${projectId} and trace_id = any(${traced.map((t) => t.trace_id)}::uuid[])
               order by trace_id for update`;
      await tx`
        update traces t set
          group_ids = array_remove(t.group_ids, ${groupId}::uuid),
          event_count = greatest(t.event_count - x.n, 0)
        from json_to_recordset(${tx.json(traced as never)}::json) as x(trace_id uuid, n int)
        where t.project_id = ${projectId} and t.trace_id = x.trace_id`;
    }
    // traces whose only group this was, including those whose events retention already removed
    await tx`delete from traces where project_id = ${projectId} and group_ids = array[${groupId}::uuid]`;
    await tx`delete from traces where project_id = ${projectId} and cardinality(group_ids) = 0`;
    return true;
  });
}
