-- Anomalies without visiting the history's rows: the rise index also carries what the filter and the
-- order need (observation time, id, both totals), so counting the rises in a window and picking one
-- page of them is an index-only scan over the large rises; only the page's rows are read from the table.
-- Still an expression index over every row (not a partial one), so ANALYZE keeps statistics on the rise.
create index economy_history_rise_covering on economy_history (project_id, (total - prev_total))
  include (observed_at, id, total, prev_total);
drop index economy_history_rise;
alter index economy_history_rise_covering rename to economy_history_rise;
