-- The economy audit (docs/economy.md): opening balances apart from gains, thresholds learned per
-- currency with per-project overrides, flows that must explain gains, and alert rules on the economy.
-- This file holds the tables; the logic that fills them comes with later migrations and the code.

-- A player's first observation is their opening balance: counted per UTC day and currency as the
-- new players' starting wealth, never as a gain (gained/gainers) of that day.
alter table economy_daily_currency
  add column opening numeric not null default 0,
  add column openers integer not null default 0;

-- What the anomaly detector uses per currency when a request names no factor or minimum: an owner's
-- override, else what was learned from the currency's own rises over a trailing window.
create table economy_threshold_overrides (
  project_id uuid not null references projects (id) on delete cascade,
  currency text not null,
  factor numeric check (factor > 1),
  min_amount numeric check (min_amount >= 0),
  -- no anomalies for this currency at all (alerts included)
  off boolean not null default false,
  updated_at timestamptz not null default now(),
  updated_by uuid,
  primary key (project_id, currency)
);

create table economy_learned_thresholds (
  project_id uuid not null references projects (id) on delete cascade,
  currency text not null,
  factor numeric not null,
  min_amount numeric not null,
  -- how many rises the figures were learned from, and over which window
  rises integer not null,
  window_days integer not null,
  computed_at timestamptz not null default now(),
  primary key (project_id, currency)
);

-- Flows: what the game says moved a player's balance (positive: a source such as a quest or a
-- purchase; negative: a sink such as a shop). `received_at` is the service's time of the write, the
-- order reconciliation goes by; `occurred_at` is the game server's clock, as sent, for display.
create table economy_flows (
  project_id uuid not null references projects (id) on delete cascade,
  id bigint generated always as identity,
  user_id bigint not null,
  currency text not null,
  amount numeric not null check (amount <> 0),
  source text not null,
  item text,
  occurred_at timestamptz,
  received_at timestamptz not null,
  primary key (project_id, id)
);
create index economy_flows_player on economy_flows (project_id, user_id, currency, received_at);

-- since when the game has sent flows of a currency: only gains between observations after that are
-- reconciled, so a game that starts sending flows is not flagged for the time before
create table economy_flow_currencies (
  project_id uuid not null references projects (id) on delete cascade,
  currency text not null,
  first_received_at timestamptz not null,
  primary key (project_id, currency)
);

-- sources and sinks per UTC day (of receipt), currency and source; shards as economy_daily_currency
create table economy_flow_daily (
  project_id uuid not null references projects (id) on delete cascade,
  currency text not null,
  source text not null,
  day date not null,
  shard smallint not null,
  gained numeric not null default 0,
  spent numeric not null default 0,
  flows integer not null default 0,
  primary key (project_id, currency, day, source, shard)
);

-- A push whose gain in a currency the flows recorded since the player's previous observation do not
-- explain: (to_amount - from_amount) - explained = unexplained > 0.
create table economy_unexplained (
  project_id uuid not null references projects (id) on delete cascade,
  id bigint generated always as identity,
  history_id bigint not null,
  user_id bigint not null,
  currency text not null,
  from_amount numeric not null,
  to_amount numeric not null,
  explained numeric not null,
  unexplained numeric not null check (unexplained > 0),
  from_observed_at timestamptz not null,
  observed_at timestamptz not null,
  primary key (project_id, id)
);
create index economy_unexplained_recent on economy_unexplained (project_id, observed_at desc, id desc);
create index economy_unexplained_player on economy_unexplained (project_id, user_id, id);

-- Alert rules on the economy: `economy_anomaly` (an anomaly or an unexplained gain, of `currency` or
-- any when null, of at least `min_amount`) and `supply_growth` (a currency's supply, or any when
-- null, grew more than `growth_pct` % in a UTC day).
alter table alert_rules drop constraint alert_rules_trigger_check;
alter table alert_rules add constraint alert_rules_trigger_check
  check (trigger in ('new_group', 'regression', 'frequency', 'economy_anomaly', 'supply_growth'));
alter table alert_rules
  add column currency text,
  add column min_amount numeric check (min_amount >= 0),
  add column growth_pct numeric check (growth_pct > 0);
alter table alert_rules add constraint alert_rules_supply_growth_check
  check (trigger <> 'supply_growth' or growth_pct is not null);

-- one row per (rule, subject) once an economy rule has alerted on it: `rise:<economy_rises.id>`,
-- `unexplained:<economy_unexplained.id>`, `supply:<currency>:<day>`; claimed before sending
create table economy_alert_claims (
  project_id uuid not null references projects (id) on delete cascade,
  rule_id uuid not null,
  subject text not null,
  created_at timestamptz not null default now(),
  primary key (project_id, rule_id, subject)
);

-- what an economy alert was about, for the delivery log (economy alerts have no issue)
alter table alert_deliveries add column subject text;
