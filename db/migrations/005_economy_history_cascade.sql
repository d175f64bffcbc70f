-- Deleting a project must take its balance history with it. History is append-only and written at most
-- 100 rows per push, so the foreign-key check costs little, unlike on the error-ingest tables.
alter table economy_history
  add constraint economy_history_project_fk foreign key (project_id) references projects (id) on delete cascade;
