-- Alert rules on release health (issue 41, docs/health.md#alerts). Each trigger watches a condition
-- about a subject (a version, a server, or the whole project) and sends a "fired" message when the
-- condition starts to hold and a "recovered" message when it stops:
--   error_rate           a version's errors per 1,000 player-minutes over the last `window_minutes`
--                        above `errors_per_1000`, once it has `min_player_minutes` in the window
--   error_free_sessions  a new version's error-free session rate (all its ended sessions; a version first
--                        seen in the last 7 days) below `error_free_pct` %, once `min_sessions` sessions have ended
--   server_memory        a server's memory above `memory_mb` in every minute of the last `window_minutes`
--   server_heartbeat     a version's p90 heartbeat time above `heartbeat_ms` in every minute of the
--                        last `window_minutes`
--   out_of_memory        `threshold_count` (default 1) out-of-memory closes of a version within the
--                        last `window_minutes`
--   servers_drop         the live server count down by `drop_pct` % or more from its highest in the
--                        10 minutes before, from at least `min_servers` servers
-- `environments` filters every health trigger (empty: all); the error filters do not apply.
alter table alert_rules drop constraint alert_rules_trigger_check;
alter table alert_rules add constraint alert_rules_trigger_check
  check (trigger in ('new_group', 'regression', 'frequency', 'economy_anomaly', 'supply_growth',
    'error_rate', 'error_free_sessions', 'server_memory', 'server_heartbeat', 'out_of_memory', 'servers_drop'));
alter table alert_rules
  add column errors_per_1000 double precision check (errors_per_1000 > 0),
  add column min_player_minutes integer check (min_player_minutes between 0 and 1000000000),
  add column error_free_pct double precision check (error_free_pct > 0 and error_free_pct <= 100),
  add column min_sessions integer check (min_sessions between 1 and 1000000000),
  add column memory_mb double precision check (memory_mb > 0),
  add column heartbeat_ms double precision check (heartbeat_ms > 0),
  add column drop_pct double precision check (drop_pct > 0 and drop_pct <= 100),
  add column min_servers integer check (min_servers between 1 and 1000000);
alter table alert_rules add constraint alert_rules_health_check check (
  case trigger
    when 'error_rate' then errors_per_1000 is not null and min_player_minutes is not null and window_minutes is not null
    when 'error_free_sessions' then error_free_pct is not null and min_sessions is not null
    when 'server_memory' then memory_mb is not null and window_minutes is not null
    when 'server_heartbeat' then heartbeat_ms is not null and window_minutes is not null
    when 'out_of_memory' then threshold_count is not null and window_minutes is not null
    when 'servers_drop' then drop_pct is not null and min_servers is not null
    else true
  end);

-- One row per (rule, subject) once a health rule has fired on it: `version:<place_version>`,
-- `server:<job_id>` or `project`. Firing inserts it (or, after a recovery and the rule's cooldown,
-- opens it again); recovering sets `recovered_at` on an open row. Both are single conditional
-- statements on this row, so of two passes (two workers, two instances) only one sends each message.
create table health_alert_state (
  project_id uuid not null references projects (id) on delete cascade,
  rule_id uuid not null,
  subject text not null,
  fired_at timestamptz not null,
  recovered_at timestamptz,
  -- what crossed the threshold when it fired (the figures the fired message carried)
  fired jsonb not null default '{}',
  primary key (project_id, rule_id, subject)
);
create index health_alert_state_open on health_alert_state (project_id, rule_id) where recovered_at is null;
