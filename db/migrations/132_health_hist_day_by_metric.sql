-- A histogram read wants one metric of a project's versions over a window's days (the releases list:
-- memory and heartbeat; the page: memory by age). The day cells' key puts the day before the metric,
-- and the planner read them through the day index: every metric's cells of every project in the
-- window, keeping one metric's (26,102 rows in 1,621 blocks for 4,550, at 30 days of 10,000 servers).
-- Keyed by the metric after the project, the read visits only the cells it sums. The index holds no
-- counter, so a cell's update stays HOT.
create index health_hist_day_metric on health_hist_day (project_id, metric, place_version, day);
