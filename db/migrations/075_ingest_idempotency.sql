-- Idempotency keys of native ingest (the Idempotency-Key header). A request's events may be written
-- in several transactions (one per writer shard); each transaction records here the part of the
-- request it committed, so a retry with the same key writes only the parts still missing and
-- answers the same totals. Parts of one key are disjoint sets of the request's event indexes; the
-- part's lowest index names it. Kept for at least a day (the hourly retention job deletes older
-- rows). No foreign key, like the other tables written on every ingest: a deleted project's keys
-- simply age out.
create table ingest_idempotency (
  project_id uuid not null,
  key text not null,
  first_event int not null,
  -- the request's event indexes (0-based) this part wrote
  events int[] not null,
  -- sha-256 of the request body: the same key with another body is refused
  body_hash bytea not null,
  stored int not null,
  throttled int not null,
  created_at timestamptz not null default now(),
  primary key (project_id, key, first_event)
);

create index ingest_idempotency_created_at on ingest_idempotency (created_at);
