-- Grouped search found its candidates through a trigram index over every project's messages: a
-- common term matched the groups of all projects, and each was read from the heap and rechecked
-- before the project filter dropped it, so one project's search slowed down as others grew. With the
-- project id as the index's first column (btree_gin) the index yields only that project's candidates.
-- The message is written once, when the group is created, so occurrence updates stay HOT as before.
create extension if not exists btree_gin;
create index error_groups_project_message_trgm on error_groups using gin (project_id, message gin_trgm_ops);
drop index error_groups_message_trgm;
