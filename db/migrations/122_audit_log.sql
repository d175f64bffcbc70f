-- The audit log (docs/audit.md): who changed what and when, per project (project_id set) and for
-- the instance (project_id null: accounts, instance admins, deleted projects). A project's rows go
-- with the project; the instance's `project.deleted` row stays. Rows never hold a secret (keys by
-- id, prefix and name; channels by kind and name; no passwords, tokens or URLs). Kept for
-- AUDIT_RETENTION_DAYS by the retention job.
create table audit_log (
  project_id uuid references projects (id) on delete cascade,
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  -- the account that acted (null: the command line or the service itself); its email is kept as it
  -- was, so the row still names the actor after the account changes
  actor_id uuid references users (id) on delete set null,
  actor_email text,
  action text not null check (length(action) between 1 and 100),
  target text check (length(target) <= 500),
  details jsonb not null default '{}'
);
create index audit_log_project on audit_log (project_id, id desc) where project_id is not null;
create index audit_log_instance on audit_log (id desc) where project_id is null;
create index audit_log_at on audit_log (at);

-- Instance admins read the instance's audit log. The account created by /setup is one; the command
-- line grants it (`npm run cli -- user:admin --email E`). On an existing install the oldest account
-- (the one /setup made) becomes one.
alter table users add column instance_admin boolean not null default false;
update users set instance_admin = true
where id = (select id from users order by created_at, id limit 1);
