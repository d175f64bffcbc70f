-- Alerts: channels (where to send), rules (when), per-(rule, group) state (cooldowns and "already
-- alerted" marks) and the delivery log. Every table leads with project_id.

create table alert_channels (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 100),
  kind text not null check (kind in ('discord', 'slack', 'webhook')),
  -- the destination URL holds a credential (Discord/Slack webhook token): AES-256-GCM sealed under a
  -- key derived from APP_SECRET; only url_hint (scheme, host, start of the path) is ever shown
  url_sealed bytea not null,
  url_hint text not null,
  -- webhook channels: the HMAC signing secret, sealed the same way
  secret_sealed bytea,
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, id),
  unique (id)
);

create table alert_rules (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null check (length(name) between 1 and 100),
  trigger text not null check (trigger in ('new_group', 'regression', 'frequency')),
  threshold_count integer check (threshold_count between 1 and 100000000),
  window_minutes integer check (window_minutes between 1 and 1440),
  -- empty array = no filter
  levels text[] not null default '{}',
  environments text[] not null default '{}',
  message_contains text,
  -- channel ids of the same project; deleting a channel removes it from every rule
  channel_ids uuid[] not null default '{}',
  cooldown_minutes integer not null default 30 check (cooldown_minutes between 0 and 10080),
  enabled boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (project_id, id),
  unique (id),
  check (trigger <> 'frequency' or (threshold_count is not null and window_minutes is not null))
);
create index alert_rules_enabled on alert_rules (project_id) where enabled;

-- One row per (rule, group) once the rule has fired for the group. Claiming a send is one
-- conditional upsert (cooldown elapsed, mark newer), so concurrent dispatches on several instances
-- cannot both send. `mark` is the regressed_at the last regression alert was for.
create table alert_state (
  project_id uuid not null,
  rule_id uuid not null,
  group_id uuid not null,
  last_sent timestamptz not null,
  mark timestamptz,
  primary key (project_id, rule_id, group_id)
);

create table alert_deliveries (
  project_id uuid not null references projects (id) on delete cascade,
  id bigint generated always as identity,
  created_at timestamptz not null default now(),
  -- null for test sends; rules and channels may be deleted later, the log stays
  rule_id uuid,
  channel_id uuid,
  group_id uuid,
  trigger text not null,
  status text not null check (status in ('sent', 'failed')),
  response_code integer,
  error text,
  attempts integer not null,
  primary key (project_id, id)
);
create index alert_deliveries_recent on alert_deliveries (project_id, created_at desc, id desc);
