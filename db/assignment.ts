import type { Sql, TxSql } from "./client.js";
import { recordActivity, type By } from "./activity.js";

export type AssignResult = { ok: true; changed: { id: string; previous: string | null }[] } | { ok: false; reason: "not_member" };

/**
 * Assigns the project's visible groups among `ids` to `assigneeId` (null: unassigns). Groups merged
 * into another are skipped (the issue they are in has the assignee), so are groups already assigned
 * that way. In one transaction: the assignee's membership is locked (a concurrent removal waits, then
 * finds these issues and unassigns them), the rows change in fingerprint order (the order of every
 * other bulk change, so none deadlock), each change is written to the timeline, and an assignee other
 * than the actor gets an "Assigned to you" notice.
 */
export async function assignGroups(sql: Sql, projectId: string, ids: string[], assigneeId: string | null, by: By & { actorId: string }): Promise<AssignResult> {
  return sql.begin(async (tx) => {
    if (assigneeId !== null) {
      const [m] = await tx`select 1 from project_members where project_id = ${projectId} and user_id = ${assigneeId} for key share`;
      if (!m) return { ok: false, reason: "not_member" } as const;
    }
    const changed = await tx<{ id: string; previous: string | null }[]>`
      with s as (
        select g.id, g.assignee_id as previous from error_groups g
        where g.project_id = ${projectId} and g.id = any(${ids}::uuid[]) and g.merged_into is null
          and g.assignee_id is distinct from ${assigneeId}::uuid
        order by g.fingerprint for update
      )
      update error_groups t set assignee_id = ${assigneeId}::uuid from s
      where t.project_id = ${projectId} and t.id = s.id
      returning t.id, s.previous`;
    await recordActivity(tx, projectId, by, changed.map((c) => ({ groupId: c.id, kind: "assigned", details: { to: assigneeId, from: c.previous } })));
    if (assigneeId !== null && assigneeId !== by.actorId && changed.length > 0) {
      await tx`
        insert into assignment_notices (project_id, group_id, user_id, actor_id)
        select ${projectId}, x, ${assigneeId}, ${by.actorId} from unnest(${changed.map((c) => c.id)}::uuid[]) x`;
    }
    return { ok: true, changed } as const;
  });
}

/**
 * A member leaving: their issues are unassigned (each recorded on its timeline, by whoever removed
 * them) and their notices of the project go. Called inside the removal's transaction.
 */
export async function unassignMember(tx: TxSql, projectId: string, userId: string, actorId: string | null) {
  const freed = await tx<{ id: string }[]>`
    update error_groups t set assignee_id = null
    from (select id from error_groups where project_id = ${projectId} and assignee_id = ${userId} order by fingerprint for update) s
    where t.project_id = ${projectId} and t.id = s.id
    returning t.id`;
  await recordActivity(tx, projectId, { actorId, via: "member_removed" }, freed.map((f) => ({ groupId: f.id, kind: "assigned", details: { to: null, from: userId } })));
  await tx`delete from assignment_notices where project_id = ${projectId} and user_id = ${userId}`;
  return freed.length;
}

export type Notice = {
  id: string;
  project_id: string;
  project_name: string;
  group_id: string;
  message: string;
  title: string | null;
  status: string;
  actor_email: string | null;
  created_at: Date;
  read_at: Date | null;
  /** still assigned to the reader */
  current: boolean;
};

/** The user's newest notices over their projects (a project they left keeps none: unassignMember). */
export function listNotices(sql: Sql, userId: string, limit = 50) {
  return sql<Notice[]>`
    select n.id::text, n.project_id, p.name as project_name, n.group_id, g.message, g.title, g.status, u.email as actor_email,
      n.created_at, n.read_at, g.assignee_id is not distinct from n.user_id as current
    from assignment_notices n
    join project_members m on m.project_id = n.project_id and m.user_id = n.user_id
    join projects p on p.id = n.project_id
    join error_groups g on g.project_id = n.project_id and g.id = n.group_id
    left join users u on u.id = n.actor_id
    where n.user_id = ${userId}
    order by n.created_at desc, n.id desc limit ${limit}`;
}

export async function unreadNotices(sql: Sql, userId: string): Promise<number> {
  const [r] = await sql<{ n: number }[]>`
    select count(*)::int as n from assignment_notices n
    join project_members m on m.project_id = n.project_id and m.user_id = n.user_id
    where n.user_id = ${userId} and n.read_at is null`;
  return r.n;
}

/** Marks the user's notices read: all of them, or those of one issue. */
export async function markNoticesRead(sql: Sql, userId: string, issue?: { projectId: string; groupId: string }) {
  const rows = await sql`
    update assignment_notices set read_at = now()
    where user_id = ${userId} and read_at is null
    ${issue ? sql`and project_id = ${issue.projectId} and group_id = ${issue.groupId}` : sql``}
    returning id`;
  return rows.length;
}
