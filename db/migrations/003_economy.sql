-- Economy: one snapshot per player (pushed at disconnect or read by the Open Cloud scan), an append-only
-- history of balance changes, the scan's resumable state, and the encrypted Open Cloud key.
-- Balances are numeric, not bigint: profiles hold Luau doubles, and exploited or inflated economies reach
-- values far past 2^63. Every table leads with project_id.

create table economy_snapshots (
  project_id uuid not null references projects (id) on delete cascade,
  user_id bigint not null check (user_id > 0),
  cash numeric not null,
  bank numeric not null,
  dark_coin numeric not null,
  total numeric generated always as (cash + bank + dark_coin) stored,
  -- one name per character table found (RPCharacterOne first)
  display_names text[] not null default '{}',
  username text,
  display_name text,
  data_code numeric,
  -- the time of the last push (seed rule 4); a scan never invents one
  last_logout timestamptz,
  -- when these balances were true: the push time, or the scanned revision's creation time
  observed_at timestamptz not null,
  source text not null check (source in ('push', 'scan')),
  revision_time timestamptz,
  updated_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index economy_snapshots_cash on economy_snapshots (project_id, cash desc, user_id);
create index economy_snapshots_bank on economy_snapshots (project_id, bank desc, user_id);
create index economy_snapshots_dark_coin on economy_snapshots (project_id, dark_coin desc, user_id);
create index economy_snapshots_total on economy_snapshots (project_id, total desc, user_id);

-- append-only; a row is written only when an observation's balances differ from the previous snapshot
create table economy_history (
  project_id uuid not null,
  id bigint generated always as identity,
  user_id bigint not null,
  cash numeric not null,
  bank numeric not null,
  dark_coin numeric not null,
  total numeric not null,
  observed_at timestamptz not null,
  source text not null check (source in ('push', 'scan')),
  primary key (project_id, id)
);
create index economy_history_user on economy_history (project_id, user_id, observed_at, id);
create index economy_history_time on economy_history (project_id, observed_at);

-- one scan per project at a time; the cursor is the pageToken of the next page to list, saved in the
-- same transaction as that page's snapshots so a restart neither loses nor double-counts a page
create table economy_sync (
  project_id uuid primary key references projects (id) on delete cascade,
  scan_id uuid,
  state text not null default 'idle' check (state in ('idle', 'queued', 'running', 'succeeded', 'failed')),
  cursor text,
  pages bigint not null default 0,
  scanned bigint not null default 0,
  stored bigint not null default 0,
  skipped bigint not null default 0,
  failed bigint not null default 0,
  error text,
  started_at timestamptz,
  finished_at timestamptz,
  updated_at timestamptz not null default now()
);

create table economy_open_cloud_keys (
  project_id uuid primary key references projects (id) on delete cascade,
  key_ciphertext bytea not null,
  key_iv bytea not null,
  key_tag bytea not null,
  key_last4 text not null,
  universe_id bigint not null check (universe_id > 0),
  datastore_name text not null,
  scope text not null default 'global',
  key_prefix text,
  updated_at timestamptz not null default now()
);
