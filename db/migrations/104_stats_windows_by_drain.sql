-- The deferred counters' drain (db/counter-deltas.ts) writes the minute and the hour rollups of the
-- same cells in one statement, and each fired its triggers: every touched window row was updated
-- two to four times per drain (a second update of a row this transaction already updated also re-checks its
-- foreign key), from transition tables the triggers aggregated again. The drain now adds its cells to
-- all four windows itself, once, from the minute cells it has already summed (a minute cell is in a
-- 7d or 30d window iff its hour is: those windows start on the hour), and sets
-- `monitor.drain_applies_windows` for its own statement so the triggers stand aside; it then moves
-- the windows of its projects that fell a unit behind, as the triggers do. Every other writer
-- (merges, unmerges, deletes, retention) still goes through the triggers.

drop trigger stats_windows_insert on rollup_minute;
drop trigger stats_windows_update on rollup_minute;
drop trigger stats_windows_delete on rollup_minute;
drop trigger stats_windows_insert on rollup_hour;
drop trigger stats_windows_update on rollup_hour;
drop trigger stats_windows_delete on rollup_hour;

create trigger stats_windows_insert after insert on rollup_minute referencing new table as new_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_update after update on rollup_minute referencing old table as old_rows new table as new_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_delete after delete on rollup_minute referencing old table as old_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_insert after insert on rollup_hour referencing new table as new_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('7d', '30d');
create trigger stats_windows_update after update on rollup_hour referencing old table as old_rows new table as new_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('7d', '30d');
create trigger stats_windows_delete after delete on rollup_hour referencing old table as old_rows
  for each statement when (coalesce(current_setting('monitor.drain_applies_windows', true), '') <> 'on')
  execute function stats_windows_follow('7d', '30d');
