-- Detection per currency (docs/economy.md, "Detection"): thresholds are learned from each currency's
-- latest rises over a trailing window, so the rises are read newest first within one currency.
create index economy_rises_recent on economy_rises (project_id, currency, observed_at desc)
  include (amount, prev_amount);

-- anomalies are never looked for in the sum of all currencies any more: the total's rise index has
-- no reader, and every history row paid for it
drop index if exists economy_history_rise;
