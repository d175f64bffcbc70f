import type { Sql } from "./client.js";

/** A project's saved currency map (JSON as stored), or null when it still uses the seed's map. */
export async function getEconomyMap(sql: Sql, projectId: string): Promise<{ map: unknown; updated_at: Date; updated_by: string | null } | null> {
  const [row] = await sql<{ map: unknown; updated_at: Date; updated_by: string | null }[]>`
    select map, updated_at, updated_by::text as updated_by from economy_maps where project_id = ${projectId}`;
  return row ?? null;
}

export async function putEconomyMap(sql: Sql, projectId: string, map: unknown, userId: string | null): Promise<Date> {
  const [row] = await sql<{ updated_at: Date }[]>`
    insert into economy_maps (project_id, map, updated_by) values (${projectId}, ${sql.json(map as never)}, ${userId})
    on conflict (project_id) do update set map = excluded.map, updated_by = excluded.updated_by, updated_at = now()
    returning updated_at`;
  return row.updated_at;
}

/** Back to the seed's map. */
export async function deleteEconomyMap(sql: Sql, projectId: string): Promise<void> {
  await sql`delete from economy_maps where project_id = ${projectId}`;
}
