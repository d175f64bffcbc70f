import type { Sql, TxSql } from "./client.js";
import { unassignMember } from "./assignment.js";
import { recordAudit } from "./audit.js";

export type Role = "owner" | "admin" | "member";
export type Member = { project_id: string; user_id: string; email: string; role: Role; created_at: Date };
export type ProjectWithRole = { id: string; name: string; created_at: Date; role: Role };

export async function getRole(sql: Sql, projectId: string, userId: string): Promise<Role | undefined> {
  const [m] = await sql<{ role: Role }[]>`
    select role from project_members where project_id = ${projectId} and user_id = ${userId}`;
  return m?.role;
}

export async function listProjectsForUser(sql: Sql, userId: string): Promise<ProjectWithRole[]> {
  return sql<ProjectWithRole[]>`
    select p.id, p.name, p.created_at, m.role from project_members m join projects p on p.id = m.project_id
    where m.user_id = ${userId} order by lower(p.name), p.id`;
}

export async function listMembers(sql: Sql, projectId: string): Promise<Member[]> {
  return sql<Member[]>`
    select m.project_id, m.user_id, u.email, m.role, m.created_at
    from project_members m join users u on u.id = m.user_id
    where m.project_id = ${projectId}
    order by case m.role when 'owner' then 0 when 'admin' then 1 else 2 end, u.email`;
}

/** Adds a member; undefined when the user already is one. */
export async function insertMember(sql: Sql | TxSql, projectId: string, userId: string, role: Role): Promise<Member | undefined> {
  const [m] = await sql<Member[]>`
    with ins as (
      insert into project_members (project_id, user_id, role) values (${projectId}, ${userId}, ${role})
      on conflict do nothing
      returning project_id, user_id, role, created_at
    )
    select ins.*, u.email from ins join users u on u.id = ins.user_id`;
  return m;
}

export type MemberChange = { ok: true; member?: Member } | { ok: false; reason: "not_found" | "last_owner" };

/**
 * Changes a role (or removes the member when role is null, revoking the share links they made and
 * unassigning their issues, on those issues' timelines as done by `actorId`) while keeping at least
 * one owner. The project row is locked first, so two concurrent demotions of the last two owners
 * cannot both pass.
 */
export async function changeMember(sql: Sql, projectId: string, userId: string, role: Role | null, actorId: string | null = null): Promise<MemberChange> {
  return sql.begin(async (tx) => {
    await tx`select 1 from projects where id = ${projectId} for update`;
    const [current] = await tx<{ role: Role; email: string }[]>`
      select m.role, u.email from project_members m join users u on u.id = m.user_id
      where m.project_id = ${projectId} and m.user_id = ${userId}`;
    if (!current) return { ok: false, reason: "not_found" } as const;
    if (current.role === "owner" && role !== "owner") {
      const [{ n }] = await tx<{ n: number }[]>`
        select count(*)::int as n from project_members where project_id = ${projectId} and role = 'owner'`;
      if (n <= 1) return { ok: false, reason: "last_owner" } as const;
    }
    if (role === null) {
      await unassignMember(tx, projectId, userId, actorId);
      await tx`delete from project_members where project_id = ${projectId} and user_id = ${userId}`;
      // links a member handed out leave with them: whoever got one was given it on their behalf
      await tx`
        update share_links set revoked_at = now()
        where project_id = ${projectId} and created_by = ${userId} and revoked_at is null`;
      await recordAudit(tx, { projectId, actorId, action: "member.removed", target: current.email, details: { user_id: userId, role: current.role } });
      return { ok: true } as const;
    }
    const [member] = await tx<Member[]>`
      with upd as (
        update project_members set role = ${role} where project_id = ${projectId} and user_id = ${userId}
        returning project_id, user_id, role, created_at
      )
      select upd.*, u.email from upd join users u on u.id = upd.user_id`;
    if (current.role !== role) {
      await recordAudit(tx, { projectId, actorId, action: "member.role_changed", target: current.email, details: { user_id: userId, from: current.role, to: role } });
    }
    return { ok: true, member } as const;
  });
}
