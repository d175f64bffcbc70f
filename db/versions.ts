import type { Sql } from "./client.js";
import { familyIds } from "./merge.js";

/** Occurrences of one group per environment, most first (a merged issue: summed over its members). */
export async function groupEnvironments(sql: Sql, projectId: string, groupId: string) {
  return sql<{ environment: string; count: string; first_seen: Date; last_seen: Date }[]>`
    select environment, sum(count)::bigint as count, min(first_seen) as first_seen, max(last_seen) as last_seen
    from group_environments
    where project_id = ${projectId} and group_id = any(${familyIds(sql, projectId, groupId)})
    group by environment
    order by count desc, environment limit 100`;
}

/** Occurrences of one group per game version, newest version (by first occurrence) first (a merged issue: summed over its members). */
export async function groupVersions(sql: Sql, projectId: string, groupId: string) {
  return sql<{ version: string; count: string; first_seen: Date; last_seen: Date }[]>`
    select version, sum(count)::bigint as count, min(first_seen) as first_seen, max(last_seen) as last_seen
    from group_versions
    where project_id = ${projectId} and group_id = any(${familyIds(sql, projectId, groupId)})
    group by version
    order by first_seen desc, version desc limit 200`;
}

export type Release = {
  version: string;
  first_seen: Date;
  last_seen: Date;
  occurrences: string;
  issues: string;
  new_issues: string;
  regressions: string;
  /** occurrences per hour between the version's first and last occurrence (at least one hour) */
  per_hour: number;
};

export async function listVersionNames(sql: Sql, projectId: string): Promise<string[]> {
  const rows = await sql<{ version: string }[]>`
    select version from group_versions where project_id = ${projectId}
    group by version order by min(first_seen) desc limit 100`;
  return rows.map((r) => r.version);
}
