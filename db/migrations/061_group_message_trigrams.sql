-- Grouped search (`search=` on groups) is a case-insensitive substring match on the group's message.
-- A trigram index answers it without reading every group of the project. The message is written once,
-- when the group is created, so per-occurrence updates of the group row stay HOT.
create extension if not exists pg_trgm;
create index error_groups_message_trgm on error_groups using gin (message gin_trgm_ops);
