-- Memory percentiles of a version over a window (the releases list) need no age split, but the
-- memory histograms keep one per server age bucket (7), for memory by age: a 30-day list read
-- summed seven times the bins it needed. Metric 3 holds the same samples' memory bins without the
-- split (age bucket 0), written beside metric 1 by every sample (db/health.ts addSamples); here it
-- is filled from the stored metric-1 bins, shard by shard, so the sums are those of metric 1.
insert into health_hist_hour (project_id, environment, place_version, hour, metric, age_bucket, bin, shard, n)
select project_id, environment, place_version, hour, 3, 0, bin, shard, sum(n)
from health_hist_hour where metric = 1
group by project_id, environment, place_version, hour, bin, shard;

insert into health_hist_day (project_id, environment, place_version, day, metric, age_bucket, bin, shard, n)
select project_id, environment, place_version, day, 3, 0, bin, shard, sum(n)
from health_hist_day where metric = 1
group by project_id, environment, place_version, day, bin, shard;
