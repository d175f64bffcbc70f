-- Core schema: projects, API keys, error groups, raw events, traces and the stats rollups.
-- Every table that holds project data leads with project_id so it can later be distributed by project.
-- The tables written on every ingest (events, group_users, project_users, traces, rollups) carry no foreign keys: a key check
-- per row costs ingest throughput, and deleting a group or project removes its rows explicitly.

create table projects (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  created_at timestamptz not null default now()
);

create table api_keys (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text,
  prefix text not null,
  key_hash bytea not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  primary key (project_id, id),
  unique (id),
  unique (key_hash)
);

-- error > warn > info; a group keeps the most severe level it has seen
create function level_rank(level text) returns int
  language sql immutable parallel safe
  return case level when 'error' then 3 when 'warn' then 2 else 1 end;

create table error_groups (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  fingerprint text not null,
  message text not null,
  level text not null check (level in ('error', 'warn', 'info')),
  status text not null default 'open' check (status in ('open', 'resolved', 'ignored')),
  count bigint not null default 0,
  user_count bigint not null default 0,
  stored_count bigint not null default 0,
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  culprit text,
  environment text not null,
  created_at timestamptz not null default now(),
  regressed_at timestamptz,
  resolved_at timestamptz,
  -- receive times of the untraced rows stored in the current throttle window (at most the limit)
  throttle_times timestamptz[] not null default '{}',
  primary key (project_id, id),
  unique (project_id, fingerprint)
) with (fillfactor = 70);
-- Only the key and fingerprint are indexed: every ingest updates count, last_seen and the throttle
-- times, and with no index on those columns the update stays HOT (no index writes, no index bloat).
-- A project's groups are few enough to filter and sort from the primary key.

create table events (
  project_id uuid not null,
  id bigint generated always as identity,
  group_id uuid not null,
  message text not null,
  level text not null,
  stack_trace text,
  user_id bigint,
  player_name text,
  trace_id uuid,
  job_id text,
  place_id bigint,
  game_version text,
  environment text not null,
  context jsonb,
  tags text[],
  count integer not null default 1,
  "timestamp" timestamptz not null,
  received_at timestamptz not null default now(),
  primary key (project_id, id)
);
create index events_timestamp on events (project_id, "timestamp" desc, id desc);
create index events_group on events (project_id, group_id, "timestamp" desc, id desc);
create index events_trace on events (project_id, trace_id) where trace_id is not null;
create index events_user on events (project_id, user_id, "timestamp" desc) where user_id is not null;

-- distinct users per group, for user_count
create table group_users (
  project_id uuid not null,
  group_id uuid not null,
  user_id bigint not null,
  primary key (project_id, group_id, user_id)
);

-- latest occurrence per user (kept to the minute): a user is affected in a window ending now iff
-- last_seen is inside it
create table project_users (
  project_id uuid not null,
  user_id bigint not null,
  last_seen timestamptz not null,
  primary key (project_id, user_id)
) with (fillfactor = 80);
create index project_users_last_seen on project_users (project_id, last_seen);

create table traces (
  project_id uuid not null,
  trace_id uuid not null,
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  event_count bigint not null,
  group_ids uuid[] not null,
  primary key (project_id, trace_id)
);

-- occurrences per group and level, by occurrence time; maintained at ingest
create table rollup_minute (
  project_id uuid not null,
  bucket timestamptz not null,
  group_id uuid not null,
  level text not null,
  count bigint not null,
  primary key (project_id, bucket, group_id, level)
) with (fillfactor = 80);

create table rollup_hour (
  project_id uuid not null,
  bucket timestamptz not null,
  group_id uuid not null,
  level text not null,
  count bigint not null,
  primary key (project_id, bucket, group_id, level)
) with (fillfactor = 80);
create index rollup_hour_group on rollup_hour (project_id, group_id, bucket);
