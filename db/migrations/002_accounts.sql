-- Accounts: users, server-side sessions, project membership, share links and the rate-limit counters.
-- Nothing here is written on the ingest path, so these tables keep their foreign keys.

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null check (length(email) between 3 and 320),
  password_hash text not null,
  created_at timestamptz not null default now()
);
-- emails compare case-insensitively; they are also stored lowercased
create unique index users_email on users (lower(email));

-- the cookie carries a random token; only its SHA-256 is stored, so a database leak yields no sessions
create table sessions (
  token_hash bytea primary key,
  user_id uuid not null references users (id) on delete cascade,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index sessions_user on sessions (user_id);
create index sessions_expires on sessions (expires_at);

create table project_members (
  project_id uuid not null references projects (id) on delete cascade,
  user_id uuid not null references users (id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member')),
  created_at timestamptz not null default now(),
  primary key (project_id, user_id)
);
create index project_members_user on project_members (user_id);

create table share_links (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  group_id uuid not null,
  role text not null check (role in ('viewer', 'editor')),
  token_hash bytea not null,
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  primary key (project_id, id),
  unique (id),
  unique (token_hash),
  -- deleting a group takes its share links with it
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);
create index share_links_group on share_links (project_id, group_id);

-- Fixed-window counters shared by every instance (failed logins per email and per address, share
-- requests per address). One row per key; a hit in a new window restarts the count.
create table rate_limits (
  key text primary key,
  window_start timestamptz not null,
  count integer not null
);
create index rate_limits_window on rate_limits (window_start);
