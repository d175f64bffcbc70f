-- Issue search finds an issue by the script paths and function names of its stack frames, not only by
-- its message and culprit. Each issue keeps the distinct frames of its events (`script path` or `script
-- path function`, one per line, at most 32: those of its first events and new ones up to the cap), with
-- the same per-project trigram index as the message (086) and culprit (099). The group upsert writes
-- them and changes the row's frames only when a new frame arrives, so occurrence updates stay HOT.
--
-- The frames are parsed as grouping parses a stack, in the application: an existing issue starts with
-- none (null) and is filled from its newest stored events by a job the service runs at start
-- (jobs/group-frames.ts); the partial index finds the issues still to fill.
alter table error_groups add column frames text;
create index error_groups_project_frames_trgm on error_groups using gin (project_id, frames gin_trgm_ops) where frames is not null;
create index error_groups_frames_pending on error_groups (project_id, id) where frames is null;
