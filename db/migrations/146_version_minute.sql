-- Error-level occurrences per game version, environment and minute: the numerator of the error-rate
-- health alert (db/health-alerts.ts errorRates), whose window is a number of minutes (at most 1,440)
-- ending at any minute. It counted the stored events of the window, so a burst the throttle kept out
-- of the rows (THROTTLE_LIMIT per issue) counted only the events it stored: the rate read lowest when
-- a new version errored most. Kept by the counter drain (db/counter-deltas.ts) from the same pending
-- cells as rollup_version_hour, so every occurrence received counts, exactly once; kept two days
-- (db/health.ts pruneHealth).
--
-- One writer (the drain holds its lock), so no shards.
create table rollup_version_minute (
  project_id uuid not null,
  version text not null,
  environment text not null,
  bucket timestamptz not null,
  count bigint not null,
  primary key (project_id, version, bucket, environment)
) with (fillfactor = 80);
create index rollup_version_minute_time on rollup_version_minute (bucket);

-- The last two days from the stored events, what the alert read until now. Pending counter rows
-- written before this migration carry their version cells by hour (`h`): those land in the hour
-- rollup only, and their stored events are counted here.
insert into rollup_version_minute (project_id, version, environment, bucket, count)
select project_id, game_version, environment, date_bin('1 minute', "timestamp", timestamptz '2000-01-01 00:00:00+00'), sum(count)
from events
where game_version is not null and level = 'error' and "timestamp" >= now() - interval '2 days'
group by 1, 2, 3, 4;
