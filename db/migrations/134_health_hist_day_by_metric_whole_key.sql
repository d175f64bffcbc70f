-- The day cells' index by metric (migration 132) held (project, metric, version, day) only: a look-up
-- of one cell by its whole key, as the shard compaction makes for every cell it merges
-- (db/health.ts), could be planned through it and then filter every bin, age bucket and shard of that
-- version's metric and day (2,240 entries for memory by age) for each cell. Holding the whole key (in
-- the read's order), it finds the cell exactly, and the histogram reads use it as before. It still
-- holds no counter: a cell's update stays HOT.
drop index health_hist_day_metric;
create index health_hist_day_metric on health_hist_day (project_id, metric, place_version, day, age_bucket, bin, environment, shard);
