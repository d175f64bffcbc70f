-- Economy alert evaluation (app/alerts/economy.server.ts) reads only the rises and unexplained gains
-- written since its previous pass. Each row records the transaction that wrote it; a project's cursor
-- is the oldest transaction still running when the previous pass read (pg_snapshot_xmin): every row
-- of an older transaction was visible to that pass, every other row is read again by the next one.
-- So a row is evaluated once it has committed, whatever order concurrent writers commit in, without
-- re-reading a whole time window on every push. Existing rows keep null and are never alerted on.
alter table economy_rises add column written_xid xid8, add column recorded_at timestamptz;
alter table economy_rises alter column written_xid set default pg_current_xact_id(),
  alter column recorded_at set default now();
create index economy_rises_written on economy_rises (project_id, written_xid);

alter table economy_unexplained add column written_xid xid8;
alter table economy_unexplained alter column written_xid set default pg_current_xact_id();
create index economy_unexplained_written on economy_unexplained (project_id, written_xid);

create table economy_alert_cursors (
  project_id uuid primary key references projects (id) on delete cascade,
  read_xid xid8 not null,
  updated_at timestamptz not null default now()
);
