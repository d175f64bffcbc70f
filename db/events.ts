import { isConnectionLoss, type Sql, type TxSql } from "./client.js";
import { claimEventIds } from "./sentry.js";

export type Level = "error" | "warn" | "info";

/** One validated, normalized event ready to be written. */
export type EventRow = {
  projectId: string;
  fingerprint: string;
  /** the previous grouping version's fingerprint, when it differs (see resolveGroups) */
  secondaryFingerprint: string | null;
  message: string;
  level: Level;
  stackTrace: string | null;
  userId: string | null;
  playerName: string | null;
  traceId: string | null;
  jobId: string | null;
  placeId: string | null;
  gameVersion: string | null;
  environment: string;
  context: unknown;
  tags: string[] | null;
  /** occurrence time, ms since epoch */
  timestamp: number;
  count: number;
  culprit: string | null;
  /** a client-chosen event id (Sentry protocol): a second event with the same id in the project is dropped */
  eventId?: string | null;
};

export type TouchedGroup = {
  project_id: string;
  fingerprint: string;
  id: string;
  created: boolean;
  regressed: boolean;
  status: string;
};

export type WriteResult = { stored: boolean[]; groups: TouchedGroup[] };
export type ThrottleRule = { limit: number; windowSeconds: number };

const RANK: Record<Level, number> = { error: 3, warn: 2, info: 1 };

type GroupAgg = {
  project_id: string;
  fingerprint: string;
  message: string;
  level: Level;
  count: number;
  first_seen: number;
  last_seen: number;
  culprit: string | null;
  environment: string;
  /** game version of the earliest and of the latest event that carried one */
  first_version: string | null;
  last_version: string | null;
  first_version_at: number;
  last_version_at: number;
};

/**
 * Per (project, group key): summed counts, first message/culprit, most severe level, latest
 * environment and versions. An event counts once in the group it lands in and, when that is a merged issue, once
 * more in the member row of its own fingerprint (which keeps its own counters for an unmerge).
 */
function aggregateGroups(rows: EventRow[], keysOf: (e: EventRow) => string[]): GroupAgg[] {
  const map = new Map<string, GroupAgg>();
  for (const e of rows) {
    for (const fingerprint of keysOf(e)) {
      const key = `${e.projectId}\u0000${fingerprint}`;
      const g = map.get(key);
      if (!g) {
        map.set(key, {
          project_id: e.projectId,
          fingerprint,
          message: e.message,
          level: e.level,
          count: e.count,
          first_seen: e.timestamp,
          last_seen: e.timestamp,
          culprit: e.culprit,
          environment: e.environment,
          first_version: e.gameVersion,
          last_version: e.gameVersion,
          first_version_at: e.timestamp,
          last_version_at: e.timestamp,
        });
        continue;
      }
      g.count += e.count;
      if (RANK[e.level] > RANK[g.level]) g.level = e.level;
      if (e.timestamp < g.first_seen) g.first_seen = e.timestamp;
      if (e.timestamp >= g.last_seen) {
        g.last_seen = e.timestamp;
        g.environment = e.environment;
      }
      g.culprit ??= e.culprit;
      if (e.gameVersion !== null) {
        if (g.first_version === null || e.timestamp < g.first_version_at) [g.first_version, g.first_version_at] = [e.gameVersion, e.timestamp];
        if (g.last_version === null || e.timestamp >= g.last_version_at) [g.last_version, g.last_version_at] = [e.gameVersion, e.timestamp];
      }
    }
  }
  // a fixed lock order (project, fingerprint) keeps concurrent batches from deadlocking
  return [...map.values()].sort((a, b) =>
    a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0,
  );
}

type Resolved = {
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

/**
 * Where each distinct fingerprint of the batch lands, read after the merge lock is held:
 *  1. the group whose fingerprint it is (possibly a member merged into another group);
 *  2. else the group it was aliased to by an earlier grouping upgrade;
 *  3. else the group of the previous version's fingerprint (the event joins it, and the new
 *     fingerprint is recorded as an alias of it);
 *  4. else nothing: a new group is made with the fingerprint.
 * For a member of a merged issue it also returns the issue (target) and all its members.
 */
async function resolveGroups(tx: TxSql, rows: EventRow[]): Promise<Map<string, Resolved>> {
  const keys = new Map<string, { project_id: string; fp: string; fp1: string | null }>();
  for (const e of rows) keys.set(`${e.projectId}\u0000${e.fingerprint}`, { project_id: e.projectId, fp: e.fingerprint, fp1: e.secondaryFingerprint });
  // own_id is the row whose users and throttle an event uses: the member itself, except for the
  // member holding the target's own fingerprint, whose events keep the target's id (see db/merge.ts)
  const resolved = await tx<Resolved[]>`
    select i.project_id, i.fp, o.id as row_id, case when o.merged_own then o.merged_into else o.id end as own_id,
      o.fingerprint as own_fp, o.via, o.merged_into, t.fingerprint as target_fp,
      case when o.merged_into is not null then
        array(select case when m.merged_own then m.merged_into else m.id end from error_groups m
              where m.project_id = i.project_id and m.merged_into = o.merged_into) end as family
    from json_to_recordset(${tx.json([...keys.values()] as never)}::json) as i(project_id uuid, fp text, fp1 text)
    left join lateral (
      (select g.id, g.fingerprint, g.merged_into, g.merged_own, 1 as via from error_groups g
       where g.project_id = i.project_id and g.fingerprint = i.fp)
      union all
      (select g.id, g.fingerprint, g.merged_into, g.merged_own, 2 from group_aliases a
       join error_groups g on g.project_id = a.project_id and g.id = a.group_id
       where a.project_id = i.project_id and a.fingerprint = i.fp)
      union all
      (select g.id, g.fingerprint, g.merged_into, g.merged_own, 3 from error_groups g
       where i.fp1 is not null and g.project_id = i.project_id and g.fingerprint = i.fp1)
      limit 1
    ) o on true
    left join error_groups t on t.project_id = i.project_id and t.id = o.merged_into`;
  return new Map(resolved.map((r) => [`${r.project_id}\u0000${r.fp}`, r]));
}

/** The advisory lock that merges and unmerges take exclusively and every ingest shares, per project. */
export const mergeLockKey = (projectId: string) => `group-merge:${projectId}`;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Writes a batch of events in one transaction: group upserts, distinct users, raw rows through the
 * throttle, traces and rollups. Returns which events were stored as rows and the groups touched.
 *
 * Lock order is the same in every transaction: the project's merge lock (shared; a merge or unmerge
 * takes it exclusively, so it never interleaves with a write and counts move exactly), then groups
 * by fingerprint, then users, traces and rollups by key. The throttle reads the window only after the
 * group rows are locked, so concurrent transactions on one fingerprint (from any instance) see each
 * other's stores. `extra` runs last in the same transaction, before it commits, with which events
 * were stored (not when every event was a repeat of an event id): whatever it writes commits or rolls
 * back with the events.
 */
export async function writeEvents(
  sql: Sql,
  input: EventRow[],
  throttle: ThrottleRule,
  groupingVersion = 2,
  extra?: (tx: TxSql, stored: boolean[]) => Promise<void>,
): Promise<WriteResult> {
  if (input.length === 0) return { stored: [], groups: [] };
  const projects = [...new Set(input.map((e) => e.projectId))].sort();
  const hasEventIds = input.some((e) => e.eventId);

  // a snoozed (ignored) group reopens on the first occurrence past its time or its occurrence target
  const snoozeOver = sql`(g.status = 'ignored' and (g.snooze_until <= now() or g.snooze_count <= g.count + excluded.count))`;

  let commitSent = false;
  try {
    return await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock_shared(hashtextextended(k, 0))
               from unnest(${projects.map(mergeLockKey)}::text[]) k order by k`;
      // events already received under their id are left out before anything is counted
      const fresh = hasEventIds ? await claimEventIds(tx, input) : null;
      const rows = fresh ? input.filter((_, i) => fresh[i]) : input;
      if (rows.length === 0) return { stored: input.map(() => false), groups: [] };
      const res = await resolveGroups(tx, rows);
      const at = (e: EventRow) => res.get(`${e.projectId}\u0000${e.fingerprint}`)!;
      // the key (fingerprint) of the group an event lands in, and of its own member row when merged
      const targetKey = (e: EventRow) => {
        const r = at(e);
        return r.target_fp ?? r.own_fp ?? e.fingerprint;
      };
      const groups = aggregateGroups(rows, (e) => {
        const r = at(e);
        return r.target_fp ? [r.target_fp, r.own_fp!] : [targetKey(e)];
      });

      // fingerprints that joined a group through the previous version's fingerprint
      const aliases = [...res.values()]
        .filter((r) => r.via === 3)
        .map((r) => ({ project_id: r.project_id, fingerprint: r.fp, group_id: r.row_id }))
        .sort((a, b) => (a.project_id + a.fingerprint < b.project_id + b.fingerprint ? -1 : 1));
      if (aliases.length > 0) {
        await tx`
          insert into group_aliases (project_id, fingerprint, group_id)
          select project_id, fingerprint, group_id
          from json_to_recordset(${tx.json(aliases as never)}::json) as t(project_id uuid, fingerprint text, group_id uuid)
          order by project_id, fingerprint
          on conflict do nothing`;
      }

      const upserted = await tx<(TouchedGroup & { merged_into: string | null })[]>`
        insert into error_groups as g
          (project_id, fingerprint, message, level, count, first_seen, last_seen, culprit, environment, first_version, last_version, grouping_version)
        select project_id, fingerprint, message, level, count, first_seen, last_seen, culprit, environment, first_version, last_version, ${groupingVersion}
        from json_to_recordset(${tx.json(groups.map((g) => ({ ...g, first_seen: iso(g.first_seen), last_seen: iso(g.last_seen) })) as never)}::json)
          as t(project_id uuid, fingerprint text, message text, level text, count bigint,
               first_seen timestamptz, last_seen timestamptz, culprit text, environment text, first_version text, last_version text)
        order by project_id, fingerprint
        on conflict (project_id, fingerprint) do update set
          count = g.count + excluded.count,
          first_seen = least(g.first_seen, excluded.first_seen),
          last_seen = greatest(g.last_seen, excluded.last_seen),
          environment = case when excluded.last_seen >= g.last_seen then excluded.environment else g.environment end,
          level = case when level_rank(excluded.level) > level_rank(g.level) then excluded.level else g.level end,
          culprit = coalesce(g.culprit, excluded.culprit),
          first_version = coalesce(g.first_version, excluded.first_version),
          last_version = case when excluded.last_version is not null and (g.last_version is null or excluded.last_seen >= g.last_seen)
            then excluded.last_version else g.last_version end,
          -- a member of a merged issue keeps its status: the issue it is merged into has the live one
          status = case when g.merged_into is null and (g.status = 'resolved' or ${snoozeOver}) then 'open' else g.status end,
          regressed_at = case when g.status = 'resolved' and g.merged_into is null then now() else g.regressed_at end,
          regressed_version = case when g.status = 'resolved' and g.merged_into is null then excluded.last_version else g.regressed_version end,
          resolved_at = case when g.status = 'resolved' and g.merged_into is null then null else g.resolved_at end,
          snooze_until = case when ${snoozeOver} then null else g.snooze_until end,
          snooze_count = case when ${snoozeOver} then null else g.snooze_count end,
          snooze_users = case when ${snoozeOver} then null else g.snooze_users end
        returning project_id, fingerprint, id, (xmax = 0) as created,
          coalesce(regressed_at = now(), false) as regressed, status, merged_into`;
      const touched: TouchedGroup[] = upserted
        .filter((g) => g.merged_into == null)
        .map(({ merged_into: _, ...g }) => g);

      const groupId = new Map(upserted.map((g) => [`${g.project_id}\u0000${g.fingerprint}`, g.id]));
      const events = rows.map((e, seq) => {
        const r = at(e);
        const group_id = groupId.get(`${e.projectId}\u0000${targetKey(e)}`)!;
        return {
          seq,
          project_id: e.projectId,
          group_id,
          origin_id: r.target_fp ? r.own_id : group_id,
          family: r.family,
          message: e.message,
          level: e.level,
          stack_trace: e.stackTrace,
          user_id: e.userId,
          player_name: e.playerName,
          trace_id: e.traceId,
          job_id: e.jobId,
          place_id: e.placeId,
          game_version: e.gameVersion,
          environment: e.environment,
          context: e.context ?? null,
          tags: e.tags,
          count: e.count,
          ts: iso(e.timestamp),
        };
      });

      // Everything else in one statement, run after the group locks above were taken. Each part locks
      // its rows in key order (users, traces, rollups), and each group row is written once more at most.
      // group_id is the issue an event lands in; origin_id the group row of its own fingerprint (the
      // same unless the fingerprint belongs to an issue merged into another one).
      //  - group_users: distinct users per origin; a group's user_count grows by the users new to it
      //    (for a merged issue: new to all its members); project_users: each user's latest occurrence
      //    to the minute (a write is skipped while the stored time is less than a minute older);
      //  - the throttle, per origin (fingerprint): free places are the limit minus its stored untraced
      //    rows received in the window (their times live in the locked row); untraced events take them
      //    in arrival order (row_number), traced events are always kept;
      //  - traces, and occurrences per group, level and origin by minute and by hour (stats read only these).
      // Receive time is the clock when this statement runs, after the group locks were granted, not the
      // transaction's start (now()): transactions on one group then hold the lock in the order of their
      // receive times, so each one judges the window with every earlier row already in it, from any
      // instance, however long it waited for the lock.
      const window = sql`make_interval(secs => ${throttle.windowSeconds})`;
      const usersOver = sql`(g.status = 'ignored' and g.snooze_users <= g.user_count + p.users)`;
      const kept = await tx<{ seq: number }[]>`
        with clock as materialized (
          select clock_timestamp() as received_at
        ), input as (
          select * from json_to_recordset(${tx.json(events as never)}::json) as t(
            seq int, project_id uuid, group_id uuid, origin_id uuid, family uuid[], message text, level text, stack_trace text,
            user_id bigint, player_name text, trace_id uuid, job_id text, place_id bigint, game_version text, environment text,
            context jsonb, tags jsonb, count int, ts timestamptz)
        ), new_pairs as (
          insert into group_users (project_id, group_id, user_id)
          select distinct project_id, origin_id, user_id from input where user_id is not null
          order by 1, 2, 3
          on conflict do nothing
          returning project_id, group_id as origin_id, user_id
        ), new_users as (
          -- per group an event lands in: users new to it; per member row: users new to that member
          select i.project_id, i.group_id as id, count(distinct np.user_id) filter (
              where i.family is null or not exists (
                select 1 from group_users x
                where x.project_id = i.project_id and x.group_id = any(i.family) and x.user_id = np.user_id)) as n
          from new_pairs np
          join (select distinct project_id, group_id, origin_id, family from input) i
            on i.project_id = np.project_id and i.origin_id = np.origin_id
          group by 1, 2
          union all
          select np.project_id, np.origin_id, count(*) from new_pairs np
          where exists (select 1 from input i where i.project_id = np.project_id and i.origin_id = np.origin_id and i.group_id <> i.origin_id)
          group by 1, 2
        ), seen_users as (
          insert into project_users as pu (project_id, user_id, last_seen, player_name)
          select project_id, user_id, max(ts), (array_agg(player_name order by ts desc) filter (where player_name is not null))[1]
          from input where user_id is not null
          group by 1, 2 order by 1, 2
          on conflict (project_id, user_id) do update set
            last_seen = greatest(pu.last_seen, excluded.last_seen),
            player_name = coalesce(excluded.player_name, pu.player_name)
          where pu.last_seen < excluded.last_seen - interval '1 minute'
            or (excluded.player_name is not null and pu.player_name is distinct from excluded.player_name)
        ), by_environment as (
          insert into group_environments as ge (project_id, group_id, environment, count, first_seen, last_seen)
          select project_id, group_id, environment, sum(count), min(ts), max(ts) from input
          group by 1, 2, 3 order by 1, 2, 3
          on conflict (project_id, group_id, environment) do update set
            count = ge.count + excluded.count,
            first_seen = least(ge.first_seen, excluded.first_seen),
            last_seen = greatest(ge.last_seen, excluded.last_seen)
        ), by_version as (
          insert into group_versions as gv (project_id, group_id, version, count, first_seen, last_seen)
          select project_id, group_id, game_version, sum(count), min(ts), max(ts) from input
          where game_version is not null
          group by 1, 2, 3 order by 1, 2, 3
          on conflict (project_id, group_id, version) do update set
            count = gv.count + excluded.count,
            first_seen = least(gv.first_seen, excluded.first_seen),
            last_seen = greatest(gv.last_seen, excluded.last_seen)
        ), ranked as (
          -- each untraced event with its place in arrival order within its fingerprint's row and the
          -- number of rows that row already stored in the window (one primary-key probe per event, no
          -- join of two derived sets, which the planner would run as a nested loop)
          select i.*, row_number() over (partition by i.project_id, i.origin_id order by i.seq) as rn,
            (select count(*) from unnest(g.throttle_times) t where t > (select received_at from clock) - ${window}) as used
          from input i join error_groups g on g.project_id = i.project_id and g.id = i.origin_id
          where i.trace_id is null
        ), kept as (
          select seq, project_id, group_id, origin_id, message, level, stack_trace, user_id, player_name, trace_id,
            job_id, place_id, game_version, environment, context, tags, count, ts
          from input where trace_id is not null
          union all
          select r.seq, r.project_id, r.group_id, r.origin_id, r.message, r.level, r.stack_trace, r.user_id, r.player_name, r.trace_id,
            r.job_id, r.place_id, r.game_version, r.environment, r.context, r.tags, r.count, r.ts
          from ranked r
          where r.rn + r.used <= ${throttle.limit}
        ), stored as (
          insert into events (project_id, group_id, origin_group_id, message, level, stack_trace, user_id, player_name, trace_id,
            job_id, place_id, game_version, environment, context, tags, count, "timestamp", received_at)
          select project_id, group_id, nullif(origin_id, group_id), message, level, stack_trace, user_id, player_name, trace_id,
            job_id, place_id, game_version, environment, context,
            case when tags is null then null else array(select jsonb_array_elements_text(tags)) end,
            count, ts, (select received_at from clock)
          from kept order by seq
        ), traced as (
          insert into traces as tr (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
          select project_id, trace_id, min(ts), max(ts), count(*), array_agg(distinct group_id order by group_id)
          from input where trace_id is not null
          group by 1, 2 order by 1, 2
          on conflict (project_id, trace_id) do update set
            first_seen = least(tr.first_seen, excluded.first_seen),
            last_seen = greatest(tr.last_seen, excluded.last_seen),
            event_count = tr.event_count + excluded.event_count,
            group_ids = array(select distinct x from unnest(tr.group_ids || excluded.group_ids) x order by x)
        ), by_minute as (
          insert into rollup_minute as r (project_id, bucket, group_id, level, origin_id, count)
          select project_id, date_trunc('minute', ts), group_id, level, origin_id, sum(count) from input
          group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
          on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
        ), by_hour as (
          insert into rollup_hour as r (project_id, bucket, group_id, level, origin_id, count)
          select project_id, date_trunc('hour', ts), group_id, level, origin_id, sum(count) from input
          group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
          on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
        ), by_day as (
          insert into rollup_day as r (project_id, bucket, group_id, level, origin_id, count)
          select project_id, date_trunc('day', ts, 'UTC'), group_id, level, origin_id, sum(count) from input
          group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
          on conflict (project_id, bucket, group_id, level, origin_id) do update set count = r.count + excluded.count
        ), per_row as (
          select project_id, id, sum(users) as users, sum(stored) as stored, sum(untraced) as untraced from (
            select project_id, id, n as users, 0 as stored, 0 as untraced from new_users
            union all
            select project_id, group_id, 0, count(*), 0 from kept group by 1, 2
            union all
            select project_id, origin_id, 0, 0, count(*) from kept where trace_id is null group by 1, 2
          ) u group by 1, 2
        ), bump as (
          update error_groups g set
            user_count = g.user_count + p.users,
            -- a group snoozed until N more users reopens when the N-th new user arrives
            status = case when ${usersOver} then 'open' else g.status end,
            snooze_until = case when ${usersOver} then null else g.snooze_until end,
            snooze_count = case when ${usersOver} then null else g.snooze_count end,
            snooze_users = case when ${usersOver} then null else g.snooze_users end,
            stored_count = g.stored_count + p.stored,
            throttle_times = case when p.untraced = 0 then g.throttle_times
              else array(select t from unnest(g.throttle_times) t where t > (select received_at from clock) - ${window})
                || array_fill((select received_at from clock), array[p.untraced::int]) end
          from per_row p
          where g.project_id = p.project_id and g.id = p.id and (p.users > 0 or p.stored > 0 or p.untraced > 0)
        )
        select seq from kept`;

      const keptSeqs = new Set(kept.map((r) => r.seq));
      const storedRows = rows.map((_, i) => keptSeqs.has(i));
      // back to the caller's order: a dropped repeat of an event id was not stored
      let k = 0;
      const stored = fresh ? fresh.map((f) => (f ? storedRows[k++] : false)) : storedRows;
      await extra?.(tx, stored);
      commitSent = true;
      return { stored, groups: touched };
    });
  } catch (err) {
    // lost before COMMIT was sent, the server rolled the transaction back: safe to write again
    if (!commitSent && isConnectionLoss(err)) throw new NotCommittedError(err);
    throw err;
  }
}

/** The connection was lost before the batch's COMMIT was sent: nothing of it was written. */
export class NotCommittedError extends Error {
  readonly code: string;
  constructor(readonly cause: unknown) {
    super(`Write not committed: ${(cause as Error)?.message ?? cause}`);
    this.code = String((cause as { code?: unknown }).code);
  }
}
