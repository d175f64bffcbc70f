import { isConnectionLoss, type Sql } from "./client.js";

export type Level = "error" | "warn" | "info";

/** One validated, normalized event ready to be written. */
export type EventRow = {
  projectId: string;
  fingerprint: string;
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
};

/** Per (project, fingerprint): summed counts, first message/culprit, most severe level, latest environment. */
function aggregateGroups(rows: EventRow[]): GroupAgg[] {
  const map = new Map<string, GroupAgg>();
  for (const e of rows) {
    const key = `${e.projectId}\u0000${e.fingerprint}`;
    const g = map.get(key);
    if (!g) {
      map.set(key, {
        project_id: e.projectId,
        fingerprint: e.fingerprint,
        message: e.message,
        level: e.level,
        count: e.count,
        first_seen: e.timestamp,
        last_seen: e.timestamp,
        culprit: e.culprit,
        environment: e.environment,
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
  }
  // a fixed lock order (project, fingerprint) keeps concurrent batches from deadlocking
  return [...map.values()].sort((a, b) =>
    a.project_id < b.project_id ? -1 : a.project_id > b.project_id ? 1 : a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : 0,
  );
}


const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Writes a batch of events in one transaction: group upserts, distinct users, raw rows through the
 * throttle, traces and rollups. Returns which events were stored as rows and the groups touched.
 *
 * Lock order is the same in every transaction (groups by fingerprint, then users, traces and rollups
 * by key), and the throttle reads the window only after the group rows are locked, so concurrent
 * transactions on one fingerprint (from any instance) see each other's stores.
 */
export async function writeEvents(sql: Sql, rows: EventRow[], throttle: ThrottleRule): Promise<WriteResult> {
  if (rows.length === 0) return { stored: [], groups: [] };
  const groups = aggregateGroups(rows);

  let commitSent = false;
  try {
    return await sql.begin(async (tx) => {
      const touched = await tx<TouchedGroup[]>`
        insert into error_groups as g
          (project_id, fingerprint, message, level, count, first_seen, last_seen, culprit, environment)
        select project_id, fingerprint, message, level, count, first_seen, last_seen, culprit, environment
        from json_to_recordset(${tx.json(groups.map((g) => ({ ...g, first_seen: iso(g.first_seen), last_seen: iso(g.last_seen) })) as never)}::json)
          as t(project_id uuid, fingerprint text, message text, level text, count bigint,
               first_seen timestamptz, last_seen timestamptz, culprit text, environment text)
        order by project_id, fingerprint
        on conflict (project_id, fingerprint) do update set
          count = g.count + excluded.count,
          first_seen = least(g.first_seen, excluded.first_seen),
          last_seen = greatest(g.last_seen, excluded.last_seen),
          environment = case when excluded.last_seen >= g.last_seen then excluded.environment else g.environment end,
          level = case when level_rank(excluded.level) > level_rank(g.level) then excluded.level else g.level end,
          culprit = coalesce(g.culprit, excluded.culprit),
          status = case when g.status = 'resolved' then 'open' else g.status end,
          regressed_at = case when g.status = 'resolved' then now() else g.regressed_at end,
          resolved_at = case when g.status = 'resolved' then null else g.resolved_at end
        returning project_id, fingerprint, id, (xmax = 0) as created,
          coalesce(regressed_at = now(), false) as regressed, status`;

      const groupId = new Map(touched.map((g) => [`${g.project_id}\u0000${g.fingerprint}`, g.id]));
      const events = rows.map((e, seq) => ({
        seq,
        project_id: e.projectId,
        group_id: groupId.get(`${e.projectId}\u0000${e.fingerprint}`)!,
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
      }));

      // Everything else in one statement, run after the group locks above were taken. Each part locks
      // its rows in key order (users, traces, rollups), and the group row is written once more at most.
      //  - group_users / project_users: distinct users per group, and each user's latest occurrence to
      //    the minute (a write is skipped while the stored time is less than a minute older);
      //  - the throttle: a group's free places are the limit minus its stored untraced rows received in
      //    the window (their times live in the locked group row); untraced events take them in arrival
      //    order (row_number), traced events are always kept;
      //  - traces, and occurrences per group and level by minute and by hour (stats read only these).
      // Receive time is the clock when this statement runs, after the group locks were granted, not the
      // transaction's start (now()): transactions on one group then hold the lock in the order of their
      // receive times, so each one judges the window with every earlier row already in it, from any
      // instance, however long it waited for the lock.
      const window = sql`make_interval(secs => ${throttle.windowSeconds})`;
      const kept = await tx<{ seq: number }[]>`
        with clock as materialized (
          select clock_timestamp() as received_at
        ), input as (
          select * from json_to_recordset(${tx.json(events as never)}::json) as t(
            seq int, project_id uuid, group_id uuid, message text, level text, stack_trace text, user_id bigint,
            player_name text, trace_id uuid, job_id text, place_id bigint, game_version text, environment text,
            context jsonb, tags jsonb, count int, ts timestamptz)
        ), new_pairs as (
          insert into group_users (project_id, group_id, user_id)
          select distinct project_id, group_id, user_id from input where user_id is not null
          order by 1, 2, 3
          on conflict do nothing
          returning project_id, group_id
        ), seen_users as (
          insert into project_users as pu (project_id, user_id, last_seen)
          select project_id, user_id, max(ts) from input where user_id is not null
          group by 1, 2 order by 1, 2
          on conflict (project_id, user_id) do update set last_seen = excluded.last_seen
          where pu.last_seen < excluded.last_seen - interval '1 minute'
        ), ranked as (
          -- each untraced event with its place in arrival order within its group and the number of
          -- rows the group already stored in the window (one primary-key probe per event, no join of
          -- two derived sets, which the planner would run as a nested loop)
          select i.*, row_number() over (partition by i.project_id, i.group_id order by i.seq) as rn,
            (select count(*) from unnest(g.throttle_times) t where t > (select received_at from clock) - ${window}) as used
          from input i join error_groups g on g.project_id = i.project_id and g.id = i.group_id
          where i.trace_id is null
        ), kept as (
          select seq, project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
            job_id, place_id, game_version, environment, context, tags, count, ts
          from input where trace_id is not null
          union all
          select r.seq, r.project_id, r.group_id, r.message, r.level, r.stack_trace, r.user_id, r.player_name, r.trace_id,
            r.job_id, r.place_id, r.game_version, r.environment, r.context, r.tags, r.count, r.ts
          from ranked r
          where r.rn + r.used <= ${throttle.limit}
        ), stored as (
          insert into events (project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
            job_id, place_id, game_version, environment, context, tags, count, "timestamp", received_at)
          select project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
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
          insert into rollup_minute as r (project_id, bucket, group_id, level, count)
          select project_id, date_trunc('minute', ts), group_id, level, sum(count) from input
          group by 1, 2, 3, 4 order by 1, 2, 3, 4
          on conflict (project_id, bucket, group_id, level) do update set count = r.count + excluded.count
        ), by_hour as (
          insert into rollup_hour as r (project_id, bucket, group_id, level, count)
          select project_id, date_trunc('hour', ts), group_id, level, sum(count) from input
          group by 1, 2, 3, 4 order by 1, 2, 3, 4
          on conflict (project_id, bucket, group_id, level) do update set count = r.count + excluded.count
        ), bump as (
          update error_groups g set
            user_count = g.user_count + coalesce(nu.n, 0),
            stored_count = g.stored_count + coalesce(k.n, 0),
            throttle_times = case when coalesce(k.untraced, 0) = 0 then g.throttle_times
              else array(select t from unnest(g.throttle_times) t where t > (select received_at from clock) - ${window})
                || array_fill((select received_at from clock), array[k.untraced::int]) end
          from (select distinct project_id, group_id from input) a
          left join (select project_id, group_id, count(*) as n from new_pairs group by 1, 2) nu
            on nu.project_id = a.project_id and nu.group_id = a.group_id
          left join (select project_id, group_id, count(*) as n, count(*) filter (where trace_id is null) as untraced
                     from kept group by 1, 2) k
            on k.project_id = a.project_id and k.group_id = a.group_id
          where g.project_id = a.project_id and g.id = a.group_id and (nu.n is not null or k.n is not null)
        )
        select seq from kept`;

      const keptSeqs = new Set(kept.map((r) => r.seq));
      commitSent = true;
      return { stored: rows.map((_, i) => keptSeqs.has(i)), groups: touched };
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
