import type { Sql } from "./client.js";

/** The project's first issue (by first occurrence), for the "first event arrived" link. */
export async function firstGroupId(sql: Sql, projectId: string): Promise<string | null> {
  const rows = await sql<{ id: string }[]>`
    select id from error_groups where project_id = ${projectId} order by first_seen, id limit 1`;
  return rows[0]?.id ?? null;
}
