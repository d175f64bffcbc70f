/**
 * The first step of a batch write (db/events.ts): take the merge locks, leave out repeated event ids,
 * and find the group row each event lands in and the row whose throttle and users it uses.
 */
import { asJson, type TxSql } from "./client.js";
import { claimEventIdsStep, claimKey, eventIdClaims, freshEvents, type EventIdClaim } from "./sentry.js";
import type { EventRow } from "./write-types.js";

/** The advisory lock that merges and unmerges take exclusively and every ingest shares, per project. */
export const mergeLockKey = (projectId: string) => `group-merge:${projectId}`;

/** Where one distinct fingerprint of the batch lands (see resolveGroups). */
export type Resolved = {
  project_id: string;
  fp: string;
  row_id: string | null;
  own_id: string | null;
  own_fp: string | null;
  via: number | null;
  merged_into: string | null;
  target_fp: string | null;
  family: string[] | null;
};

/** The events to write (repeated event ids left out) and where their fingerprints land. */
export type Resolution = {
  rows: EventRow[];
  /** per input event, false when it repeats an event id already received (null: the batch carries no event ids) */
  fresh: boolean[] | null;
  /** by project and fingerprint */
  res: Map<string, Resolved>;
};

/**
 * Takes the shared merge lock of each project of `input`, in key order, then, when events carry an
 * event id, claims the ids and leaves out the events already received under theirs, then resolves
 * the groups of the remaining events. Returns the events to write and where they land, or null when
 * every event was a repeat (nothing else to write).
 *
 * The merge lock goes in the same round trip as the statement after it: postgres.js pipelines
 * queries issued without awaiting on the transaction's connection, and the server runs them one
 * after the other, each with its own snapshot. So what follows still reads after the lock is
 * granted (a merge that held it has committed), and it is never sent ahead of the lock:
 * execute() queues the lock now, the next statement is queued behind it.
 */
export async function lockAndResolve(tx: TxSql, input: EventRow[]): Promise<Resolution | null> {
  const projects = [...new Set(input.map((e) => e.projectId))].sort();
  const locked = tx`select pg_advisory_xact_lock_shared(hashtextextended(k, 0))
    from unnest(${projects.map(mergeLockKey)}::text[]) k order by k`.execute();
  if (!input.some((e) => e.eventId)) {
    const res = (await Promise.all([locked, resolveGroups(tx, input)]))[1].res;
    return { rows: input, fresh: null, res };
  }
  // events already received under their id are left out before anything is counted. The claim is a
  // step of the statement that resolves the groups (one statement fewer per transaction): the
  // groups of every event are resolved, and those only repeats reach are then left out
  const { res, claimed } = (await Promise.all([locked, resolveGroups(tx, input, eventIdClaims(input))]))[1];
  const fresh = freshEvents(input, claimed!);
  const rows = input.filter((_, i) => fresh[i]);
  if (rows.length === 0) return null;
  if (rows.length < input.length) {
    const kept = new Set(rows.map((e) => `${e.projectId}\u0000${e.fingerprint}`));
    for (const key of res.keys()) if (!kept.has(key)) res.delete(key);
  }
  return { rows, fresh, res };
}

/**
 * Where each distinct fingerprint of the batch lands, read after the merge lock is held:
 *  1. the group whose fingerprint it is (possibly a member merged into another group);
 *  2. else the group it was aliased to by an earlier grouping upgrade;
 *  3. else the group of the newest earlier version's fingerprint that has one, or the group that
 *     fingerprint is an alias of (an issue of version 1 that version 2 events joined): the event joins
 *     it, and the new fingerprint is recorded as an alias of it;
 *  4. else nothing: a new group is made with the fingerprint.
 * For a member of a merged issue it also returns the issue (target) and all its members.
 *
 * With `claims` (the batch's event ids, db/sentry.ts eventIdClaims) the same statement claims them
 * first and answers the ones it claimed (keys as claimEventIdsStep returns them, see claimKey).
 */
async function resolveGroups(tx: TxSql, rows: EventRow[], claims?: EventIdClaim[]): Promise<{ res: Map<string, Resolved>; claimed?: string[] }> {
  const keys = new Map<string, { project_id: string; fp: string; older: string[] }>();
  for (const e of rows) keys.set(`${e.projectId}\u0000${e.fingerprint}`, { project_id: e.projectId, fp: e.fingerprint, older: e.olderFingerprints });
  // own_id is the row whose users and throttle an event uses: the member itself, except for the
  // member holding the target's own fingerprint, whose events keep the target's id (see db/merge.ts)
  const resolve = tx`
    select i.project_id, i.fp, o.id as row_id, case when o.merged_own then o.merged_into else o.id end as own_id,
      o.fingerprint as own_fp, o.via, o.merged_into,
      case when o.merged_into is not null then
        (select t.fingerprint from error_groups t where t.project_id = i.project_id and t.id = o.merged_into) end as target_fp,
      case when o.merged_into is not null then
        array(select case when m.merged_own then m.merged_into else m.id end from error_groups m
              where m.project_id = i.project_id and m.merged_into = o.merged_into) end as family
    from json_to_recordset(${asJson(tx, [...keys.values()])}::json) as i(project_id uuid, fp text, older text[])
    left join lateral (
      (select g.id, g.fingerprint, g.merged_into, g.merged_own, 1 as via from error_groups g
       where g.project_id = i.project_id and g.fingerprint = i.fp)
      union all
      (select g.id, g.fingerprint, g.merged_into, g.merged_own, 2 from group_aliases a
       join error_groups g on g.project_id = a.project_id and g.id = a.group_id
       where a.project_id = i.project_id and a.fingerprint = i.fp)
      union all
      -- the earlier versions' fingerprints, newest version first: the first with a group or an alias
      (select e.id, e.fingerprint, e.merged_into, e.merged_own, 3
       from unnest(i.older) with ordinality as f(fp, n)
       cross join lateral (
         (select g.id, g.fingerprint, g.merged_into, g.merged_own from error_groups g
          where g.project_id = i.project_id and g.fingerprint = f.fp)
         union all
         (select g.id, g.fingerprint, g.merged_into, g.merged_own from group_aliases a
          join error_groups g on g.project_id = a.project_id and g.id = a.group_id
          where a.project_id = i.project_id and a.fingerprint = f.fp)
         limit 1
       ) e
       order by f.n limit 1)
      limit 1
    ) o on true`;
  const byKey = (resolved: Resolved[]) => new Map(resolved.map((r) => [`${r.project_id}\u0000${r.fp}`, r]));
  if (!claims) return { res: byKey(await tx<Resolved[]>`${resolve}`) };
  // the claimed ids ride on the first row only (a batch has at least one fingerprint, so one row),
  // and only when some were not claimed now: when every distinct id was (the usual batch), the
  // answer is null and the keys are Node's own (the driver parses an array of keys character by
  // character, about 0.6 us per id)
  const distinct = new Set(claims.map(claimKey)).size;
  const resolved = await tx<(Resolved & { first: boolean; claimed: string[] | null })[]>`
    with claimed as (${claimEventIdsStep(tx, claims)}), resolved as (${resolve})
    select r.*, case when r.first then (
      select case when count(*) = ${distinct} then null else coalesce(array_agg(c.key), '{}') end from claimed c) end as claimed
    from (select resolved.*, row_number() over () = 1 as first from resolved) r`;
  const claimed = resolved.find((r) => r.first)?.claimed ?? (resolved.some((r) => r.first) ? claims.map(claimKey) : []);
  const res = byKey(resolved.map(({ first: _f, claimed: _c, ...r }) => r));
  return { res, claimed };
}

/** A group row's key in the batch's maps (project and fingerprint), built once per distinct fingerprint. */
export type GroupKey = { key: string; fingerprint: string };

/**
 * Per distinct fingerprint, once: the keys of the group an event lands in (target) and of the row
 * whose throttle and users it uses (origin: its own member row when merged, except the member
 * holding the target's own fingerprint, whose events use the target row; see db/merge.ts), and the
 * keys of the group rows that count the event (`keys`: the target, and its own member row when merged).
 */
export type Slot = { r: Resolved; target: GroupKey; origin: GroupKey; keys: GroupKey[] };

/**
 * Reads the resolved fingerprints; returns each event's slot, in the order of `rows`. Events of one
 * fingerprint share one slot, so the per-event work of the later steps is a lookup in it.
 */
export function placeEvents(rows: EventRow[], res: Map<string, Resolved>): Slot[] {
  const slots = new Map<Resolved, Slot>();
  for (const r of res.values()) {
    const gk = (fingerprint: string): GroupKey => ({ key: `${r.project_id}\u0000${fingerprint}`, fingerprint });
    const target = gk(r.target_fp ?? r.own_fp ?? r.fp);
    const origin = !r.target_fp ? target : gk(r.own_id === r.merged_into ? r.target_fp : r.own_fp!);
    slots.set(r, { r, target, origin, keys: r.target_fp ? [target, gk(r.own_fp!)] : [target] });
  }
  return rows.map((e) => slots.get(res.get(`${e.projectId}\u0000${e.fingerprint}`)!)!);
}
