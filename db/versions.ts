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

/**
 * The project's game versions, newest first (by first occurrence), with their occurrences, the
 * issues seen in them, the issues first seen in them and the issues that regressed in them.
 */
export async function listReleases(sql: Sql, projectId: string, limit: number, offset: number) {
  const [data, [{ total }]] = await Promise.all([
    sql<Release[]>`
      with members as (
        -- rows of a group merged into another count for that issue (db/merge.ts)
        select id, merged_into from error_groups where project_id = ${projectId} and merged_into is not null
      ), v as (
        select gv.version, min(gv.first_seen) as first_seen, max(gv.last_seen) as last_seen, sum(gv.count) as occurrences,
          count(distinct coalesce(m.merged_into, gv.group_id)) as issues
        from group_versions gv left join members m on m.id = gv.group_id
        where gv.project_id = ${projectId}
        group by gv.version
        order by min(first_seen) desc, version desc
        limit ${limit} offset ${offset}
      )
      select v.version, v.first_seen, v.last_seen, v.occurrences::bigint, v.issues::bigint,
        -- issues as listed (a merged issue once, not its members), as the new_in_version filter counts them
        (select count(*) from error_groups g where g.project_id = ${projectId} and g.merged_into is null and g.first_version = v.version)::bigint as new_issues,
        (select count(*) from error_groups g where g.project_id = ${projectId} and g.merged_into is null and g.regressed_version = v.version)::bigint as regressions,
        round(v.occurrences / greatest(extract(epoch from v.last_seen - v.first_seen) / 3600, 1), 2)::float8 as per_hour
      from v order by v.first_seen desc, v.version desc`,
    sql<{ total: number }[]>`select count(distinct version)::bigint as total from group_versions where project_id = ${projectId}`,
  ]);
  return { data, total: Number(total) };
}

export async function listVersionNames(sql: Sql, projectId: string): Promise<string[]> {
  const rows = await sql<{ version: string }[]>`
    select version from group_versions where project_id = ${projectId}
    group by version order by min(first_seen) desc limit 100`;
  return rows.map((r) => r.version);
}
