-- Occurrences per game version, environment, hour and level (docs/health.md, "Errors per 1,000
-- player-minutes"): what the release health error rate and its hourly series divide by the
-- player-minutes. Kept by the counter drain (db/counter-deltas.ts) from the same pending rows as
-- group_versions and the rollup_minute/hour/day cells, so it counts every occurrence received,
-- throttled ones included, exactly once (a drain applies its rows whole or not at all).
--
-- One writer (the drain holds its lock), so no shards; a few rows per version and hour.
create table rollup_version_hour (
  project_id uuid not null,
  version text not null,
  environment text not null,
  bucket timestamptz not null,
  level text not null,
  count bigint not null,
  primary key (project_id, version, bucket, environment, level)
) with (fillfactor = 80);
create index rollup_version_hour_time on rollup_version_hour (bucket);

-- The past, from the stored events: the throttle kept some occurrences of a burst out of the rows, so
-- hours before this migration count their stored events only (approximate, as the figure was until
-- now). Pending counter rows written before it carry no version cells: their events are stored, so
-- they are counted here, once.
insert into rollup_version_hour (project_id, version, environment, bucket, level, count)
select project_id, game_version, environment, date_trunc('hour', "timestamp", 'UTC'), level, sum(count)
from events
where game_version is not null
group by 1, 2, 3, 4, 5;

-- How far the shard compaction (db/health.ts compactHealthShards) has merged each rollup's closed
-- cells into one row per cell: reads of 7 and 30 days then sum one row per cell, not eight.
create table health_compaction (
  rollup text primary key,
  through timestamptz not null
);

-- Open player sessions per version and environment, kept like the hour rollup (db/health-cells.ts:
-- a write adds what its changed session rows count for after minus before, in its transaction), so
-- `sessions.open` reads a few rows instead of counting every open session. Retention subtracts the
-- open sessions it deletes (db/health.ts pruneHealth).
create table health_open (
  project_id uuid not null,
  environment text not null,
  place_version text not null,
  shard smallint not null,
  n bigint not null,
  primary key (project_id, place_version, environment, shard)
) with (fillfactor = 80);
insert into health_open (project_id, environment, place_version, shard, n)
select project_id, environment, place_version, 0, count(*) from health_sessions where ended_at is null group by 1, 2, 3;
