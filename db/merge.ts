import type { TxSql, Sql } from "./client.js";
import { ROLLUP_TABLES } from "./stats.js";
import { mergeLockKey } from "./events.js";
import type { GroupRow } from "./errors.js";
import { NOBODY, recordActivity, type By } from "./activity.js";
import { applyPendingOf } from "./counter-deltas.js";

/**
 * Merge and unmerge of error groups.
 *
 * A group merged into a target stays as a hidden member row (`merged_into` = target) that keeps its
 * fingerprint and its own counters; ingest keeps updating them (db/events.ts), so an unmerge can
 * give the group back exactly what is its own. Its stored events and rollup cells move to the target
 * and remember where they came from (`events.origin_group_id`, `rollup_*.origin_id`). The first merge
 * into a target turns the target into an aggregate: its own fingerprint and counters move to a member
 * row marked `merged_own`, and the target's id, status and links stay. The target's counters are
 * always the sum of its members'. Distinct users, environments and versions stay under each member's
 * id (ingest keys them by the row an event came from) and reads add them up (familyIds), so neither
 * a merge nor an unmerge moves them.
 *
 * Both run under the project's merge lock held exclusively; every ingest write holds it shared, so
 * counts move exactly even while events of the same fingerprints keep arriving. Both first apply the
 * project's pending deferred counters (db/counter-deltas.ts): those were written for the groups as
 * they were, and the rollups and user counts they add must be in place before they move.
 */

/**
 * The ids under which ingest keeps a group's per-environment, per-version and per-user rows (by the
 * row an event came from, db/events.ts): the group's own id and, for a merged issue, each member's;
 * the member holding the issue's own fingerprint has its rows under the id. Reads of those
 * tables sum over these, so a merged issue counts its members and an unmerge has nothing to move.
 */
export const familyIds = (sql: Sql | TxSql, projectId: string, groupId: string) => sql`array(
  select case when f.merged_own then f.merged_into else f.id end from error_groups f
  where f.project_id = ${projectId} and (f.id = ${groupId} or (f.merged_into = ${groupId} and not f.merged_own)))`;

export type MergeRefusal =
  | { kind: "not_found"; ids: string[] }
  | { kind: "same" }
  | { kind: "nested"; ids: string[] }
  | { kind: "not_member"; ids: string[] }
  | { kind: "own" };

export class MergeRefused extends Error {
  constructor(readonly refusal: MergeRefusal) {
    super(refusal.kind);
  }
}

type Row = { id: string; fingerprint: string; merged_into: string | null; merged_own: boolean; stored_count: number };

const lock = (tx: TxSql, projectId: string) => tx`select pg_advisory_xact_lock(hashtextextended(${mergeLockKey(projectId)}, 0))`;

const memberCount = async (tx: TxSql, projectId: string, id: string) =>
  Number((await tx<{ n: number }[]>`select count(*)::int as n from error_groups where project_id = ${projectId} and merged_into = ${id}`)[0].n);

/** The target's counters as the sum of its members' (distinct users over all their user sets; versions of the earliest and the latest). */
async function recompute(tx: TxSql, projectId: string, targetId: string) {
  await tx`
    update error_groups t set
      count = a.count,
      first_seen = a.first_seen,
      last_seen = a.last_seen,
      level = a.level,
      environment = a.environment,
      first_version = a.first_version,
      first_version_at = a.first_version_at,
      last_version = a.last_version,
      client_only = a.client_only,
      user_count = (select count(distinct u.user_id) from group_users u
                    where u.project_id = t.project_id and u.group_id = any(a.owners))
    from (
      select sum(count)::bigint as count, min(first_seen) as first_seen, max(last_seen) as last_seen,
        (array_agg(level order by level_rank(level) desc))[1] as level,
        (array_agg(environment order by last_seen desc))[1] as environment,
        -- the earliest version over the members, by the time of the event that carried it
        (array_agg(first_version order by first_version_at, id) filter (where first_version is not null))[1] as first_version,
        min(first_version_at) filter (where first_version is not null) as first_version_at,
        (array_agg(last_version order by last_seen desc, id) filter (where last_version is not null))[1] as last_version,
        array_agg(case when merged_own then merged_into else id end) as owners,
        bool_and(client_only) as client_only
      from error_groups where project_id = ${projectId} and merged_into = ${targetId}
    ) a
    where t.project_id = ${projectId} and t.id = ${targetId} and a.count is not null`;
}

/**
 * Merges `sourceIds` into `targetId` (all visible groups of the project). A source that itself holds
 * merged groups is refused (unmerge it first, or make it the target).
 */
export async function mergeGroups(sql: Sql, projectId: string, targetId: string, sourceIds: string[], by: By = NOBODY): Promise<string[]> {
  const sources = [...new Set(sourceIds)].filter((id) => id !== targetId);
  if (sources.length === 0) throw new MergeRefused({ kind: "same" });
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    await applyPendingOf(tx, projectId);
    const rows = await tx<Row[]>`
      select id, fingerprint, merged_into, merged_own, stored_count from error_groups
      where project_id = ${projectId} and id = any(${[targetId, ...sources]}::uuid[]) and merged_into is null
      order by fingerprint for update`;
    const found = new Set(rows.map((r) => r.id));
    const missing = [targetId, ...sources].filter((id) => !found.has(id));
    if (missing.length > 0) throw new MergeRefused({ kind: "not_found", ids: missing });
    const nested: string[] = [];
    for (const id of sources) if ((await memberCount(tx, projectId, id)) > 0) nested.push(id);
    if (nested.length > 0) throw new MergeRefused({ kind: "nested", ids: nested });

    if ((await memberCount(tx, projectId, targetId)) === 0) {
      // the target becomes an aggregate: a member row takes over its fingerprint and counters; its
      // events, rollup cells and users stay keyed by the target's id, which stands for that member
      const target = rows.find((r) => r.id === targetId)!;
      await tx`update error_groups set fingerprint = md5('merged:' || id::text) where project_id = ${projectId} and id = ${targetId}`;
      const [own] = await tx<{ id: string }[]>`
        insert into error_groups (project_id, fingerprint, message, level, status, count, user_count, stored_count,
          first_seen, last_seen, culprit, environment, created_at, regressed_at, resolved_at, throttle_times,
          grouping_version, first_version, first_version_at, last_version, regressed_version, merged_into, merged_own, client_only, identities, frames,
          grouping_location, grouping_template)
        select project_id, ${target.fingerprint}, message, level, status, count, user_count, 0,
          first_seen, last_seen, culprit, environment, created_at, regressed_at, resolved_at, throttle_times,
          grouping_version, first_version, first_version_at, last_version, regressed_version, id, true, client_only, identities, frames,
          grouping_location, grouping_template
        from error_groups where project_id = ${projectId} and id = ${targetId}
        returning id`;
      await tx`update group_aliases set group_id = ${own.id} where project_id = ${projectId} and group_id = ${targetId}`;
    }

    let moved = 0;
    for (const id of sources) {
      const source = rows.find((r) => r.id === id)!;
      await tx`update events set group_id = ${targetId}, origin_group_id = ${id}
               where project_id = ${projectId} and group_id = ${id}`;
      for (const t of ROLLUP_TABLES) await tx`update ${tx(t)} set group_id = ${targetId} where project_id = ${projectId} and group_id = ${id}`;
      await tx`
        update traces set group_ids = array(
          select distinct case when x = ${id}::uuid then ${targetId}::uuid else x end from unnest(group_ids) x order by 1)
        where project_id = ${projectId} and ${id}::uuid = any(group_ids)`;
      await tx`update error_groups set merged_into = ${targetId}, stored_count = 0 where project_id = ${projectId} and id = ${id}`;
      moved += Number(source.stored_count);
    }
    await tx`update error_groups set stored_count = stored_count + ${moved} where project_id = ${projectId} and id = ${targetId}`;
    await recompute(tx, projectId, targetId);
    await recordActivity(tx, projectId, by, [
      { groupId: targetId, kind: "merged", details: { ids: sources } },
      ...sources.map((id) => ({ groupId: id, kind: "merged" as const, details: { into: targetId } })),
    ]);
    await takeOverAssignee(tx, projectId, targetId, sources, by);
    return sources;
  });
}

/**
 * Gives members of `targetId` back their own events, rollups and counters as visible groups again.
 * When only the target's own member is left, the target takes its fingerprint back.
 */
export async function unmergeGroups(sql: Sql, projectId: string, targetId: string, memberIds: string[], by: By = NOBODY): Promise<string[]> {
  const ids = [...new Set(memberIds)];
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    await applyPendingOf(tx, projectId);
    const [target] = await tx<Row[]>`
      select id, fingerprint, merged_into, merged_own, stored_count from error_groups
      where project_id = ${projectId} and id = ${targetId} and merged_into is null for update`;
    if (!target) throw new MergeRefused({ kind: "not_found", ids: [targetId] });
    const members = await tx<Row[]>`
      select id, fingerprint, merged_into, merged_own, stored_count from error_groups
      where project_id = ${projectId} and merged_into = ${targetId} order by fingerprint for update`;
    const byId = new Map(members.map((m) => [m.id, m]));
    const notMembers = ids.filter((id) => !byId.has(id));
    if (notMembers.length > 0) throw new MergeRefused({ kind: "not_member", ids: notMembers });
    if (ids.some((id) => byId.get(id)!.merged_own)) throw new MergeRefused({ kind: "own" });

    let moved = 0;
    for (const id of ids) {
      const back = await tx`update events set group_id = ${id}, origin_group_id = null
                            where project_id = ${projectId} and group_id = ${targetId} and origin_group_id = ${id}`;
      for (const t of ROLLUP_TABLES) {
        await tx`update ${tx(t)} set group_id = ${id} where project_id = ${projectId} and group_id = ${targetId} and origin_id = ${id}`;
      }
      await tx`
        update traces tr set group_ids = array(
          select distinct x from unnest(tr.group_ids || array[${id}::uuid]) x
          where x <> ${targetId}::uuid or exists (
            select 1 from events e where e.project_id = tr.project_id and e.trace_id = tr.trace_id and e.group_id = ${targetId})
          order by x)
        where tr.project_id = ${projectId} and tr.trace_id in (
          select distinct trace_id from events where project_id = ${projectId} and group_id = ${id} and trace_id is not null)`;
      await tx`
        update error_groups g set merged_into = null, stored_count = ${back.count},
          user_count = (select count(*) from group_users u where u.project_id = g.project_id and u.group_id = g.id)
        where project_id = ${projectId} and id = ${id}`;
      moved += back.count;
    }
    await tx`update error_groups set stored_count = greatest(stored_count - ${moved}, 0) where project_id = ${projectId} and id = ${targetId}`;
    await recompute(tx, projectId, targetId);

    const left = members.filter((m) => !ids.includes(m.id));
    if (left.length === 1 && left[0].merged_own) {
      // only the target's own part is left: it is a plain group again, under its own fingerprint
      const own = left[0];
      await tx`update group_aliases set group_id = ${targetId} where project_id = ${projectId} and group_id = ${own.id}`;
      await tx`delete from error_groups where project_id = ${projectId} and id = ${own.id}`;
      await tx`update error_groups set fingerprint = ${own.fingerprint} where project_id = ${projectId} and id = ${targetId}`;
    }
    await recordActivity(tx, projectId, by, [
      { groupId: targetId, kind: "unmerged", details: { ids } },
      ...ids.map((id) => ({ groupId: id, kind: "unmerged" as const, details: { from: targetId } })),
    ]);
    return ids;
  });
}

/**
 * The assignee lives on the issue that stays. It keeps its own; without one, it takes the assignee of
 * the merged issue with the most occurrences that has one (recorded on its timeline). The merged
 * issues keep theirs, unseen while merged, and show it again when unmerged.
 */
async function takeOverAssignee(tx: TxSql, projectId: string, targetId: string, sources: string[], by: By) {
  const [taken] = await tx<{ assignee_id: string }[]>`
    update error_groups t set assignee_id = s.assignee_id
    from (select assignee_id from error_groups where project_id = ${projectId} and id = any(${sources}::uuid[]) and assignee_id is not null
          order by count desc, id limit 1) s
    where t.project_id = ${projectId} and t.id = ${targetId} and t.assignee_id is null
    returning t.assignee_id`;
  if (taken) await recordActivity(tx, projectId, { ...by, via: "merge" }, [{ groupId: targetId, kind: "assigned", details: { to: taken.assignee_id, from: null } }]);
}

/** A member row of a merged issue; `own` marks the one holding the target's own fingerprint and counters (`merged_own`). */
export type MemberRow = Pick<GroupRow, "id" | "fingerprint" | "message" | "level" | "status" | "count" | "user_count" | "first_seen" | "last_seen" | "culprit"> & {
  own: boolean;
};

/** The groups merged into a group, largest first (empty for a group that holds none). */
export function listMergedGroups(sql: Sql, projectId: string, groupId: string) {
  return sql<MemberRow[]>`
    select id, fingerprint, message, level, status, count, user_count, first_seen, last_seen, culprit, merged_own as own
    from error_groups where project_id = ${projectId} and merged_into = ${groupId}
    order by merged_own desc, count desc, id`;
}

export type MergeCandidate = Pick<GroupRow, "id" | "message" | "level" | "status" | "count" | "user_count" | "last_seen">;

/**
 * The visible groups among `ids`, the default merge target first: the one already holding merged
 * groups (a source may not hold any), else the one with the most occurrences.
 */
export function mergeCandidates(sql: Sql, projectId: string, ids: string[]) {
  return sql<MergeCandidate[]>`
    select g.id, g.message, g.level, g.status, g.count, g.user_count, g.last_seen from error_groups g
    where g.project_id = ${projectId} and g.id = any(${ids}::uuid[]) and g.merged_into is null
    order by exists (select 1 from error_groups m where m.project_id = g.project_id and m.merged_into = g.id) desc,
      g.count desc, g.first_seen, g.id`;
}

/** The default merge target among `ids` (see mergeCandidates). */
export async function pickMergeTarget(sql: Sql, projectId: string, ids: string[]): Promise<string> {
  return (await mergeCandidates(sql, projectId, ids))[0]?.id ?? ids[0];
}
