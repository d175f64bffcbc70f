import type { Sql } from "./client.js";

/** The project's recent pushed profile (as pushed, wrapper and all), for the currency-map preview. */
export async function getProfileSample(sql: Sql, projectId: string): Promise<{ user_id: string; profile: unknown; observed_at: Date } | null> {
  const [row] = await sql<{ user_id: string; profile: unknown; observed_at: Date }[]>`
    select user_id::text as user_id, profile, observed_at from economy_profile_samples where project_id = ${projectId}`;
  return row ?? null;
}

/** Keeps one pushed profile per project (the newest written wins). */
export async function putProfileSample(sql: Sql, projectId: string, userId: string, profile: unknown, observedAt: Date): Promise<void> {
  await sql`
    insert into economy_profile_samples (project_id, user_id, profile, observed_at)
    values (${projectId}, ${userId}, ${sql.json(profile as never)}, ${observedAt})
    on conflict (project_id) do update set user_id = excluded.user_id, profile = excluded.profile, observed_at = excluded.observed_at`;
}
