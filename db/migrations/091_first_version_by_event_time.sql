-- An issue's first version is the version of its earliest event by the event's timestamp, not of the
-- first event received: servers that flush late (offline queues, retries) send last week's events
-- after today's. first_version_at is that event's time, so a later batch can tell whether it holds an
-- earlier one. Not indexed: occurrence updates of error_groups stay HOT.
alter table error_groups add column first_version_at timestamptz;

-- Plain groups: every version they occurred in is in group_versions, with its earliest occurrence,
-- so the first version is taken from there again (this corrects groups whose old events came late).
update error_groups g set (first_version, first_version_at) = (
  select v.version, v.first_seen from group_versions v
  where v.project_id = g.project_id and v.group_id = g.id
  order by v.first_seen, v.version limit 1)
where g.merged_into is null
  and not exists (select 1 from error_groups m where m.project_id = g.project_id and m.merged_into = g.id)
  and exists (select 1 from group_versions v where v.project_id = g.project_id and v.group_id = g.id);

-- Merged issues and their members keep their version, with the best time known for it: the member
-- holding the issue's own fingerprint takes the issue's when it has none (a merge did not copy it).
update error_groups o set first_version = t.first_version
from error_groups t
where o.merged_own and o.first_version is null and t.project_id = o.project_id and t.id = o.merged_into;

update error_groups g set first_version_at = coalesce(
  (select v.first_seen from group_versions v
   where v.project_id = g.project_id and v.group_id = case when g.merged_own then g.merged_into else g.id end
     and v.version = g.first_version),
  g.first_seen)
where g.first_version is not null and g.first_version_at is null;

-- a merged issue is first seen in the earliest version over its members
update error_groups t set (first_version, first_version_at) = (
  select m.first_version, m.first_version_at from error_groups m
  where m.project_id = t.project_id and m.merged_into = t.id and m.first_version is not null
  order by m.first_version_at, m.first_version limit 1)
where exists (select 1 from error_groups m where m.project_id = t.project_id and m.merged_into = t.id and m.first_version is not null);
