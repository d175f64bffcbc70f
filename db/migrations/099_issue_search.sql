-- Issue search finds an issue by its culprit and by the players who had it, not only by its message.
-- The culprit gets the same per-project trigram index as the message (086); it is written once, when
-- the group is created, so occurrence updates stay HOT. A player's issues are found through their user
-- id (group_users was keyed by group only: looking a player up read every row of the project), and a
-- player by any part of their latest name (the existing name index serves prefixes only). Ingest
-- rewrites a player's row only when the name changes or a minute passed, and the name rarely changes,
-- so those updates stay HOT too.
create index error_groups_project_culprit_trgm on error_groups using gin (project_id, culprit gin_trgm_ops) where culprit is not null;
create index group_users_user on group_users (project_id, user_id, group_id);
create index project_users_name_trgm on project_users using gin (project_id, player_name gin_trgm_ops) where player_name is not null;
