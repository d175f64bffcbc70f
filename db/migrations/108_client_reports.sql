-- Client reports (docs/api.md, "Client reports"): what an SDK dropped before it could send it, by
-- category and reason, and the SDK's last own warning. Quantities are added per project, per UTC
-- day of receipt, per category and reason; the last warning is one row per project (the newest `at`
-- wins). A report sent with an Idempotency-Key records the key in the statement that adds it, so a
-- retry adds nothing again; keys are kept as long as ingest's (the hourly retention job). No foreign
-- keys, like the other tables written on every ingest: deleting a project deletes its rows explicitly.
create table sdk_discards (
  project_id uuid not null,
  day date not null,
  category text not null,
  reason text not null,
  quantity bigint not null,
  primary key (project_id, day, category, reason)
);

create table sdk_last_warnings (
  project_id uuid not null primary key,
  message text not null,
  at timestamptz not null,
  received_at timestamptz not null default now()
);

create table client_report_keys (
  project_id uuid not null,
  -- where the report came: 'ingest' (a batch's client_report, under the batch's key) or 'report'
  -- (POST /api/client-reports); one namespace each, so the two cannot clash
  via text not null,
  key text not null,
  -- sha-256 of the body the key was first sent with: the same key with another body is refused
  body_hash bytea not null,
  created_at timestamptz not null default now(),
  primary key (project_id, via, key)
);

create index client_report_keys_created_at on client_report_keys (created_at);
