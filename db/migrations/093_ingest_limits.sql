-- Abuse limits of the Sentry endpoints, whose keys are public.

-- Events per minute a DSN key may post; null: no limit. Existing and new keys start at 6,000 (100
-- a second), far above what a game's errors send through one key and far below a flood's rate.
alter table dsn_keys add column rate_limit_per_minute integer default 6000
  check (rate_limit_per_minute is null or rate_limit_per_minute between 1 and 100000000);

-- Fixed one-minute windows counting what a subject used in that minute: `key:<dsn key id>` counts
-- the events a DSN key posted (refused ones included). Each request adds to its row in one upsert,
-- so the limit holds across app instances. Unlogged, like the table below: no WAL and no flush at
-- commit on the ingest path; a crash empties it, which only forgets the current minute's usage.
-- Rows older than an hour are pruned.
create unlogged table ingest_windows (
  project_id uuid not null,
  subject text not null,
  window_start timestamptz not null,
  used bigint not null,
  primary key (project_id, subject, window_start)
);

-- The new issues a project's Sentry events were allowed to create in a minute: one row per
-- fingerprint, at most the bound per window. Written under a per-project advisory lock, so
-- concurrent requests (on any instance) of one new error share its slot and the bound is exact.
create unlogged table new_issue_claims (
  project_id uuid not null,
  window_start timestamptz not null,
  fingerprint text not null,
  primary key (project_id, window_start, fingerprint)
);
