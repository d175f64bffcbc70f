-- Sentry protocol ingest: a numeric project id for DSNs, ingest-only DSN keys, and the event ids
-- already accepted (an SDK retry of the same event is acknowledged without being counted again).

-- Sentry SDKs accept only a number as the project part of a DSN.
alter table projects add column dsn_id bigint generated always as identity;
alter table projects add constraint projects_dsn_id_key unique (dsn_id);

-- Public keys go into client code: they are stored in plain text (the DSN is shown again at any
-- time) and may only post events.
create table dsn_keys (
  project_id uuid not null references projects (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text,
  public_key text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz,
  primary key (project_id, id),
  unique (id),
  unique (public_key)
);

-- Claimed inside the ingest transaction, so a retry racing the first attempt waits for it and then
-- finds the id. Kept for a day (the retention job deletes older ones): SDKs retry within minutes.
-- No foreign key, like the other tables written on every ingest: a deleted project's ids simply age out.
create table sentry_event_ids (
  project_id uuid not null,
  event_id uuid not null,
  received_at timestamptz not null default now(),
  primary key (project_id, event_id)
);
create index sentry_event_ids_received on sentry_event_ids (received_at);
