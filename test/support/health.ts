import type { Sql } from "../../db/client.js";

/**
 * A scripted set of game servers for the health tests: a rollout from version 41 to 42, an
 * out-of-memory close and a server that goes silent. The figures each test expects are written
 * beside the script.
 */

export const MIN = 60_000;

/** A base time two hours ago on a whole minute, so every time of the script is in the past and in the 24h window. */
export function scriptBase(now = Date.now()): number {
  return Math.floor((now - 2 * 3_600_000) / MIN) * MIN;
}

const iso = (t: number) => new Date(t).toISOString();

export type Report = Record<string, unknown>;

export function sample(t: number, players: number, memory: number, heartbeat: number) {
  return {
    at: iso(t),
    players,
    memory_mb: memory,
    memory_tags: { Script: 80.1, PhysicsParts: 60.2 },
    heartbeat_ms: heartbeat,
    physics_fps: 59.8,
    instances: 40213,
    data_in_kbps: 12.5,
    data_out_kbps: 80.2,
    ping_ms: players > 0 ? { p50: 60, p90: 140 } : null,
    sdk: { queued: 3, dropped: 0 },
    datastore_budget: { GetAsync: 300, SetIncrementAsync: 300 },
  };
}

export function session(id: string, userId: number, start: number, end: number | null, errors = { server: 0, client: 0 }, exit = "Unknown") {
  return { id, user_id: String(userId), started_at: iso(start), ...(end === null ? {} : { ended_at: iso(end), exit_reason: exit }), errors };
}

export function server(jobId: string, version: string, start: number, end?: { at: number; reason: string }) {
  return {
    job_id: jobId,
    place_id: "123",
    place_version: version,
    environment: "production",
    started_at: iso(start),
    ...(end ? { ended_at: iso(end.at), close_reason: end.reason } : {}),
  };
}

/**
 * The script's reports, in the order a game would send them:
 * - A (v41) from T: samples at T+1..T+3 min (players 2, 3, 3; memory 100, 110, 120; heartbeat 16, 17, 18);
 *   s1 (user 1) ends at T+2 clean, s2 (user 2) ends at T+3 with a server error, s3 (user 3) open. Live.
 * - B (v42) from T+1: sample at T+2 (players 4, memory 200, heartbeat 20); s4 (user 1) ends clean at T+5
 *   (ServerClosed); B closes OutOfMemory at T+5.
 * - C (v42) from T+1: sample at T+2 (players 1, memory 300, heartbeat 30); s5 (user 4) open; then silent.
 */
export function script(T: number): Report[] {
  return [
    { server: server("A", "41", T), sessions: [session("A/1/1", 1, T, null), session("A/2/1", 2, T, null), session("A/3/1", 3, T, null)], samples: [sample(T + MIN, 2, 100, 16)] },
    { server: server("B", "42", T + MIN), sessions: [session("B/1/1", 1, T + MIN, null)], samples: [] },
    { server: server("C", "42", T + MIN), sessions: [session("C/4/1", 4, T + MIN, null)], samples: [sample(T + 2 * MIN, 1, 300, 30)] },
    {
      server: server("A", "41", T),
      sessions: [session("A/1/1", 1, T, T + 2 * MIN, { server: 0, client: 0 }, "Unknown")],
      samples: [sample(T + 2 * MIN, 3, 110, 17)],
    },
    {
      server: server("A", "41", T),
      sessions: [session("A/2/1", 2, T, T + 3 * MIN, { server: 1, client: 0 }, "CreatorKick")],
      samples: [sample(T + 3 * MIN, 3, 120, 18)],
    },
    { server: server("B", "42", T + MIN), sessions: [], samples: [sample(T + 2 * MIN, 4, 200, 20)] },
    {
      server: server("B", "42", T + MIN, { at: T + 5 * MIN, reason: "OutOfMemory" }),
      sessions: [session("B/1/1", 1, T + MIN, T + 5 * MIN, { server: 0, client: 0 }, "ServerClosed")],
      samples: [],
    },
  ];
}

/** Every health row and rollup of a project, summed: what a recount must equal after retries. */
export async function healthState(sql: Sql, projectId: string) {
  const [servers, sessions, samples, hours, minutes, hist, players] = await Promise.all([
    sql`select job_id, place_version, started_at, ended_at, close_reason, lost_at is not null as lost, players, memory_mb from health_servers
        where project_id = ${projectId} order by job_id`,
    sql`select session_id, job_id, user_id::text, place_version, started_at, ended_at, exit_reason, errors_server, errors_client from health_sessions
        where project_id = ${projectId} order by session_id`,
    sql`select job_id, at, players, memory_mb from health_samples where project_id = ${projectId} order by job_id, at`,
    sql`select place_version, hour, sum(samples)::int as samples, sum(player_minutes)::int as pm, sum(servers_started)::int as ss,
          sum(servers_ended)::int as se, sum(servers_oom)::int as so, sum(servers_abnormal)::int as sa, sum(sessions_started)::int as xs,
          sum(sessions_ended)::int as xe, sum(sessions_error_free)::int as xf
        from health_hour where project_id = ${projectId} group by 1, 2 order by 1, 2`,
    sql`select place_version, minute, sum(samples)::int as samples, sum(player_minutes)::int as pm from health_minute
        where project_id = ${projectId} group by 1, 2 order by 1, 2`,
    sql`select place_version, hour, metric, age_bucket, bin, sum(n)::int as n from health_hist_hour where project_id = ${projectId}
        group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5`,
    sql`select place_version, day, user_id::text, sum(sessions_started)::int as s, sum(sessions_ended)::int as e, sum(sessions_errored)::int as r
        from health_player_days where project_id = ${projectId} group by 1, 2, 3 order by 1, 2, 3`,
  ]);
  return { servers, sessions, samples, hours, minutes, hist, players };
}

/** What the rollups must equal: recounted from the rows (hours and player days). */
export async function recount(sql: Sql, projectId: string) {
  const hours = await sql`
    with s as (select * from health_servers where project_id = ${projectId}),
    x as (select * from health_sessions where project_id = ${projectId}),
    cells as (
      select place_version, date_trunc('hour', at) as hour, 1 as samples, players as pm, 0 as ss, 0 as se, 0 as so, 0 as sa, 0 as xs, 0 as xe, 0 as xf
        from health_samples where project_id = ${projectId}
      union all select place_version, date_trunc('hour', started_at), 0, 0, 1, 0, 0, 0, 0, 0, 0 from s
      union all select place_version, date_trunc('hour', ended_at), 0, 0, 0, 1, (close_reason = 'OutOfMemory')::int, 0, 0, 0, 0 from s where ended_at is not null
      union all select place_version, date_trunc('hour', lost_at), 0, 0, 0, 0, 0, 1, 0, 0, 0 from s where ended_at is null and lost_at is not null
      union all select place_version, date_trunc('hour', started_at), 0, 0, 0, 0, 0, 0, 1, 0, 0 from x
      union all select place_version, date_trunc('hour', ended_at), 0, 0, 0, 0, 0, 0, 0, 1,
          (errors_server + errors_client = 0 and not crashed and exit_reason is distinct from 'ServerLost')::int from x where ended_at is not null
    )
    select place_version, hour, sum(samples)::int as samples, sum(pm)::int as pm, sum(ss)::int as ss, sum(se)::int as se, sum(so)::int as so,
      sum(sa)::int as sa, sum(xs)::int as xs, sum(xe)::int as xe, sum(xf)::int as xf
    from cells group by 1, 2 order by 1, 2`;
  return hours;
}

/** The per-version player counts equal a recount from the player days, and the open-session counts the open rows. */
export async function playersExact(sql: Sql, projectId: string) {
  const counted = await sql`
    select place_version, active_day::text, ended_day::text, errored_day::text, sum(n)::int as n from health_player_counts
    where project_id = ${projectId} group by 1, 2, 3, 4 having sum(n) <> 0 order by 1, 2, 3, 4`;
  const recounted = await sql`
    select place_version, active_day::text, ended_day::text, errored_day::text, count(*)::int as n from (
      select place_version, user_id,
        coalesce(max(day) filter (where sessions_started > 0 or sessions_ended > 0), '-infinity') as active_day,
        coalesce(max(day) filter (where sessions_ended > 0), '-infinity') as ended_day,
        coalesce(max(day) filter (where sessions_errored > 0), '-infinity') as errored_day
      from health_player_days where project_id = ${projectId} group by 1, 2) u
    group by 1, 2, 3, 4 order by 1, 2, 3, 4`;
  // and the kept open-session counts equal the open session rows
  const open = await sql`
    select place_version, environment, sum(n)::int as n from health_open where project_id = ${projectId} group by 1, 2 having sum(n) <> 0 order by 1, 2`;
  const openRows = await sql`
    select place_version, environment, count(*)::int as n from health_sessions where project_id = ${projectId} and ended_at is null group by 1, 2 order by 1, 2`;
  return { counted: { players: counted, open }, recounted: { players: recounted, open: openRows } };
}
