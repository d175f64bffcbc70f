-- Triage at scale: versions and snoozes on each group, per-group counts by environment and by game
-- version (kept at ingest), and player names for look-up.
-- None of the new group columns is indexed except snooze_until through a partial index, and ingest
-- never changes snooze_until on a snoozed group except when it reopens it, so the per-event update of
-- error_groups stays HOT.

alter table error_groups
  add column first_version text,
  add column last_version text,
  -- the version of the event that reopened a resolved group
  add column regressed_version text,
  -- an ignored group with any of these reopens itself: at that time, when count reaches
  -- snooze_count, or when user_count reaches snooze_users
  add column snooze_until timestamptz,
  add column snooze_count bigint,
  add column snooze_users bigint;
create index error_groups_snooze_until on error_groups (snooze_until) where snooze_until is not null;

-- occurrences per group and environment (throttled ones included), so an environment filter finds
-- every group that occurred there, not only those whose latest event did
create table group_environments (
  project_id uuid not null,
  group_id uuid not null,
  environment text not null,
  count bigint not null,
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  primary key (project_id, group_id, environment)
) with (fillfactor = 80);
create index group_environments_env on group_environments (project_id, environment, group_id);

-- occurrences per group and game version (events without a version are not counted here)
create table group_versions (
  project_id uuid not null,
  group_id uuid not null,
  version text not null,
  count bigint not null,
  first_seen timestamptz not null,
  last_seen timestamptz not null,
  primary key (project_id, group_id, version)
) with (fillfactor = 80);
create index group_versions_version on group_versions (project_id, version, group_id);

-- the latest name seen for each user id, for player look-up by name
alter table project_users add column player_name text;
create index project_users_name on project_users (project_id, lower(player_name) text_pattern_ops) where player_name is not null;

-- traces listed per project, newest first
create index traces_first_seen on traces (project_id, first_seen desc, trace_id desc);

-- Existing data: a group's whole count goes to its latest environment (the only one it kept), and
-- versions come from the stored raw events (throttled occurrences were never kept per version).
insert into group_environments (project_id, group_id, environment, count, first_seen, last_seen)
select project_id, id, environment, count, first_seen, last_seen from error_groups;

insert into group_versions (project_id, group_id, version, count, first_seen, last_seen)
select project_id, group_id, game_version, sum(count), min("timestamp"), max("timestamp")
from events where game_version is not null group by 1, 2, 3;

update error_groups g set
  first_version = (select v.version from group_versions v where v.project_id = g.project_id and v.group_id = g.id order by v.first_seen, v.version limit 1),
  last_version = (select v.version from group_versions v where v.project_id = g.project_id and v.group_id = g.id order by v.last_seen desc, v.version desc limit 1)
where exists (select 1 from group_versions v where v.project_id = g.project_id and v.group_id = g.id);

update project_users pu set player_name = e.player_name
from (select distinct on (project_id, user_id) project_id, user_id, player_name from events
      where user_id is not null and player_name is not null order by project_id, user_id, "timestamp" desc) e
where pu.project_id = e.project_id and pu.user_id = e.user_id;
