import type { Sql } from "./client.js";

export type Comment = {
  id: string;
  group_id: string;
  author_id: string | null;
  author_email: string | null;
  body: string;
  created_at: Date;
  edited_at: Date | null;
};

const COLUMNS = (sql: Sql) => sql`c.id, c.group_id, c.author_id, u.email as author_email, c.body, c.created_at, c.edited_at`;

/** The comments on a group, oldest first. */
export function listComments(sql: Sql, projectId: string, groupId: string) {
  return sql<Comment[]>`
    select ${COLUMNS(sql)} from issue_comments c left join users u on u.id = c.author_id
    where c.project_id = ${projectId} and c.group_id = ${groupId} order by c.created_at, c.id`;
}

/** Adds a comment to a group of the project; undefined when the group is not in it. */
export async function insertComment(sql: Sql, projectId: string, groupId: string, authorId: string, body: string): Promise<Comment | undefined> {
  const [c] = await sql<Comment[]>`
    with c as (
      insert into issue_comments (project_id, group_id, author_id, body)
      select project_id, id, ${authorId}, ${body} from error_groups where project_id = ${projectId} and id = ${groupId}
      returning *
    )
    select ${COLUMNS(sql)} from c left join users u on u.id = c.author_id`;
  return c;
}

export function getComment(sql: Sql, projectId: string, groupId: string, id: string) {
  return sql<Comment[]>`
    select ${COLUMNS(sql)} from issue_comments c left join users u on u.id = c.author_id
    where c.project_id = ${projectId} and c.group_id = ${groupId} and c.id = ${id}`.then((r) => r[0] as Comment | undefined);
}

/** Edits a comment, only its author's (the condition is in the write); undefined when it is not theirs or gone. */
export async function updateComment(sql: Sql, projectId: string, groupId: string, id: string, authorId: string, body: string) {
  const [c] = await sql<Comment[]>`
    with c as (
      update issue_comments set body = ${body}, edited_at = now()
      where project_id = ${projectId} and group_id = ${groupId} and id = ${id} and author_id = ${authorId}
      returning *
    )
    select ${COLUMNS(sql)} from c left join users u on u.id = c.author_id`;
  return c as Comment | undefined;
}

/** Deletes a comment: `authorId` limits it to that author's; null deletes anyone's (owners and admins). */
export async function deleteComment(sql: Sql, projectId: string, groupId: string, id: string, authorId: string | null): Promise<boolean> {
  const rows = await sql`
    delete from issue_comments
    where project_id = ${projectId} and group_id = ${groupId} and id = ${id}
    ${authorId ? sql`and author_id = ${authorId}` : sql``}
    returning id`;
  return rows.length > 0;
}
