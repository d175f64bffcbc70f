-- Counters that reads can wait for (distinct users per group and per project, counts per environment
-- and per version, the minute, hour and day rollups) leave the ingest transaction: it appends one row
-- per project and batch here, and a drainer (db/counter-deltas.ts) deletes rows in id order, sums
-- them and applies the sums in one transaction, so a crash loses nothing and nothing applies twice.
-- The table only holds what is not applied yet: it stays small and churns, so it is vacuumed often.
-- No foreign key, like the other hot ingest tables; a project's delete removes its rows.
create table counter_deltas (
  id bigserial not null,
  project_id uuid not null,
  -- json, not jsonb: written once and read once, never searched
  payload json not null,
  created_at timestamptz not null default now(),
  primary key (id, project_id)
) with (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_threshold = 1000);
