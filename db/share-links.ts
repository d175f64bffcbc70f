import type { Sql } from "./client.js";

export type ShareRole = "viewer" | "editor";
export type ShareLink = {
  id: string;
  project_id: string;
  group_id: string;
  role: ShareRole;
  created_by: string | null;
  created_by_email: string | null;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
};

const COLUMNS = (sql: Sql) => sql`
  s.id, s.project_id, s.group_id, s.role, s.created_by, u.email as created_by_email, s.created_at, s.expires_at, s.revoked_at`;

/** Inserts a link for a group of the project; undefined when the group is not in that project. */
export async function insertShareLink(
  sql: Sql,
  projectId: string,
  link: { groupId: string; role: ShareRole; tokenHash: Buffer; createdBy: string; expiresAt: Date | null },
): Promise<ShareLink | undefined> {
  const [s] = await sql<ShareLink[]>`
    with s as (
      insert into share_links (project_id, group_id, role, token_hash, created_by, expires_at)
      select project_id, id, ${link.role}, ${link.tokenHash}, ${link.createdBy}, ${link.expiresAt}
      from error_groups where project_id = ${projectId} and id = ${link.groupId}
      returning *
    )
    select ${COLUMNS(sql)} from s left join users u on u.id = s.created_by`;
  return s;
}

export async function listShareLinks(sql: Sql, projectId: string, groupId?: string): Promise<ShareLink[]> {
  return sql<ShareLink[]>`
    select ${COLUMNS(sql)} from share_links s left join users u on u.id = s.created_by
    where s.project_id = ${projectId} ${groupId ? sql`and s.group_id = ${groupId}` : sql``}
    order by s.created_at desc, s.id`;
}

export async function getShareLink(sql: Sql, projectId: string, id: string): Promise<ShareLink | undefined> {
  const [s] = await sql<ShareLink[]>`
    select ${COLUMNS(sql)} from share_links s left join users u on u.id = s.created_by
    where s.project_id = ${projectId} and s.id = ${id}`;
  return s;
}

/** Revokes an active link (by whom: the issue's timeline names them); false when there was none with that id in the project. */
export async function revokeShareLink(sql: Sql, projectId: string, id: string, revokedBy: string | null = null): Promise<boolean> {
  const rows = await sql`
    update share_links set revoked_at = now(), revoked_by = ${revokedBy}
    where project_id = ${projectId} and id = ${id} and revoked_at is null returning id`;
  return rows.length > 0;
}

/** The live link for a token hash: not revoked, not expired. */
export async function findLiveShareLink(
  sql: Sql,
  tokenHash: Buffer,
): Promise<{ id: string; project_id: string; group_id: string; role: ShareRole; expires_at: Date | null } | undefined> {
  const [s] = await sql<{ id: string; project_id: string; group_id: string; role: ShareRole; expires_at: Date | null }[]>`
    select id, project_id, group_id, role, expires_at from share_links
    where token_hash = ${tokenHash} and revoked_at is null and (expires_at is null or expires_at > now())`;
  return s;
}
