-- Release health (issue 41, docs/health.md): game servers (one row per JobId), player sessions (one
-- row per join), health samples (one per server a minute) and the rollups the release health page,
-- the Live servers page and the health alerts read.
--
-- Server and session rows are state: every report upserts them and their fields only move forward,
-- so a repeated or reordered report changes nothing. The rollups are kept exact by adding, in the
-- same transaction, the difference between what a changed row counted for before and after
-- (db/health.ts); samples are immutable, so a sample counts once, when it is newly inserted.

create table health_servers (
  project_id uuid not null,
  job_id text not null,
  place_id bigint,
  -- kept from the first report: a server keeps its version until it closes
  place_version text not null,
  environment text not null,
  started_at timestamptz not null,
  -- set once, by the report that carries it (BindToClose)
  ended_at timestamptz,
  close_reason text,
  -- set by the silence job when no report came for 3 sample intervals and it never sent an end;
  -- a later report clears it (the server was only silent)
  lost_at timestamptz,
  first_received_at timestamptz not null,
  -- receive time of the latest report (the silence job's clock)
  last_seen timestamptz not null,
  -- the latest sample (by its `at`) for the Live servers page
  last_sample_at timestamptz,
  players integer,
  memory_mb double precision,
  heartbeat_ms double precision,
  primary key (project_id, job_id)
);
create index health_servers_open on health_servers (last_seen) where ended_at is null and lost_at is null;
create index health_servers_live on health_servers (project_id, place_version) include (players) where ended_at is null and lost_at is null;
create index health_servers_recent on health_servers (project_id, last_seen desc);

create table health_sessions (
  project_id uuid not null,
  session_id text not null,
  -- null for sessions from Sentry SDKs (no game server)
  job_id text,
  user_id bigint,
  place_version text not null,
  environment text not null,
  started_at timestamptz not null,
  ended_at timestamptz,
  exit_reason text,
  errors_server integer not null default 0,
  errors_client integer not null default 0,
  -- a Sentry session that ended crashed or abnormal never counts as error-free
  crashed boolean not null default false,
  primary key (project_id, session_id)
);
create index health_sessions_job on health_sessions (project_id, job_id) where job_id is not null;
create index health_sessions_open on health_sessions (project_id, place_version) where ended_at is null;
create index health_sessions_age on health_sessions (coalesce(ended_at, started_at));

-- one row per server a minute, by the sample's own time; daily partitions like events
create table health_samples (
  project_id uuid not null,
  job_id text not null,
  at timestamptz not null,
  place_version text not null,
  environment text not null,
  players integer not null,
  memory_mb double precision,
  heartbeat_ms double precision,
  physics_fps double precision,
  instances integer,
  data_in_kbps double precision,
  data_out_kbps double precision,
  ping_p50_ms double precision,
  ping_p90_ms double precision,
  sdk_queued integer,
  sdk_dropped integer,
  memory_tags jsonb,
  datastore_budget jsonb,
  received_at timestamptz not null default now(),
  primary key (project_id, job_id, at)
) partition by range (at);
create table health_samples_default partition of health_samples default;
create index health_samples_time on health_samples (project_id, at);
select ensure_day_partitions('health_samples', 'at', (now() at time zone 'UTC')::date, (now() at time zone 'UTC')::date + 7);

-- the versions seen in health reports, for the releases list (first report's receive time)
create table health_versions (
  project_id uuid not null,
  place_version text not null,
  first_seen timestamptz not null,
  primary key (project_id, place_version)
);

-- Per hour, environment and version. Each writer adds to its connection's shard (as economy flows
-- do), so the reports of thousands of servers in one hour do not queue on one row; reads sum shards.
--   samples           server-minutes (samples whose `at` is in the hour)
--   player_minutes    sum of the samples' players
--   servers_*         by the hour of started_at / ended_at / lost_at
--   sessions_*        started by started_at's hour; ended and error-free by ended_at's hour
create table health_hour (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  hour timestamptz not null,
  shard smallint not null,
  samples bigint not null default 0,
  player_minutes bigint not null default 0,
  servers_started bigint not null default 0,
  servers_ended bigint not null default 0,
  servers_oom bigint not null default 0,
  servers_abnormal bigint not null default 0,
  sessions_started bigint not null default 0,
  sessions_ended bigint not null default 0,
  sessions_error_free bigint not null default 0,
  primary key (project_id, place_version, hour, environment, shard)
) with (fillfactor = 80);
create index health_hour_time on health_hour (hour);

-- Per minute: what the live figures and the health alerts read over the last minutes.
create table health_minute (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  minute timestamptz not null,
  shard smallint not null,
  samples bigint not null default 0,
  player_minutes bigint not null default 0,
  memory_mb_sum double precision not null default 0,
  memory_mb_max double precision not null default 0,
  heartbeat_ms_sum double precision not null default 0,
  heartbeat_ms_max double precision not null default 0,
  primary key (project_id, minute, place_version, environment, shard)
) with (fillfactor = 80);
create index health_minute_time on health_minute (minute);

-- Fine histograms of the samples per hour: metric 1 = memory_mb (age_bucket = the server's age
-- bucket at the sample, 0..6 for 0-10, 10-30, 30-60, 60-120, 120-240, 240-480, 480+ minutes),
-- metric 2 = heartbeat_ms (age_bucket 0). bin = floor(ln(max(v, 0.01)) / ln(1.01)): a bin spans 1%,
-- a percentile read from it is within 0.5% of the exact one (docs/health.md).
create table health_hist_hour (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  hour timestamptz not null,
  metric smallint not null,
  age_bucket smallint not null,
  bin integer not null,
  shard smallint not null,
  n bigint not null,
  primary key (project_id, place_version, hour, metric, age_bucket, bin, environment, shard)
) with (fillfactor = 80);
create index health_hist_hour_time on health_hist_hour (hour);

-- Per UTC day, version and player: sessions started, ended, and ended with an error, for the
-- distinct and error-free player counts (which do not add up across hours).
create table health_player_days (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  day date not null,
  user_id bigint not null,
  sessions_started integer not null default 0,
  sessions_ended integer not null default 0,
  sessions_errored integer not null default 0,
  primary key (project_id, place_version, day, environment, user_id)
) with (fillfactor = 80);
create index health_player_days_day on health_player_days (day);

-- The same histograms per UTC day: a 7d or 30d window reads its whole days here and only the hours
-- of its first, partial day from health_hist_hour (a twenty-fourth of the rows).
create table health_hist_day (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  day date not null,
  metric smallint not null,
  age_bucket smallint not null,
  bin integer not null,
  shard smallint not null,
  n bigint not null,
  primary key (project_id, place_version, day, metric, age_bucket, bin, environment, shard)
) with (fillfactor = 80);
create index health_hist_day_day on health_hist_day (day);

-- Per version and player, derived from the player's days (recomputed by every write that changes
-- them): the last day with a session started or ended, with one ended, with one ended with an error
-- ('-infinity': none). A window always ends now, so a player counts in a window from day W when the
-- last such day is on or after W.
create table health_player_summary (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  user_id bigint not null,
  active_day date not null,
  ended_day date not null,
  errored_day date not null,
  primary key (project_id, place_version, environment, user_id)
);
create index health_player_summary_day on health_player_summary (active_day);

-- How many players have each (active, ended, errored) last-day triple, per version: the distinct and
-- error-free player counts of any window in one small read. Kept with the summary, by differences.
create table health_player_counts (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  active_day date not null,
  ended_day date not null,
  errored_day date not null,
  shard smallint not null,
  n bigint not null,
  primary key (project_id, place_version, environment, active_day, ended_day, errored_day, shard)
) with (fillfactor = 80);
create index health_player_counts_day on health_player_counts (active_day);
