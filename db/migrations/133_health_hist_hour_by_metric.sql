-- A histogram read of a 7- or 30-day window takes the hours before the window's first whole UTC day
-- from the hour cells (db/health-reads.ts histogram), one or two metrics of a few versions. The hour
-- cells' key puts the hour before the metric, so that read visited every metric's cells of those
-- hours (memory by age, heartbeat, memory without the age split: 360 cells a version and hour, to keep
-- the 40 or 280 of one metric). Keyed by the metric after the project, as the day cells are
-- (migration 132), it visits only the cells it sums. The index holds no counter, so a cell's update
-- by the ingest stays HOT; a new cell (the first sample of a bin in an hour) adds one more entry.
create index health_hist_hour_metric on health_hist_hour (project_id, metric, place_version, hour);
