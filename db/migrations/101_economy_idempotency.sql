-- Economy pushes take an Idempotency-Key like native ingest: the first complete push under a key
-- records its body's hash and its answer in the transaction that writes its players; a retry of the
-- same body answers that, writing nothing, and another body under the key is a 409. Keys are kept at
-- least a day (the hourly retention job removes older ones). No foreign key, like ingest_idempotency.
create table economy_idempotency (
  project_id uuid not null,
  key text not null,
  body_hash bytea not null,
  -- json, not jsonb: a retry gets the first answer byte for byte (jsonb would reorder its keys)
  answer json not null,
  created_at timestamptz not null default now(),
  primary key (project_id, key)
);

create index economy_idempotency_created_at on economy_idempotency (created_at);
