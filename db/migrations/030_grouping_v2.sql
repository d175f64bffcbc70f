-- Grouping version 2, grouping upgrades without split issues, and merge/unmerge.
--
-- grouping_version: the grouping algorithm that made the group. Groups made before this migration
-- were made by version 1; new ones by version 2.
--
-- merged_into: a group merged into another one is kept, hidden, as a member of its target. The
-- member row still owns its fingerprint and keeps its own counters (count, users, first/last seen,
-- level), so an unmerge restores it exactly; events, rollups and the target's counters carry the
-- sum. merged_own marks the member that holds the target's own fingerprint (made at the first merge
-- into a target, which from then on is an aggregate keyed by a fingerprint of its own).
alter table error_groups
  add column grouping_version smallint not null default 1,
  add column merged_into uuid,
  add column merged_own boolean not null default false,
  add constraint error_groups_merged_into_fkey foreign key (project_id, merged_into)
    references error_groups (project_id, id) on delete cascade;
alter table error_groups alter column grouping_version set default 2;
-- written only by merge and unmerge, so it does not cost the per-occurrence updates their HOT path
create index error_groups_merged_into on error_groups (project_id, merged_into) where merged_into is not null;

-- Fingerprints of a newer grouping version that joined an existing group through the previous
-- version's fingerprint (Sentry's secondary hashes): later events with that fingerprint go straight
-- to the group.
create table group_aliases (
  project_id uuid not null references projects (id) on delete cascade,
  fingerprint text not null,
  group_id uuid not null,
  created_at timestamptz not null default now(),
  primary key (project_id, fingerprint),
  foreign key (project_id, group_id) references error_groups (project_id, id) on delete cascade
);

-- The member group an event or a rollup cell came from when it differs from group_id (merged
-- issues), so an unmerge can move exactly those back.
alter table events add column origin_group_id uuid;

alter table rollup_minute add column origin_id uuid;
update rollup_minute set origin_id = group_id;
alter table rollup_minute alter column origin_id set not null,
  drop constraint rollup_minute_pkey,
  add primary key (project_id, bucket, group_id, level, origin_id);

alter table rollup_hour add column origin_id uuid;
update rollup_hour set origin_id = group_id;
alter table rollup_hour alter column origin_id set not null,
  drop constraint rollup_hour_pkey,
  add primary key (project_id, bucket, group_id, level, origin_id);
