import type { Sql } from "./client.js";

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
const MINUTE = 60_000;
const HOUR = 3_600_000;

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

function sumBy<T>(items: T[], key: (t: T) => string, value: (t: T) => number): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of items) {
    const k = key(t);
    m.set(k, (m.get(k) ?? 0) + value(t));
  }
  return m;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Writes a batch of events in one transaction: group upserts, distinct users, raw rows through the
 * throttle, traces and rollups. Returns which events were stored as rows and the groups touched.
 *
 * Lock order is the same in every transaction (groups by fingerprint, then users, traces and rollups
 * by key), and the throttle counts the window only after the group rows are locked, so concurrent
 * transactions on one fingerprint see each other's rows.
 */
export async function writeEvents(sql: Sql, rows: EventRow[], throttle: ThrottleRule): Promise<WriteResult> {
  if (rows.length === 0) return { stored: [], groups: [] };
  const groups = aggregateGroups(rows);

  return sql.begin(async (tx) => {
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

    const pending: Promise<unknown>[] = [];

    // Distinct users per group (user_count) and each user's latest occurrence (affected_users).
    const withUser = events.filter((e) => e.user_id !== null);
    if (withUser.length) {
      const pairs = [...new Map(withUser.map((e) => [`${e.project_id}|${e.group_id}|${e.user_id}`, e])).values()].map((e) => ({
        p: e.project_id,
        g: e.group_id,
        u: e.user_id,
      }));
      const latest = new Map<string, { p: string; u: string; ts: string }>();
      for (const e of withUser) {
        const k = `${e.project_id}|${e.user_id}`;
        const cur = latest.get(k);
        if (!cur || cur.ts < e.ts) latest.set(k, { p: e.project_id, u: e.user_id!, ts: e.ts });
      }
      pending.push(tx`
        with ins as (
          insert into group_users (project_id, group_id, user_id)
          select p, g, u from json_to_recordset(${tx.json(pairs as never)}::json) as t(p uuid, g uuid, u bigint)
          order by p, g, u
          on conflict do nothing
          returning project_id, group_id
        ), bump as (
          update error_groups eg set user_count = eg.user_count + c.n
          from (select project_id, group_id, count(*) as n from ins group by 1, 2) c
          where eg.project_id = c.project_id and eg.id = c.group_id
        )
        insert into project_users as pu (project_id, user_id, last_seen)
        select p, u, ts from json_to_recordset(${tx.json([...latest.values()] as never)}::json) as t(p uuid, u bigint, ts timestamptz)
        order by p, u
        on conflict (project_id, user_id) do update set last_seen = excluded.last_seen
        where pu.last_seen < excluded.last_seen`);
    }

    // Raw rows: traced events always; untraced ones only while the group's rolling window has room.
    // The window is counted in this statement, after the group locks above were taken.
    const storedRows = tx<{ seq: number }[]>`
      with input as (
        select * from json_to_recordset(${tx.json(events as never)}::json) as t(
          seq int, project_id uuid, group_id uuid, message text, level text, stack_trace text, user_id bigint,
          player_name text, trace_id uuid, job_id text, place_id bigint, game_version text, environment text,
          context jsonb, tags jsonb, count int, ts timestamptz)
      ), used as (
        select k.project_id, k.group_id,
          (select count(*) from (
             select 1 from events e
             where e.project_id = k.project_id and e.group_id = k.group_id and e.trace_id is null
               and e.received_at > now() - make_interval(secs => ${throttle.windowSeconds})
             limit ${throttle.limit}) w) as n
        from (select distinct project_id, group_id from input where trace_id is null) k
      ), ranked as (
        select i.*, row_number() over (partition by i.project_id, i.group_id order by i.seq) as rn
        from input i where i.trace_id is null
      ), kept as (
        select * from input where trace_id is not null
        union all
        select r.seq, r.project_id, r.group_id, r.message, r.level, r.stack_trace, r.user_id, r.player_name, r.trace_id,
          r.job_id, r.place_id, r.game_version, r.environment, r.context, r.tags, r.count, r.ts
        from ranked r join used u on u.project_id = r.project_id and u.group_id = r.group_id
        where r.rn + u.n <= ${throttle.limit}
      ), ins as (
        insert into events (project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
          job_id, place_id, game_version, environment, context, tags, count, "timestamp")
        select project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
          job_id, place_id, game_version, environment, context,
          case when tags is null then null else array(select jsonb_array_elements_text(tags)) end,
          count, ts
        from kept order by seq
      ), bump as (
        update error_groups eg set stored_count = eg.stored_count + c.n
        from (select project_id, group_id, count(*) as n from kept group by 1, 2) c
        where eg.project_id = c.project_id and eg.id = c.group_id
      )
      select seq from kept`;
    pending.push(storedRows);

    const traced = events.filter((e) => e.trace_id !== null);
    if (traced.length) {
      const traces = new Map<string, { p: string; t: string; first: string; last: string; n: number; groups: Set<string> }>();
      for (const e of traced) {
        const k = `${e.project_id}|${e.trace_id}`;
        const cur = traces.get(k);
        if (!cur) traces.set(k, { p: e.project_id, t: e.trace_id!, first: e.ts, last: e.ts, n: 1, groups: new Set([e.group_id]) });
        else {
          cur.n += 1;
          if (e.ts < cur.first) cur.first = e.ts;
          if (e.ts > cur.last) cur.last = e.ts;
          cur.groups.add(e.group_id);
        }
      }
      const list = [...traces.values()].map((t) => ({ ...t, groups: [...t.groups] }));
      pending.push(tx`
        insert into traces as tr (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
        select p, t, first, last, n, array(select json_array_elements_text(groups)::uuid)
        from json_to_recordset(${tx.json(list as never)}::json) as x(p uuid, t uuid, first timestamptz, last timestamptz, n bigint, groups json)
        order by p, t
        on conflict (project_id, trace_id) do update set
          first_seen = least(tr.first_seen, excluded.first_seen),
          last_seen = greatest(tr.last_seen, excluded.last_seen),
          event_count = tr.event_count + excluded.event_count,
          group_ids = array(select distinct x from unnest(tr.group_ids || excluded.group_ids) x order by x)`);
    }

    // Rollups by occurrence time, per group and level: stats read these, never the raw rows.
    const bucketRows = (size: number) =>
      [...sumBy(events, (e) => `${e.project_id}|${Math.floor(Date.parse(e.ts) / size) * size}|${e.group_id}|${e.level}`, (e) => e.count)]
        .map(([k, c]) => {
          const [p, b, g, l] = k.split("|");
          return { p, b: iso(Number(b)), g, l, c };
        });
    pending.push(tx`
      with m as (
        insert into rollup_minute as r (project_id, bucket, group_id, level, count)
        select p, b, g, l, c from json_to_recordset(${tx.json(bucketRows(MINUTE) as never)}::json) as x(p uuid, b timestamptz, g uuid, l text, c bigint)
        order by p, b, g, l
        on conflict (project_id, bucket, group_id, level) do update set count = r.count + excluded.count
      )
      insert into rollup_hour as r (project_id, bucket, group_id, level, count)
      select p, b, g, l, c from json_to_recordset(${tx.json(bucketRows(HOUR) as never)}::json) as x(p uuid, b timestamptz, g uuid, l text, c bigint)
      order by p, b, g, l
      on conflict (project_id, bucket, group_id, level) do update set count = r.count + excluded.count`);

    await Promise.all(pending);
    const kept = new Set((await storedRows).map((r) => r.seq));
    return { stored: rows.map((_, i) => kept.has(i)), groups: touched };
  });
}
