/**
 * (health) Release health: the ingest cost of health samples and player-session events, and the
 * release health reads over 30 days of data.
 *
 * Ingest: `POST /api/health` reports as 10,000 servers send them (one a minute each), in two runs of
 * BENCH_DURATION seconds over 50 connections, with the service's and PostgreSQL's CPU measured:
 * reports carrying one sample only (CPU per sample), and reports carrying session events only (5 a
 * report: joins and leaves; CPU per session event). 100,000 concurrent players with 20-minute
 * sessions make 10,000 session events a minute; 10,000 servers make 10,000 samples a minute.
 *
 * Reads: 30 days of a project's health data generated in SQL at the size of BENCH_HEALTH_SERVERS live
 * servers (default 10,000; one sample a minute each, in rollups as the ingest leaves them: 8 shards,
 * 1% histogram bins), 10 players a server (100,000 concurrent, open sessions), BENCH_HEALTH_DAU
 * distinct players a day (default 100,000) in the player days, a new version every 3 days with a
 * 2-hour rollout, and BENCH_HEALTH_EVENTS error events (default 300,000) over the 30 days; then the
 * p50 of /api/v1/releases and of the detail of the current version (24h, 7d, 30d), /api/v1/servers,
 * and the Release health page's data signed in (24h, 7d, 30d). Target: < 200 ms p50.
 */
import type { Sql } from "../../db/client.js";
import { compactHealthShards } from "../../db/health.js";
import { cannon, createProject, envInt, fmt, measureQueries, signedInUser, verdict, withCpu, type Bench, type Row } from "./harness.js";

const SERVERS = envInt("BENCH_HEALTH_SERVERS", 10_000);
const DAU = envInt("BENCH_HEALTH_DAU", 100_000);
const EVENTS = envInt("BENCH_HEALTH_EVENTS", 300_000);
const PLAYERS_PER_SERVER = 10;
const SESSION_EVENTS_PER_REPORT = 5;
const DAYS = 30;
const VERSION_DAYS = 3;

/** The version live now: 100 + the whole VERSION_DAYS spans since the 30 days began. */
const currentVersion = () => String(100 + Math.floor((DAYS * 24 - 1) / (VERSION_DAYS * 24)));

const iso = (t: number) => new Date(t).toISOString();

/** The n-th report of a run: server n % 10,000, minute n / 10,000 after `base`. */
export function sampleReport(base: number, n: number) {
  const k = n % 10_000;
  const m = Math.floor(n / 10_000);
  const at = base + m * 60_000 + (k % 60) * 1000;
  return JSON.stringify({
    server: { job_id: `bench-${k}`, place_id: "1", place_version: "100", environment: "production", started_at: iso(base - 3_600_000) },
    sessions: [],
    samples: [
      {
        at: iso(at),
        players: PLAYERS_PER_SERVER,
        memory_mb: 800 + (k % 400),
        memory_tags: { Script: 80.1, PhysicsParts: 60.2, Animation: 20, Sounds: 10 },
        heartbeat_ms: 15 + (k % 10) / 3,
        physics_fps: 59.8,
        instances: 40_213,
        data_in_kbps: 12.5,
        data_out_kbps: 80.2,
        ping_ms: { p50: 60, p90: 140 },
        sdk: { queued: 3, dropped: 0 },
        datastore_budget: { GetAsync: 300, SetIncrementAsync: 300, UpdateAsync: 300 },
      },
    ],
  });
}

/** The n-th report of the session run: 5 session events (joins, and leaves of the joins 2 reports back). */
export function sessionReport(base: number, n: number) {
  const k = n % 10_000;
  const r = Math.floor(n / 10_000);
  const sessions = [];
  for (let i = 0; i < SESSION_EVENTS_PER_REPORT; i++) {
    const leave = i % 2 === 1 && r >= 2;
    const round = leave ? r - 2 : r;
    const id = `bench-s-${k}/${round}/${i}`;
    const started = base + round * 60_000;
    sessions.push({
      id,
      user_id: String(k * 1000 + ((round * 7 + i) % 1000)),
      started_at: iso(started),
      ...(leave ? { ended_at: iso(base + r * 60_000), exit_reason: "Unknown" } : {}),
      errors: { server: i === 3 ? 1 : 0, client: 0 },
    });
  }
  return JSON.stringify({
    server: { job_id: `bench-s-${k}`, place_id: "1", place_version: "100", environment: "production", started_at: iso(base - 3_600_000) },
    sessions,
    samples: [],
  });
}

export async function runHealthBench(b: Bench) {
  const rows: Row[] = [];
  // the reads first: the ingest runs below leave 10,000 servers that the health job declares lost
  // 3 minutes after they go silent, work that would otherwise be measured as read latency
  const email = "health-reader@example.test";
  const cookie = await signedInUser(b, email);
  const reads = await createProject(b, "bench-health-reads", email);
  const size = await b.step(`(health) generating ${DAYS} days of health data: ${fmt(SERVERS)} servers, ${fmt(DAU)} players a day, ${fmt(EVENTS)} events`, async () => {
    return generateHealth(b.sql, reads.project_id);
  });
  b.log(`  generated ${JSON.stringify(size)}`);
  const current = currentVersion();
  const QUERIES = [
    { name: "releases with health, 24h", path: "/api/v1/releases?window=24h" },
    { name: "releases with health, 30d", path: "/api/v1/releases?window=30d" },
    { name: "release detail, 30d", path: `/api/v1/releases/${current}?window=30d` },
    { name: "release detail, 24h", path: `/api/v1/releases/${current}?window=24h` },
    { name: "releases with health, 7d", path: "/api/v1/releases?window=7d" },
    { name: "release detail, 7d", path: `/api/v1/releases/${current}?window=7d` },
    { name: "live servers", path: "/api/v1/servers?state=live" },
    // the Release health page's data (its loader: 20 versions' health and the newest two compared), signed in
    ...(["24h", "7d", "30d"] as const).map((w) => ({
      name: `Release health page, ${w}`,
      path: `/projects/${reads.project_id}/releases.data?window=${w}`,
      cookie,
    })),
  ];
  // the live servers stay live as a game's do: each reports once a minute, so none is silent for the
  // 3 minutes after which the health job declares it lost. Without this the job, running in the
  // service, would declare the 10,000 generated servers lost (and end their 100,000 sessions) while
  // the reads are measured, and the reads would be measured against that work.
  const measured: Awaited<ReturnType<typeof measureQueries>> = {};
  await b.step("(health) release health reads", async () => {
    for (const q of QUERIES) {
      await keepLive(b.sql, reads.project_id);
      Object.assign(measured, await measureQueries(b, reads.api_key, [q]));
    }
  });
  for (const q of QUERIES) {
    const m = measured[q.name];
    rows.push({
      scenario: `(health) ${q.name}, ${DAYS} days of ${fmt(SERVERS)} servers`,
      figure: `p50 ${fmt(m.p50, 1)} ms`,
      detail: `p99 ${fmt(m.p99, 1)} ms, ${fmt(m.rps)} req/s, non2xx ${m.non2xx}`,
      ratio: "",
      target: "p50 < 200 ms",
      result: verdict(m.p50 < 200 && m.non2xx === 0 && m.errors === 0),
    });
  }

  const ingest = await createProject(b, "bench-health-ingest");
  const base = Date.now() - 3 * 3_600_000;
  const needed = 10_000 / 60;

  let n = 0;
  const samples = await b.step(`(health) POST /api/health, one sample a report, 50 connections, ${b.duration} s`, () =>
    withCpu(b, () => cannon({ url: b.url, path: "/api/health", key: ingest.api_key, body: () => sampleReport(base, n++), seconds: b.duration, connections: 50 })),
  );
  const perSample = (samples.cpu.nodeUs + samples.cpu.postgresUs) / Math.max(1, samples.ok);
  rows.push({
    scenario: "(health) samples: POST /api/health, 1 sample a report",
    figure: `${fmt(samples.rps)} samples/s`,
    detail: `CPU ${fmt(perSample)} µs a sample (node ${fmt(samples.cpu.nodeUs / Math.max(1, samples.ok))} + postgres ${fmt(samples.cpu.postgresUs / Math.max(1, samples.ok))}); p50 ${fmt(samples.p50, 1)} ms; non2xx ${samples.non2xx}`,
    ratio: `${fmt(samples.rps / needed, 1)}x`,
    target: `>= ${fmt(needed)}/s (10,000 servers, 1/min)`,
    result: verdict(samples.rps >= needed && samples.non2xx === 0),
  });

  let s = 0;
  const sessions = await b.step(`(health) POST /api/health, ${SESSION_EVENTS_PER_REPORT} session events a report, 50 connections, ${b.duration} s`, () =>
    withCpu(b, () => cannon({ url: b.url, path: "/api/health", key: ingest.api_key, body: () => sessionReport(base, s++), seconds: b.duration, connections: 50 })),
  );
  const events = sessions.ok * SESSION_EVENTS_PER_REPORT;
  const perEvent = (sessions.cpu.nodeUs + sessions.cpu.postgresUs) / Math.max(1, events);
  const neededEvents = (100_000 / 20) * 2 / 60;
  rows.push({
    scenario: `(health) session events: POST /api/health, ${SESSION_EVENTS_PER_REPORT} a report`,
    figure: `${fmt(sessions.rps * SESSION_EVENTS_PER_REPORT)} session events/s`,
    detail: `CPU ${fmt(perEvent)} µs a session event (node ${fmt(sessions.cpu.nodeUs / Math.max(1, events))} + postgres ${fmt(sessions.cpu.postgresUs / Math.max(1, events))}); p50 ${fmt(sessions.p50, 1)} ms; non2xx ${sessions.non2xx}`,
    ratio: `${fmt((sessions.rps * SESSION_EVENTS_PER_REPORT) / neededEvents, 1)}x`,
    target: `>= ${fmt(neededEvents)}/s (100,000 players, 20-min sessions)`,
    result: verdict(sessions.rps * SESSION_EVENTS_PER_REPORT >= neededEvents && sessions.non2xx === 0),
  });

  return { rows, results: { healthSamples: { ...samples, perSampleUs: perSample }, healthSessions: { ...sessions, perEventUs: perEvent }, healthReads: measured, healthSize: size } };
}

/** The generated live servers' latest report (and sample) now, as their minute's sample would make it. */
async function keepLive(sql: Sql, projectId: string) {
  await sql`
    update health_servers set last_seen = now() - make_interval(secs => substr(job_id, 6)::int % 50),
      last_sample_at = now() - make_interval(secs => substr(job_id, 6)::int % 50)
    where project_id = ${projectId} and ended_at is null and lost_at is null and job_id like 'live-%'`;
}

/**
 * 30 days of one project's health as the ingest and the health job leave it (db/health.ts): per hour
 * and version, the hour rollup and 1% histogram bins in 8 shards, merged into one row per cell for
 * the closed hours and days (memory by age bucket, heartbeat); a minute
 * rollup of the last day; player days; the live servers and their open sessions, and the servers of
 * the past; error events per version. Version v = 100 + day / 3 (the last two hours of its three
 * days shared with the next one: the rollout).
 */
export async function generateHealth(sql: Sql, projectId: string) {
  const hours = DAYS * 24;
  const perShard = Math.round((SERVERS * 60) / 8);
  // each hour's live versions: the current one, and during the first 2 hours of a version also the previous
  await sql`drop table if exists bench_health_hours`;
  await sql`
    create table bench_health_hours as
    select h, now_hour - make_interval(hours => h) as hour, v.version, v.share
    from (select date_trunc('hour', now()) as now_hour) n
    cross join generate_series(0, ${hours - 1}) h
    cross join lateral (
      select (100 + ((${hours - 1} - h) / (${VERSION_DAYS} * 24)))::text as version,
        case when (${hours - 1} - h) % (${VERSION_DAYS} * 24) < 2 and (${hours - 1} - h) >= ${VERSION_DAYS} * 24 then 0.5 else 1.0 end as share
      union all
      select (99 + ((${hours - 1} - h) / (${VERSION_DAYS} * 24)))::text, 0.5
      where (${hours - 1} - h) % (${VERSION_DAYS} * 24) < 2 and (${hours - 1} - h) >= ${VERSION_DAYS} * 24
    ) v`;
  await sql`
    insert into health_versions (project_id, place_version, first_seen)
    select ${projectId}::uuid, version, min(hour) from bench_health_hours group by version`;
  await sql`
    insert into health_hour (project_id, environment, place_version, hour, shard, samples, player_minutes, servers_started, servers_ended,
      servers_oom, servers_abnormal, sessions_started, sessions_ended, sessions_error_free)
    select ${projectId}::uuid, 'production', version, hour, shard, (${perShard} * share)::bigint, (${perShard} * share * ${PLAYERS_PER_SERVER})::bigint,
      (${SERVERS} / 6 / 8 * share)::bigint, (${SERVERS} / 6 / 8 * share)::bigint, (share * 2)::bigint, (share * 3)::bigint,
      (${SERVERS * PLAYERS_PER_SERVER} * 3 / 8 * share)::bigint, (${SERVERS * PLAYERS_PER_SERVER} * 3 / 8 * share)::bigint,
      (${SERVERS * PLAYERS_PER_SERVER} * 3 / 8 * share * 0.97)::bigint
    from bench_health_hours cross join generate_series(0, 7) shard`;
  // memory: 40 bins around 1000 MB rising with the server's age bucket; heartbeat: 40 bins around 16 ms
  const [{ hist }] = await sql<{ hist: number }[]>`
    with ins as (
      insert into health_hist_hour (project_id, environment, place_version, hour, metric, age_bucket, bin, shard, n)
      select ${projectId}::uuid, 'production', version, hour, 1, age, 680 + age * 5 + bin, shard, greatest(1, (${perShard} * share / 7 / 40)::bigint)
      from bench_health_hours cross join generate_series(0, 6) age cross join generate_series(0, 39) bin cross join generate_series(0, 7) shard
      union all
      select ${projectId}::uuid, 'production', version, hour, 2, 0, 260 + bin, shard, greatest(1, (${perShard} * share / 40)::bigint)
      from bench_health_hours cross join generate_series(0, 39) bin cross join generate_series(0, 7) shard
      returning 1
    ) select count(*)::int as hist from ins`;
  // and the memory bins without the age split, as every sample writes them beside those by age
  const [{ anyAge }] = await sql<{ anyAge: number }[]>`
    with ins as (
      insert into health_hist_hour (project_id, environment, place_version, hour, metric, age_bucket, bin, shard, n)
      select project_id, environment, place_version, hour, 3, 0, bin, shard, sum(n)
      from health_hist_hour where project_id = ${projectId} and metric = 1 group by project_id, environment, place_version, hour, bin, shard
      returning 1
    ) select count(*)::int as "anyAge" from ins`;
  await sql`
    insert into health_minute (project_id, environment, place_version, minute, shard, samples, player_minutes, memory_mb_sum, memory_mb_max,
      heartbeat_ms_sum, heartbeat_ms_max)
    select ${projectId}::uuid, 'production', version, hour + make_interval(mins => m), shard, (${SERVERS} / 8 * share)::bigint,
      (${SERVERS} / 8 * share * ${PLAYERS_PER_SERVER})::bigint, ${SERVERS} / 8 * share * 1000, 1400, ${SERVERS} / 8 * share * 16, 40
    from bench_health_hours cross join generate_series(0, 59) m cross join generate_series(0, 7) shard where h < 24`;
  // players: DAU a day out of a pool of 3 x DAU, on the day's version(s); 3% with an errored session
  const [{ players }] = await sql<{ players: number }[]>`
    with days as (
      select distinct (hour at time zone 'UTC')::date as day, version from bench_health_hours
    ), ins as (
      insert into health_player_days (project_id, environment, place_version, day, user_id, sessions_started, sessions_ended, sessions_errored)
      select ${projectId}::uuid, 'production', d.version, d.day, u, 3, 3, case when u % 33 = 0 then 1 else 0 end
      from (select distinct on (day) day, version from days order by day, version desc) d
      cross join lateral (select ((d.day - date '2020-01-01') * ${Math.floor(DAU / 3)} + g) % ${DAU * 3} as u from generate_series(1, ${DAU}) g) x
      on conflict do nothing
      returning 1
    ) select count(*)::int as players from ins`;
  // the day histograms and the players' summaries and counts, as the ingest derives them
  await sql`
    insert into health_hist_day (project_id, environment, place_version, day, metric, age_bucket, bin, shard, n)
    select project_id, environment, place_version, (hour at time zone 'UTC')::date, metric, age_bucket, bin, shard, sum(n)
    from health_hist_hour where project_id = ${projectId} group by 1, 2, 3, 4, 5, 6, 7, 8`;
  await sql`
    insert into health_player_summary (project_id, environment, place_version, user_id, active_day, ended_day, errored_day)
    select project_id, environment, place_version, user_id, max(day),
      coalesce(max(day) filter (where sessions_ended > 0), '-infinity'), coalesce(max(day) filter (where sessions_errored > 0), '-infinity')
    from health_player_days where project_id = ${projectId} group by 1, 2, 3, 4`;
  await sql`
    insert into health_player_counts (project_id, environment, place_version, active_day, ended_day, errored_day, shard, n)
    select project_id, environment, place_version, active_day, ended_day, errored_day, 0, count(*)
    from health_player_summary where project_id = ${projectId} group by 1, 2, 3, 4, 5, 6`;
  // servers: the live ones (10 players each, open sessions) and those of the past (one per 6 hours per live server)
  const current = currentVersion();
  await sql`
    insert into health_servers (project_id, job_id, place_id, place_version, environment, started_at, ended_at, close_reason, first_received_at,
      last_seen, last_sample_at, players, memory_mb, heartbeat_ms)
    select ${projectId}::uuid, 'past-' || k, 1, (100 + (k % ${DAYS * 4}) / (${VERSION_DAYS} * 4))::text, 'production',
      now() - make_interval(hours => ${DAYS * 24} - (k % ${DAYS * 4}) * 6), now() - make_interval(hours => ${DAYS * 24} - (k % ${DAYS * 4}) * 6 - 6),
      case when k % 500 = 0 then 'OutOfMemory' else 'ServerEmpty' end, now() - interval '30 days', now() - make_interval(hours => ${DAYS * 24} - (k % ${DAYS * 4}) * 6 - 6),
      null, 0, 900, 16
    from generate_series(1, ${SERVERS * 4 * DAYS}) k`;
  // error events: spread over the 30 days, on the version live then
  await sql`select ensure_day_partitions('events', 'timestamp', (now() at time zone 'UTC')::date - ${DAYS + 1}::int, (now() at time zone 'UTC')::date)`;
  await sql`
    insert into events (project_id, group_id, message, level, job_id, game_version, environment, count, "timestamp")
    select ${projectId}::uuid, '00000000-0000-4000-8000-000000000001', 'bench health error', case when g % 10 = 0 then 'warn' else 'error' end,
      'live-' || (g % ${SERVERS}), (100 + ((${hours} * 3600 - 1 - (g::bigint * ${hours} * 3600 / ${EVENTS})) / 3600) / (${VERSION_DAYS} * 24))::text, 'production', 1,
      now() - make_interval(secs => (g::bigint * ${hours} * 3600 / ${EVENTS})::double precision)
    from generate_series(1, ${EVENTS}) g`;
  // what the counter drain keeps of them: occurrences per version, environment, hour and level
  await sql`
    insert into rollup_version_hour (project_id, version, environment, bucket, level, count)
    select project_id, game_version, environment, date_trunc('hour', "timestamp", 'UTC'), level, sum(count)
    from events where project_id = ${projectId} group by 1, 2, 3, 4, 5`;
  // the closed hours and days as the health job leaves them: one row per cell (the current hour and day keep their shards).
  // The service's health job compacted the empty rollups when it started and marked them compacted
  // through now; the compaction looks back only a day from its marks, so without clearing them the
  // generated past kept its 8 shard rows a cell (eight times the rows a 7- or 30-day read sums, where
  // the job in production merges each hour and day as it closes)
  await sql`delete from health_compaction`;
  await compactHealthShards(sql);
  await sql`vacuum analyze`;
  // the live servers and their open sessions last, each server's latest report seconds ago: the
  // health job declares a server silent for 3 minutes lost, and generating the rest takes longer
  await sql`
    insert into health_servers (project_id, job_id, place_id, place_version, environment, started_at, first_received_at, last_seen,
      last_sample_at, players, memory_mb, heartbeat_ms)
    select ${projectId}::uuid, 'live-' || k, 1, ${current}, 'production', now() - make_interval(mins => k % 300), now() - interval '1 hour', now() - make_interval(secs => k % 50),
      now() - make_interval(secs => k % 50), ${PLAYERS_PER_SERVER}, 800 + k % 400, 15 + k % 10
    from generate_series(1, ${SERVERS}) k`;
  await sql`
    insert into health_sessions (project_id, session_id, job_id, user_id, place_version, environment, started_at)
    select ${projectId}::uuid, 'live-' || k || '/' || p, 'live-' || k, k * 10 + p, ${current}, 'production', now() - make_interval(mins => (k + p) % 60)
    from generate_series(1, ${SERVERS}) k cross join generate_series(1, ${PLAYERS_PER_SERVER}) p`;
  await sql`
    insert into health_open (project_id, environment, place_version, shard, n)
    select project_id, environment, place_version, 0, count(*) from health_sessions where project_id = ${projectId} and ended_at is null group by 1, 2, 3`;
  await sql`analyze health_servers, health_sessions, health_open`;
  const [{ n: sessions }] = await sql<{ n: number }[]>`select count(*)::int as n from health_sessions where project_id = ${projectId}`;
  await sql`drop table bench_health_hours`;
  return { hours, histogramRows: hist + anyAge, playerDays: players, sessions, servers: SERVERS + SERVERS * 4 * DAYS, events: EVENTS };
}
