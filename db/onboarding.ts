import type { Sql } from "./client.js";

/**
 * The project's first issue (by first occurrence), for the "first event arrived" link: of the issues
 * listed on their own, so a merged one links the issue it is in (which keeps its first sighting).
 * A LIMIT 1 on error_groups_first_seen (migration 141), whatever the number of issues.
 */
export async function firstGroupId(sql: Sql, projectId: string): Promise<string | null> {
  const rows = await sql<{ id: string }[]>`
    select id from error_groups where project_id = ${projectId} and merged_into is null order by first_seen, id limit 1`;
  return rows[0]?.id ?? null;
}
