-- Occurrences per UTC day, group, level and origin: the whole days of the 7d and 30d stats windows
-- and the 30d series read these instead of 24 hour buckets each, so those reads cost groups × days,
-- not groups × hours. Written by ingest next to rollup_hour and moved with it by merge, unmerge and
-- deletes. Not partitioned: a project writes at most groups × days rows (1,000 groups for a year is
-- 365,000 rows), and like the hourly rollups the rows stay after raw events expire.
create table rollup_day (
  project_id uuid not null,
  -- midnight UTC of the day
  bucket timestamptz not null,
  group_id uuid not null,
  level text not null,
  -- the member group the occurrences came from (group_id unless merged; see 030_grouping_v2.sql)
  origin_id uuid not null,
  count bigint not null,
  primary key (project_id, bucket, group_id, level, origin_id)
) with (fillfactor = 80);
create index rollup_day_group on rollup_day (project_id, group_id, bucket);

insert into rollup_day (project_id, bucket, group_id, level, origin_id, count)
select project_id, date_trunc('day', bucket, 'UTC'), group_id, level, origin_id, sum(count)
from rollup_hour
group by 1, 2, 3, 4, 5;
