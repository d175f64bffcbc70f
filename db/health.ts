/**
 * Health writes (issue 41, docs/health.md): server, session and sample rows and their rollups.
 *
 * Exactness: every write to the rows of one game server (its report, the silence job, a revival)
 * holds that server's advisory lock for its transaction (`lockServer`), so it reads the rows it is
 * about to change as they are, and adds to the rollups exactly what the change moves
 * (db/health-cells.ts: cells(new) − cells(old)); samples are immutable and count when newly
 * inserted. Rows and rollups commit together, so a retry after a lost connection, a repeated or
 * reordered report, or two instances writing one server's reports at once count nothing twice.
 * Sentry sessions have no server: they take one lock per project.
 *
 * Lock order: the server's (or Sentry session's) advisory lock, its rows, then the rollup rows in
 * key order, table by table in the order of `applyCells`; so writers cannot deadlock.
 */
import { asJson, type Sql, type TxSql } from "./client.js";
import { AGE_BUCKETS, ageBucket, binOf, Cells, METRIC, minuteOf, type PlayerDayCell, type ServerState, type SessionState } from "./health-cells.js";

/** Rollup rows each writer adds to: its connection's shard (reads sum them). */
export const SHARDS = 8;
/** A server that sent nothing for this many sample intervals (60 s) without an end ended abnormally. */
export const SILENT_INTERVALS = 3;
export const SAMPLE_INTERVAL_MS = 60_000;
/** The exit reason of the player sessions a server's abnormal end closes. */
export const SERVER_LOST = "ServerLost";

export type ServerReport = {
  jobId: string;
  placeId: string | null;
  placeVersion: string;
  environment: string;
  startedAt: Date;
  endedAt: Date | null;
  closeReason: string | null;
};
export type SessionReport = {
  id: string;
  userId: string | null;
  startedAt: Date;
  endedAt: Date | null;
  exitReason: string | null;
  errorsServer: number;
  errorsClient: number;
};
export type SampleReport = {
  at: Date;
  players: number;
  /** null: the engine did not give it */
  memoryMb: number | null;
  heartbeatMs: number | null;
  physicsFps: number | null;
  instances: number | null;
  dataInKbps: number | null;
  dataOutKbps: number | null;
  pingP50Ms: number | null;
  pingP90Ms: number | null;
  sdkQueued: number | null;
  sdkDropped: number | null;
  memoryTags: Record<string, number> | null;
  datastoreBudget: Record<string, number> | null;
};
export type HealthReport = { server: ServerReport; sessions: SessionReport[]; samples: SampleReport[] };

export const lockServer = (tx: TxSql, projectId: string, jobId: string) =>
  tx`select pg_advisory_xact_lock(hashtextextended(${`health:${projectId}:${jobId}`}, 41))`;

type ServerRow = ServerState & { job_id: string; last_sample_at: Date | null; last_seen: Date };
type ServerChange = { old: ServerState | null; row: ServerRow };

const serverState = (r: { environment: string; place_version: string; started_at: Date; ended_at: Date | null; close_reason: string | null; lost_at: Date | null }): ServerState => ({
  environment: r.environment,
  place_version: r.place_version,
  started_at: r.started_at,
  ended_at: r.ended_at,
  close_reason: r.close_reason,
  lost_at: r.lost_at,
});

/** Session rows as returned by the statements below: the new state and, when it existed, the old one. */
type SessionChangeRow = SessionState & {
  existed: boolean;
  old_exit_reason: string | null;
  old_ended_at: Date | null;
  old_errors: number | null;
  old_crashed: boolean | null;
};

function addSessionChanges(cells: Cells, rows: SessionChangeRow[]) {
  for (const r of rows) {
    const next: SessionState = {
      environment: r.environment,
      place_version: r.place_version,
      user_id: r.user_id === null ? null : String(r.user_id),
      started_at: r.started_at,
      ended_at: r.ended_at,
      errors: Number(r.errors),
      crashed: r.crashed,
      exit_reason: r.exit_reason,
    };
    cells.session(next, 1);
    if (r.existed) {
      cells.session({ ...next, ended_at: r.old_ended_at, errors: Number(r.old_errors), crashed: Boolean(r.old_crashed), exit_reason: r.old_exit_reason }, -1);
    }
  }
}

const SESSION_CHANGE_COLUMNS = (tx: TxSql) => tx`
  up.environment, up.place_version, up.user_id::text as user_id, up.started_at, up.ended_at,
  up.errors_server + up.errors_client as errors, up.crashed, up.exit_reason, old.session_id is not null as existed, old.exit_reason as old_exit_reason,
  old.ended_at as old_ended_at, old.errors_server + old.errors_client as old_errors, old.crashed as old_crashed`;

type UpsertRow = ServerRow & { existed: boolean; old_ended_at: Date | null; old_close_reason: string | null; old_lost_at: Date | null };

/**
 * Upserts the server row (fields only move forward; a report clears `lost_at`: it was only silent),
 * with the report's latest sample (by its time) for the Live servers page when it is later than the
 * one the row holds, whatever order reports came in. Returns the statement, already sent.
 */
function upsertServer(tx: TxSql, projectId: string, s: ServerReport, receivedAt: Date, latest: SampleReport | null) {
  return tx<UpsertRow[]>`
    with old as (
      select * from health_servers where project_id = ${projectId} and job_id = ${s.jobId}
    ), up as (
      insert into health_servers as s (project_id, job_id, place_id, place_version, environment, started_at, ended_at, close_reason,
        first_received_at, last_seen, last_sample_at, players, memory_mb, heartbeat_ms)
      values (${projectId}, ${s.jobId}, ${s.placeId}, ${s.placeVersion}, ${s.environment}, ${s.startedAt}, ${s.endedAt},
        ${s.endedAt ? s.closeReason : null}, ${receivedAt}, ${receivedAt}, ${latest?.at ?? null}, ${latest?.players ?? null},
        ${latest?.memoryMb ?? null}, ${latest?.heartbeatMs ?? null})
      on conflict (project_id, job_id) do update set
        place_id = coalesce(s.place_id, excluded.place_id),
        close_reason = case when s.ended_at is null then excluded.close_reason else s.close_reason end,
        ended_at = coalesce(s.ended_at, excluded.ended_at),
        lost_at = null,
        last_seen = greatest(s.last_seen, excluded.last_seen),
        -- the measures go with the latest sample's time (greatest: a null is no sample)
        last_sample_at = greatest(s.last_sample_at, excluded.last_sample_at),
        players = case when excluded.last_sample_at > coalesce(s.last_sample_at, '-infinity') then excluded.players else s.players end,
        memory_mb = case when excluded.last_sample_at > coalesce(s.last_sample_at, '-infinity') then excluded.memory_mb else s.memory_mb end,
        heartbeat_ms = case when excluded.last_sample_at > coalesce(s.last_sample_at, '-infinity') then excluded.heartbeat_ms else s.heartbeat_ms end
      returning s.*
    )
    select up.job_id, up.environment, up.place_version, up.started_at, up.ended_at, up.close_reason, up.lost_at, up.last_sample_at,
      up.last_seen, old.job_id is not null as existed, old.ended_at as old_ended_at, old.close_reason as old_close_reason,
      old.lost_at as old_lost_at
    from up left join old on true`.execute();
}

function serverChange(r: UpsertRow): ServerChange {
  const row: ServerRow = { ...serverState(r), job_id: r.job_id, last_sample_at: r.last_sample_at, last_seen: r.last_seen };
  const old = r.existed ? { ...serverState(r), ended_at: r.old_ended_at, close_reason: r.old_close_reason, lost_at: r.old_lost_at } : null;
  return { old, row };
}

/**
 * Writes one server's report in the caller's transaction: the server, its player sessions, its
 * samples, and what they add to the rollups. Returns nothing: the answer counts what was received.
 */
export async function writeReportTx(tx: TxSql, projectId: string, report: HealthReport, receivedAt: Date): Promise<void> {
  const { server } = report;
  const latest = report.samples.length > 0 ? report.samples.reduce((a, b) => (b.at > a.at ? b : a)) : null;
  // the lock, the server's row and the samples go in one round trip and run in this order (each
  // statement sent at once); the samples take their version and environment from the row as upserted
  const [, [upserted], inserted] = await Promise.all([
    lockServer(tx, projectId, server.jobId).execute(),
    upsertServer(tx, projectId, server, receivedAt, latest),
    report.samples.length > 0 ? insertSamples(tx, projectId, server.jobId, report.samples, receivedAt) : [],
  ]);
  const cells = new Cells();
  const { old, row } = serverChange(upserted);
  cells.server(old, -1);
  cells.server(row, 1);
  if (!old) {
    await tx`
      insert into health_versions (project_id, place_version, first_seen) values (${projectId}, ${row.place_version}, ${receivedAt})
      on conflict do nothing`;
  }
  // a revived server: the sessions its abnormal end closed are open again (their report may end them)
  if (old?.lost_at && !old.ended_at) addSessionChanges(cells, await reopenLostSessions(tx, projectId, server.jobId));

  if (report.sessions.length > 0) {
    const input = report.sessions.map((s) => ({
      session_id: s.id,
      user_id: s.userId,
      started_at: s.startedAt.toISOString(),
      ended_at: s.endedAt?.toISOString() ?? null,
      exit_reason: s.endedAt ? s.exitReason : null,
      errors_server: s.errorsServer,
      errors_client: s.errorsClient,
    }));
    const rows = await tx<SessionChangeRow[]>`
      with input as (
        select * from jsonb_to_recordset(${asJson(tx, input)}::jsonb) as x(session_id text, user_id bigint, started_at timestamptz,
          ended_at timestamptz, exit_reason text, errors_server integer, errors_client integer)
      ), old as (
        select s.* from health_sessions s join input i on s.project_id = ${projectId} and s.session_id = i.session_id
      ), up as (
        insert into health_sessions as s (project_id, session_id, job_id, user_id, place_version, environment, started_at, ended_at,
          exit_reason, errors_server, errors_client)
        select ${projectId}, session_id, ${server.jobId}, user_id, ${row.place_version}, ${row.environment},
          started_at, case when ended_at is not null then greatest(ended_at, started_at) end, exit_reason, errors_server, errors_client
        from input order by session_id
        on conflict (project_id, session_id) do update set
          exit_reason = case when s.ended_at is null then excluded.exit_reason else s.exit_reason end,
          ended_at = coalesce(s.ended_at, excluded.ended_at),
          errors_server = greatest(s.errors_server, excluded.errors_server),
          errors_client = greatest(s.errors_client, excluded.errors_client)
        -- a session id another server holds is that server's (ids carry their JobId)
        where s.job_id is not distinct from excluded.job_id
          and ((s.ended_at is null and excluded.ended_at is not null)
            or excluded.errors_server > s.errors_server or excluded.errors_client > s.errors_client)
        returning s.*
      )
      select ${SESSION_CHANGE_COLUMNS(tx)} from up left join old on old.session_id = up.session_id`;
    addSessionChanges(cells, rows);
  }

  // what the new samples and the changes above add to the rollups, sent together (in lock order);
  // addSamples adds the samples' hour cells before its first await, so applyCells, called after it,
  // writes them
  await Promise.all([addSamples(tx, projectId, row, inserted, cells), applyCells(tx, projectId, cells)]);
}

type InsertedSample = { at: Date; players: number; memory_mb: number | null; heartbeat_ms: number | null };

/** Inserts the samples the server's row does not hold yet (a sample is immutable) and returns them. Returns the statement, already sent. */
function insertSamples(tx: TxSql, projectId: string, jobId: string, samples: SampleReport[], receivedAt: Date) {
  const input = samples.map((s) => ({
    at: s.at.toISOString(),
    players: s.players,
    memory_mb: s.memoryMb,
    heartbeat_ms: s.heartbeatMs,
    physics_fps: s.physicsFps,
    instances: s.instances,
    data_in_kbps: s.dataInKbps,
    data_out_kbps: s.dataOutKbps,
    ping_p50_ms: s.pingP50Ms,
    ping_p90_ms: s.pingP90Ms,
    sdk_queued: s.sdkQueued,
    sdk_dropped: s.sdkDropped,
    memory_tags: s.memoryTags,
    datastore_budget: s.datastoreBudget,
  }));
  return tx<InsertedSample[]>`
    insert into health_samples (project_id, job_id, at, place_version, environment, players, memory_mb, heartbeat_ms, physics_fps,
      instances, data_in_kbps, data_out_kbps, ping_p50_ms, ping_p90_ms, sdk_queued, sdk_dropped, memory_tags, datastore_budget, received_at)
    select s.project_id, s.job_id, x.at, s.place_version, s.environment, x.players, x.memory_mb, x.heartbeat_ms, x.physics_fps,
      x.instances, x.data_in_kbps, x.data_out_kbps, x.ping_p50_ms, x.ping_p90_ms, x.sdk_queued, x.sdk_dropped, x.memory_tags, x.datastore_budget, ${receivedAt}
    from health_servers s, jsonb_to_recordset(${asJson(tx, input)}::jsonb) as x(at timestamptz, players integer, memory_mb float8, heartbeat_ms float8,
      physics_fps float8, instances integer, data_in_kbps float8, data_out_kbps float8, ping_p50_ms float8, ping_p90_ms float8,
      sdk_queued integer, sdk_dropped integer, memory_tags jsonb, datastore_budget jsonb)
    where s.project_id = ${projectId} and s.job_id = ${jobId}
    order by x.at
    on conflict do nothing
    returning at, players, memory_mb, heartbeat_ms`.execute();
}

async function reopenLostSessions(tx: TxSql, projectId: string, jobId: string): Promise<SessionChangeRow[]> {
  return tx<SessionChangeRow[]>`
    with old as (
      select * from health_sessions where project_id = ${projectId} and job_id = ${jobId} and exit_reason = ${SERVER_LOST}
    ), up as (
      update health_sessions s set ended_at = null, exit_reason = null
      from old where s.project_id = old.project_id and s.session_id = old.session_id
      returning s.*
    )
    select ${SESSION_CHANGE_COLUMNS(tx)} from up join old on old.session_id = up.session_id`;
}

type SampleCell = { minute: string; samples: number; player_minutes: number; memory_sum: number; memory_max: number; heartbeat_sum: number; heartbeat_max: number };
type HistCell = { hour: string; metric: number; age_bucket: number; bin: number; n: number };

/** What newly inserted samples add: hour and minute cells and histogram bins. */
async function addSamples(
  tx: TxSql,
  projectId: string,
  server: ServerState,
  samples: InsertedSample[],
  cells: Cells,
): Promise<void> {
  if (samples.length === 0) return;
  const minutes = new Map<string, SampleCell>();
  const hist = new Map<string, HistCell>();
  const bump = (hour: string, metric: number, age: number, bin: number) => {
    const key = JSON.stringify([hour, metric, age, bin]);
    const c = hist.get(key);
    if (c) c.n++;
    else hist.set(key, { hour, metric, age_bucket: age, bin, n: 1 });
  };
  for (const s of samples) {
    cells.addHour(server.environment, server.place_version, s.at, "samples", 1);
    cells.addHour(server.environment, server.place_version, s.at, "player_minutes", s.players);
    const minute = minuteOf(s.at);
    const m = minutes.get(minute) ?? { minute, samples: 0, player_minutes: 0, memory_sum: 0, memory_max: 0, heartbeat_sum: 0, heartbeat_max: 0 };
    m.samples++;
    m.player_minutes += s.players;
    // a measure the engine did not give is in no sum, maximum or histogram (the sample still counts)
    if (s.memory_mb !== null) {
      m.memory_sum += s.memory_mb;
      m.memory_max = Math.max(m.memory_max, s.memory_mb);
    }
    if (s.heartbeat_ms !== null) {
      m.heartbeat_sum += s.heartbeat_ms;
      m.heartbeat_max = Math.max(m.heartbeat_max, s.heartbeat_ms);
    }
    minutes.set(minute, m);
    const hour = minute.slice(0, 13) + ":00:00.000Z";
    const age = ageBucket((s.at.getTime() - server.started_at.getTime()) / 60_000);
    if (s.memory_mb !== null) {
      bump(hour, METRIC.memory_mb, age, binOf(s.memory_mb));
      bump(hour, METRIC.memory_mb_any_age, 0, binOf(s.memory_mb));
    }
    if (s.heartbeat_ms !== null) bump(hour, METRIC.heartbeat_ms, 0, binOf(s.heartbeat_ms));
  }
  const env = server.environment;
  const ver = server.place_version;
  const minuteRows = [...minutes.values()].sort((a, b) => (a.minute < b.minute ? -1 : 1));
  const histRows = [...hist.values()].sort((a, b) =>
    a.hour !== b.hour ? (a.hour < b.hour ? -1 : 1) : a.metric - b.metric || a.age_bucket - b.age_bucket || a.bin - b.bin,
  );
  // sent at once, in this order (the rollups' lock order)
  await Promise.all([
    tx`
    insert into health_minute as m (project_id, environment, place_version, minute, shard, samples, player_minutes, memory_mb_sum, memory_mb_max,
      heartbeat_ms_sum, heartbeat_ms_max)
    select ${projectId}, ${env}, ${ver}, minute, pg_backend_pid() % ${SHARDS}, samples, player_minutes, memory_sum, memory_max, heartbeat_sum, heartbeat_max
    from jsonb_to_recordset(${asJson(tx, minuteRows)}::jsonb) as x(minute timestamptz, samples bigint, player_minutes bigint,
      memory_sum float8, memory_max float8, heartbeat_sum float8, heartbeat_max float8)
    order by minute
    on conflict (project_id, minute, place_version, environment, shard) do update set
      samples = m.samples + excluded.samples, player_minutes = m.player_minutes + excluded.player_minutes,
      memory_mb_sum = m.memory_mb_sum + excluded.memory_mb_sum, memory_mb_max = greatest(m.memory_mb_max, excluded.memory_mb_max),
      heartbeat_ms_sum = m.heartbeat_ms_sum + excluded.heartbeat_ms_sum, heartbeat_ms_max = greatest(m.heartbeat_ms_max, excluded.heartbeat_ms_max)`.execute(),
    tx`
    insert into health_hist_hour as h (project_id, environment, place_version, hour, metric, age_bucket, bin, shard, n)
    select ${projectId}, ${env}, ${ver}, hour, metric, age_bucket, bin, pg_backend_pid() % ${SHARDS}, n
    from jsonb_to_recordset(${asJson(tx, histRows)}::jsonb) as x(hour timestamptz, metric smallint, age_bucket smallint, bin integer, n bigint)
    order by hour, metric, age_bucket, bin
    on conflict (project_id, place_version, hour, metric, age_bucket, bin, environment, shard) do update set n = h.n + excluded.n`.execute(),
    tx`
    insert into health_hist_day as h (project_id, environment, place_version, day, metric, age_bucket, bin, shard, n)
    select ${projectId}, ${env}, ${ver}, (hour at time zone 'UTC')::date, metric, age_bucket, bin, pg_backend_pid() % ${SHARDS}, sum(n)
    from jsonb_to_recordset(${asJson(tx, histRows)}::jsonb) as x(hour timestamptz, metric smallint, age_bucket smallint, bin integer, n bigint)
    group by 4, 5, 6, 7
    order by 4, 5, 6, 7
    on conflict (project_id, place_version, day, metric, age_bucket, bin, environment, shard) do update set n = h.n + excluded.n`.execute(),
  ]);
}

/** Adds the hour and player-day cells (in key order) to this connection's shard. */
export async function applyCells(tx: TxSql, projectId: string, cells: Cells): Promise<void> {
  // every statement sent at once, in this order (the lock order); none needs another's answer
  const sent: Promise<unknown>[] = [];
  const hours = cells.hourCells();
  if (hours.length > 0) {
    sent.push(tx`
      insert into health_hour as h (project_id, environment, place_version, hour, shard, samples, player_minutes, servers_started, servers_ended,
        servers_oom, servers_abnormal, sessions_started, sessions_ended, sessions_error_free)
      select ${projectId}, environment, place_version, hour, pg_backend_pid() % ${SHARDS}, samples, player_minutes, servers_started, servers_ended,
        servers_oom, servers_abnormal, sessions_started, sessions_ended, sessions_error_free
      from jsonb_to_recordset(${asJson(tx, hours)}::jsonb) as x(environment text, place_version text, hour timestamptz, samples bigint,
        player_minutes bigint, servers_started bigint, servers_ended bigint, servers_oom bigint, servers_abnormal bigint,
        sessions_started bigint, sessions_ended bigint, sessions_error_free bigint)
      order by place_version, hour, environment
      on conflict (project_id, place_version, hour, environment, shard) do update set
        samples = h.samples + excluded.samples, player_minutes = h.player_minutes + excluded.player_minutes,
        servers_started = h.servers_started + excluded.servers_started, servers_ended = h.servers_ended + excluded.servers_ended,
        servers_oom = h.servers_oom + excluded.servers_oom, servers_abnormal = h.servers_abnormal + excluded.servers_abnormal,
        sessions_started = h.sessions_started + excluded.sessions_started, sessions_ended = h.sessions_ended + excluded.sessions_ended,
        sessions_error_free = h.sessions_error_free + excluded.sessions_error_free`.execute());
  }
  const open = cells.openCells();
  if (open.length > 0) {
    sent.push(tx`
      insert into health_open as o (project_id, environment, place_version, shard, n)
      select ${projectId}, environment, place_version, pg_backend_pid() % ${SHARDS}, n
      from jsonb_to_recordset(${asJson(tx, open)}::jsonb) as x(environment text, place_version text, n bigint)
      order by place_version, environment
      on conflict (project_id, place_version, environment, shard) do update set n = o.n + excluded.n`.execute());
  }
  const players = cells.playerCells();
  if (players.length > 0) {
    // the players' summaries are recomputed from their days: one writer at a time per player (in
    // PLAYER_LOCKS buckets, taken in order, after the server's lock: no cycle)
    sent.push(tx`
      select pg_advisory_xact_lock(hashtextextended(${`health-players:${projectId}:`} || b, 41))
      from (select distinct abs(hashtext(u)) % ${PLAYER_LOCKS} as b from unnest(${players.map((p) => p.user_id)}::text[]) u order by 1) x`.execute());
    sent.push(tx`
      insert into health_player_days as p (project_id, environment, place_version, day, user_id, sessions_started, sessions_ended, sessions_errored)
      select ${projectId}, environment, place_version, day, user_id, sessions_started, sessions_ended, sessions_errored
      from jsonb_to_recordset(${asJson(tx, players)}::jsonb) as x(environment text, place_version text, day date, user_id bigint,
        sessions_started integer, sessions_ended integer, sessions_errored integer)
      order by place_version, environment, user_id, day
      on conflict (project_id, place_version, environment, user_id, day) do update set
        sessions_started = p.sessions_started + excluded.sessions_started, sessions_ended = p.sessions_ended + excluded.sessions_ended,
        sessions_errored = p.sessions_errored + excluded.sessions_errored`.execute());
    sent.push(summarizePlayers(tx, projectId, players));
  }
  await Promise.all(sent);
}

/** Player-lock buckets per project (a report may touch 1,000 players; advisory locks are a shared resource). */
const PLAYER_LOCKS = 64;

/**
 * Recomputes the touched players' summaries from their days and adds the difference to the
 * per-version counts (migration 118): exact whatever order the changes came in.
 */
function summarizePlayers(tx: TxSql, projectId: string, cells: PlayerDayCell[]) {
  const keys = [...new Map(cells.map((c) => [JSON.stringify([c.place_version, c.environment, c.user_id]), c])).values()].map((c) => ({
    environment: c.environment,
    place_version: c.place_version,
    user_id: c.user_id,
  }));
  return tx`
    with keys as (
      select * from jsonb_to_recordset(${asJson(tx, keys)}::jsonb) as x(environment text, place_version text, user_id bigint)
    ), fresh as (
      select k.environment, k.place_version, k.user_id,
        coalesce(max(d.day) filter (where d.sessions_started > 0 or d.sessions_ended > 0), '-infinity') as active_day,
        coalesce(max(d.day) filter (where d.sessions_ended > 0), '-infinity') as ended_day,
        coalesce(max(d.day) filter (where d.sessions_errored > 0), '-infinity') as errored_day
      from keys k left join health_player_days d
        on d.project_id = ${projectId} and d.place_version = k.place_version and d.environment = k.environment and d.user_id = k.user_id
      group by 1, 2, 3
    ), old as (
      select s.environment, s.place_version, s.user_id, s.active_day, s.ended_day, s.errored_day from health_player_summary s
      join keys k on s.project_id = ${projectId} and s.place_version = k.place_version and s.environment = k.environment and s.user_id = k.user_id
    ), up as (
      insert into health_player_summary as s (project_id, environment, place_version, user_id, active_day, ended_day, errored_day)
      select ${projectId}, environment, place_version, user_id, active_day, ended_day, errored_day from fresh
      order by place_version, environment, user_id
      on conflict (project_id, place_version, environment, user_id) do update set
        active_day = excluded.active_day, ended_day = excluded.ended_day, errored_day = excluded.errored_day
      returning 1
    ), deltas as (
      select environment, place_version, active_day, ended_day, errored_day, sum(n) as n from (
        select environment, place_version, active_day, ended_day, errored_day, 1 as n from fresh
        union all
        select environment, place_version, active_day, ended_day, errored_day, -1 from old
      ) d group by 1, 2, 3, 4, 5 having sum(n) <> 0
    )
    insert into health_player_counts as c (project_id, environment, place_version, active_day, ended_day, errored_day, shard, n)
    select ${projectId}, environment, place_version, active_day, ended_day, errored_day, pg_backend_pid() % ${SHARDS}, n
    from deltas, (select count(*) from up) written
    order by place_version, environment, active_day, ended_day, errored_day
    on conflict (project_id, place_version, environment, active_day, ended_day, errored_day, shard) do update set n = c.n + excluded.n`.execute();
}

// ---- abnormal ends ------------------------------------------------------------------------------

/**
 * Declares one silent server ended abnormally, if it still is silent (no report since `silentSince`,
 * no end, not already declared): `lost_at` = now, and its open player sessions end at its last
 * report's receive time with exit reason ServerLost. Returns whether it did.
 */
export async function loseServerTx(tx: TxSql, projectId: string, jobId: string, silentSince: Date): Promise<boolean> {
  await lockServer(tx, projectId, jobId);
  const [r] = await tx<(ServerState & { last_seen: Date })[]>`
    update health_servers set lost_at = now()
    where project_id = ${projectId} and job_id = ${jobId} and ended_at is null and lost_at is null and last_seen < ${silentSince}
    returning environment, place_version, started_at, ended_at, close_reason, lost_at, last_seen`;
  if (!r) return false;
  const cells = new Cells();
  cells.server({ ...r, lost_at: null }, -1);
  cells.server(r, 1);
  const rows = await tx<SessionChangeRow[]>`
    with old as (
      select * from health_sessions where project_id = ${projectId} and job_id = ${jobId} and ended_at is null
    ), up as (
      update health_sessions s set ended_at = greatest(s.started_at, ${r.last_seen}::timestamptz), exit_reason = ${SERVER_LOST}
      from old where s.project_id = old.project_id and s.session_id = old.session_id
      returning s.*
    )
    select ${SESSION_CHANGE_COLUMNS(tx)} from up join old on old.session_id = up.session_id`;
  addSessionChanges(cells, rows);
  await applyCells(tx, projectId, cells);
  return true;
}

/** Servers silent since before `silentSince` that have not been declared yet (oldest first). */
export async function silentServers(sql: Sql, silentSince: Date, limit = 1000) {
  return sql<{ project_id: string; job_id: string }[]>`
    select project_id, job_id from health_servers
    where ended_at is null and lost_at is null and last_seen < ${silentSince}
    order by last_seen limit ${limit}`;
}

// ---- Sentry sessions ----------------------------------------------------------------------------

export type ExternalSession = {
  /** unique per session in the project (prefixed by its source) */
  id: string;
  userId: string | null;
  placeVersion: string;
  environment: string;
  startedAt: Date;
  endedAt: Date | null;
  exitReason: string | null;
  errors: number;
  crashed: boolean;
};

/**
 * Upserts sessions that belong to no game server (Sentry SDKs' `session` and `sessions` items),
 * with the same forward-only rules and rollup cells as a server's report, under one lock per project.
 */
export async function writeExternalSessionsTx(tx: TxSql, projectId: string, sessions: ExternalSession[]): Promise<void> {
  if (sessions.length === 0) return;
  const sorted = [...sessions].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // one lock for the project's server-less sessions: an aggregate may stand for thousands of them
  await tx`select pg_advisory_xact_lock(hashtextextended(${`health-sentry:${projectId}`}, 41))`;
  const input = sorted.map((s) => ({
    session_id: s.id,
    user_id: s.userId,
    place_version: s.placeVersion,
    environment: s.environment,
    started_at: s.startedAt.toISOString(),
    ended_at: s.endedAt?.toISOString() ?? null,
    exit_reason: s.endedAt ? s.exitReason : null,
    errors: s.errors,
    crashed: s.crashed,
  }));
  const rows = await tx<SessionChangeRow[]>`
    with input as (
      select * from jsonb_to_recordset(${asJson(tx, input)}::jsonb) as x(session_id text, user_id bigint, place_version text, environment text,
        started_at timestamptz, ended_at timestamptz, exit_reason text, errors integer, crashed boolean)
    ), old as (
      select s.* from health_sessions s join input i on s.project_id = ${projectId} and s.session_id = i.session_id
    ), up as (
      insert into health_sessions as s (project_id, session_id, job_id, user_id, place_version, environment, started_at, ended_at,
        exit_reason, errors_server, errors_client, crashed)
      select ${projectId}, session_id, null, user_id, place_version, environment, started_at, case when ended_at is not null then greatest(ended_at, started_at) end, exit_reason, 0, errors, crashed
      from input order by session_id
      on conflict (project_id, session_id) do update set
        exit_reason = case when s.ended_at is null then excluded.exit_reason else s.exit_reason end,
        ended_at = coalesce(s.ended_at, excluded.ended_at),
        errors_client = greatest(s.errors_client, excluded.errors_client),
        crashed = s.crashed or (s.ended_at is null and excluded.crashed)
      where s.job_id is null
        and ((s.ended_at is null and excluded.ended_at is not null) or excluded.errors_client > s.errors_client
          or (s.ended_at is null and excluded.crashed and not s.crashed))
      returning s.*
    )
    select ${SESSION_CHANGE_COLUMNS(tx)} from up left join old on old.session_id = up.session_id`;
  const cells = new Cells();
  addSessionChanges(cells, rows);
  const versions = [...new Set(sorted.map((s) => s.placeVersion))].sort();
  await tx`
    insert into health_versions (project_id, place_version, first_seen)
    select ${projectId}, v, now() from unnest(${versions}::text[]) as v order by v
    on conflict do nothing`;
  await applyCells(tx, projectId, cells);
}

// ---- retention ----------------------------------------------------------------------------------

/**
 * Health data older than `retentionDays` goes, like raw events: sample partitions whole days at a
 * time (jobs/retention.ts), rows in bounded batches here: sessions that ended (or, still open,
 * started) before the cutoff, servers last heard of before it, and the rollup cells of hours, minutes
 * and days before it. Rollups are never adjusted for deleted rows: their cells go by their own time.
 */
export async function pruneHealth(sql: Sql, retentionDays: number, batchSize = 5000): Promise<Record<string, number>> {
  const [{ cutoff }] = await sql<{ cutoff: Date }[]>`select now() - make_interval(days => ${retentionDays}) as cutoff`;
  const out: Record<string, number> = {};
  const batched = async (name: string, stmt: () => Promise<{ count: number }>) => {
    let n = 0;
    for (;;) {
      const { count } = await stmt();
      n += count;
      if (count < batchSize) break;
    }
    out[name] = n;
  };
  await batched("samples", () =>
    sql`delete from health_samples_default d using (select project_id, job_id, at from health_samples_default where at < ${cutoff} limit ${batchSize}) x
        where d.project_id = x.project_id and d.job_id = x.job_id and d.at = x.at`,
  );
  // an open session deleted (started before the period, never ended) leaves the open count with it
  await batched("sessions", async () => {
    const [{ n }] = await sql<{ n: number }[]>`
      with gone as (
        delete from health_sessions s using (
          select project_id, session_id from health_sessions where coalesce(ended_at, started_at) < ${cutoff} limit ${batchSize}) x
        where s.project_id = x.project_id and s.session_id = x.session_id
        returning s.project_id, s.environment, s.place_version, s.ended_at is null as open
      ), closed as (
        insert into health_open as o (project_id, environment, place_version, shard, n)
        select project_id, environment, place_version, pg_backend_pid() % ${SHARDS}, -count(*) from gone where open
        group by 1, 2, 3 order by 1, 3, 2
        on conflict (project_id, place_version, environment, shard) do update set n = o.n + excluded.n
      )
      select count(*)::int as n from gone`;
    return { count: n };
  });
  await batched("servers", () =>
    sql`delete from health_servers s using (select project_id, job_id from health_servers where last_seen < ${cutoff} limit ${batchSize}) x
        where s.project_id = x.project_id and s.job_id = x.job_id`,
  );
  await batched("hours", () =>
    sql`delete from health_hour h using (select ctid from health_hour where hour < ${cutoff}::timestamptz - interval '1 hour' limit ${batchSize}) x where h.ctid = x.ctid`,
  );
  await batched("histograms", () =>
    sql`delete from health_hist_hour h using (select ctid from health_hist_hour where hour < ${cutoff}::timestamptz - interval '1 hour' limit ${batchSize}) x where h.ctid = x.ctid`,
  );
  await batched("minutes", () =>
    sql`delete from health_minute h using (select ctid from health_minute where minute < ${cutoff} limit ${batchSize}) x where h.ctid = x.ctid`,
  );
  await batched("version_hours", () =>
    sql`delete from rollup_version_hour h using (select ctid from rollup_version_hour where bucket < ${cutoff}::timestamptz - interval '1 hour' limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  // the error-rate alert's minutes: its longest window is a day (1,440 minutes)
  await batched("version_minutes", () =>
    sql`delete from rollup_version_minute h using (
          select ctid from rollup_version_minute where bucket < now() - interval '2 days' limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  await batched("player_days", () =>
    sql`delete from health_player_days h using (select ctid from health_player_days where day < (${cutoff}::timestamptz at time zone 'UTC')::date - 1 limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  await batched("histogram_days", () =>
    sql`delete from health_hist_day h using (select ctid from health_hist_day where day < (${cutoff}::timestamptz at time zone 'UTC')::date - 1 limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  // a player whose last activity in a version is past the period counts in no window: the summary
  // and its count go together (a late change recomputes both from the days that are left)
  await batched("player_summaries", () =>
    sql`delete from health_player_summary h using (
          select ctid from health_player_summary where active_day < (${cutoff}::timestamptz at time zone 'UTC')::date - 1 limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  await batched("player_counts", () =>
    sql`delete from health_player_counts h using (
          select ctid from health_player_counts where active_day < (${cutoff}::timestamptz at time zone 'UTC')::date - 1 limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  // a recovered alert's row only holds its rule's cooldown: past it, a new firing inserts a fresh row
  // and the delivery log keeps the history (open alerts stay, whatever their age)
  await batched("alert_states", () =>
    sql`delete from health_alert_state h using (
          select s.ctid from health_alert_state s join alert_rules r on r.project_id = s.project_id and r.id = s.rule_id
          where s.recovered_at < now() - make_interval(mins => r.cooldown_minutes) - interval '1 day' limit ${batchSize}) x
        where h.ctid = x.ctid`,
  );
  out.versions = (
    await sql`
      delete from health_versions v where first_seen < ${cutoff}
        and not exists (select 1 from health_servers s where s.project_id = v.project_id and s.place_version = v.place_version)
        and not exists (select 1 from health_hour h where h.project_id = v.project_id and h.place_version = v.place_version)`
  ).count;
  return out;
}

export { AGE_BUCKETS };

// ---- shard compaction ---------------------------------------------------------------------------

type Compacted = { table: "health_hour" | "health_hist_hour" | "health_hist_day"; time: "hour" | "day"; key: string[]; sums: string[] };
const COMPACTED: Compacted[] = [
  {
    table: "health_hour",
    time: "hour",
    key: ["project_id", "place_version", "hour", "environment"],
    sums: ["samples", "player_minutes", "servers_started", "servers_ended", "servers_oom", "servers_abnormal", "sessions_started", "sessions_ended", "sessions_error_free"],
  },
  { table: "health_hist_hour", time: "hour", key: ["project_id", "place_version", "hour", "metric", "age_bucket", "bin", "environment"], sums: ["n"] },
  { table: "health_hist_day", time: "day", key: ["project_id", "place_version", "day", "metric", "age_bucket", "bin", "environment"], sums: ["n"] },
];
/** Late writes this far behind the last compaction are compacted again (older ones stay as they are: still exact). */
const RECOMPACT_MS = 86_400_000;

/**
 * Merges the shard rows of each closed cell (an hour before the current one, a UTC day before today)
 * of the hour rollup and the histograms into one row, the cell's lowest shard: the sums stay what they
 * were (rows deleted and added in one statement), and a 30-day read sums one row per cell instead of
 * up to SHARDS. Writers still add to their shard (a late report makes a cell's row again; the next run
 * merges it when it is within a day of the last compaction).
 *
 * The merged rows are written anew, in key order, rather than summed into the kept shard's row where
 * it lies: the writers made a day's cells in the order samples came (every metric, bin and shard of
 * every project interleaved), so after the merge a version's cells of one metric lay one or two a page
 * (a 7-day memory-by-age read visited a heap page per cell); written in key order they lie together,
 * and a read of a version's metric over a window visits a few pages a day.
 *
 * Locks: per table, one transaction per day of cells, taking the rows in key order as writers do
 * (`for update`, ordered by the primary key). The row it inserts for a cell has the key and shard of a
 * row it holds locked and deletes, which a writer's insert of that shard waits on (and then adds to
 * the new row); so it never waits on a writer's insert: no deadlock with the writers. Returns the rows
 * deleted less those written.
 */
export async function compactHealthShards(sql: Sql, now = new Date()): Promise<number> {
  let deleted = 0;
  for (const t of COMPACTED) {
    const unit = t.time === "hour" ? 3_600_000 : 86_400_000;
    const until = new Date(Math.floor(now.getTime() / unit) * unit);
    const [mark] = await sql<{ through: Date }[]>`select through from health_compaction where rollup = ${t.table}`;
    let from: Date;
    if (mark) from = new Date(Math.min(mark.through.getTime(), until.getTime()) - RECOMPACT_MS);
    else {
      const [{ oldest }] = await sql<{ oldest: Date | null }[]>`select min(${sql(t.time)})::timestamptz as oldest from ${sql(t.table)}`;
      from = oldest ?? until;
    }
    // the column names are this module's constants
    const keys = (alias?: string) => sql.unsafe(t.key.map((k) => (alias ? `${alias}.${k}` : k)).join(", "));
    const on = (a: string, b: string) => sql.unsafe(t.key.map((k) => `${a}.${k} = ${b}.${k}`).join(" and "));
    for (let start = from; start < until; start = new Date(start.getTime() + 86_400_000)) {
      const end = new Date(Math.min(start.getTime() + 86_400_000, until.getTime()));
      const range = (alias: string) =>
        t.time === "hour"
          ? sql`${sql.unsafe(alias)}.hour >= ${start}::timestamptz and ${sql.unsafe(alias)}.hour < ${end}::timestamptz`
          : sql`${sql.unsafe(alias)}.day >= (${start}::timestamptz at time zone 'UTC')::date and ${sql.unsafe(alias)}.day < (${end}::timestamptz at time zone 'UTC')::date`;
      // every join is on a cell's key (and shard) through the primary key: the CTEs' row estimates
      // (one) must not turn a join of two of them into a nested loop over both
      const [{ n }] = await sql.begin(async (tx) => {
        await tx`select set_config('jit', 'off', true)`;
        return tx<{ n: number }[]>`
          with cells as (
            select ${keys()}, min(shard) as keep from ${tx(t.table)} x where ${range("x")} group by ${keys()} having count(*) > 1
          ), locked as materialized (
            select h.shard, c.keep, ${keys("h")} from ${tx(t.table)} h join cells c on ${on("h", "c")}
            where ${range("h")}
            order by ${keys("h")}, h.shard
            for update of h
          ), gone as (
            delete from ${tx(t.table)} h using locked l
            where ${on("h", "l")} and h.shard = l.shard
            returning l.keep, ${sql.unsafe([...t.key, ...t.sums].map((c) => `h.${c}`).join(", "))}
          ), sums as (
            select ${keys()}, keep, ${sql.unsafe(t.sums.map((c) => `sum(${c}) as ${c}`).join(", "))} from gone group by ${keys()}, keep
          ), merged as (
            insert into ${tx(t.table)} (${keys()}, shard, ${sql.unsafe(t.sums.join(", "))})
            select ${keys()}, keep, ${sql.unsafe(t.sums.join(", "))} from sums order by ${keys()}
            returning 1
          )
          select ((select count(*) from gone) - (select count(*) from merged))::int as n`;
      });
      deleted += n;
    }
    await sql`
      insert into health_compaction (rollup, through) values (${t.table}, ${until})
      on conflict (rollup) do update set through = greatest(health_compaction.through, excluded.through)`;
  }
  return deleted;
}
