-- Economy for any save layout: a currency map per project, every mapped currency kept per snapshot and
-- history row, per-currency rises (the dupe detector per currency) and per-currency daily aggregates
-- (supply change, and the players who gained and who lost: the faucet/sink view).
--
-- Amounts in jsonb are exact decimal strings ({"gems": "1250", "coins": "3.5"}), like the numeric columns.
-- cash/bank/dark_coin stay as columns (every answer carries them; 0 when the map has no such key);
-- total becomes a plain column: the sum of every mapped currency, whatever they are.

-- the map; no row means the seed's map (RPCharacterOne/Two: Cash, InATM, DarkCoin)
create table economy_maps (
  project_id uuid primary key references projects (id) on delete cascade,
  map jsonb not null,
  updated_at timestamptz not null default now(),
  updated_by uuid references users (id) on delete set null
);

-- one recent pushed profile per project, for the map preview ("pick the last pushed one")
create table economy_profile_samples (
  project_id uuid primary key references projects (id) on delete cascade,
  user_id bigint not null,
  profile jsonb not null,
  observed_at timestamptz not null
);

alter table economy_snapshots alter column total drop expression;
alter table economy_snapshots
  add column balances jsonb,
  -- values the latest observation could not read ([{currency, path, reason}], at most 20) and how many
  add column skipped_values jsonb,
  add column skipped_count integer not null default 0,
  add column first_observed_at timestamptz,
  -- balances (with "total") at the start of the UTC day of history_observed_at: the player's net change
  -- that day is the latest balances minus these
  add column day_start jsonb;

update economy_snapshots s set
  balances = jsonb_build_object('cash', s.cash::text, 'bank', s.bank::text, 'dark_coin', s.dark_coin::text),
  first_observed_at = coalesce(
    (select min(h.observed_at) from economy_history h where h.project_id = s.project_id and h.user_id = s.user_id), s.observed_at);
alter table economy_snapshots alter column balances set not null, alter column balances set default '{}';
create index economy_snapshots_first_observed on economy_snapshots (project_id, first_observed_at);

alter table economy_history
  add column balances jsonb,
  add column prev_balances jsonb,
  add column day_start jsonb;

-- existing rows: the seed's three currencies, their previous observation, and the day's starting point
with h as (
  select project_id, id, user_id, observed_at,
    jsonb_build_object('cash', cash::text, 'bank', bank::text, 'dark_coin', dark_coin::text) as balances,
    lag(jsonb_build_object('cash', cash::text, 'bank', bank::text, 'dark_coin', dark_coin::text, 'total', total::text))
      over (partition by project_id, user_id order by id) as prev_t
  from economy_history
), d as (
  select project_id, id, balances, prev_t,
    first_value(coalesce(prev_t, '{}'::jsonb)) over (partition by project_id, user_id, (observed_at at time zone 'UTC')::date order by id) as day_start
  from h
)
update economy_history e set balances = d.balances, prev_balances = d.prev_t - 'total', day_start = d.day_start
from d where e.project_id = d.project_id and e.id = d.id;

-- rises of one currency between two consecutive observations of a player, indexed by their size like
-- economy_history_rise is for the total, so anomalies per currency read only the large rises
create table economy_rises (
  project_id uuid not null references projects (id) on delete cascade,
  id bigint generated always as identity,
  history_id bigint not null,
  user_id bigint not null,
  currency text not null,
  amount numeric not null,
  prev_amount numeric not null,
  observed_at timestamptz not null,
  prev_observed_at timestamptz,
  source text not null,
  primary key (project_id, id)
);
create index economy_rises_rise on economy_rises (project_id, currency, (amount - prev_amount))
  include (observed_at, id, amount, prev_amount);

-- per project, currency (or "total") and UTC day: the supply's change, and the players whose balance
-- ended the day above (gained, gainers) or below (lost, losers) where it started. Shards as economy_daily.
create table economy_daily_currency (
  project_id uuid not null references projects (id) on delete cascade,
  currency text not null,
  day date not null,
  shard smallint not null,
  delta numeric not null default 0,
  gained numeric not null default 0,
  lost numeric not null default 0,
  gainers integer not null default 0,
  losers integer not null default 0,
  primary key (project_id, currency, day, shard)
);

-- A history row without its previous observation gets it (and the day's starting point) from the
-- player's latest row, whoever writes it; a row without balances gets the seed's three from its columns.
create or replace function economy_history_fill_prev() returns trigger language plpgsql as $$
declare
  p record;
begin
  if new.balances is null then
    new.balances := jsonb_build_object('cash', new.cash::text, 'bank', new.bank::text, 'dark_coin', new.dark_coin::text);
  end if;
  if new.day_start is null then
    select h.total, h.observed_at, h.balances, h.day_start into p
    from economy_history h
    where h.project_id = new.project_id and h.user_id = new.user_id
    order by h.id desc limit 1;
    if found then
      new.prev_total := coalesce(new.prev_total, p.total);
      new.prev_observed_at := coalesce(new.prev_observed_at, p.observed_at);
      new.prev_balances := coalesce(p.balances, '{}'::jsonb);
      new.day_start := case
        when (p.observed_at at time zone 'UTC')::date = (new.observed_at at time zone 'UTC')::date and p.day_start is not null then p.day_start
        else new.prev_balances || jsonb_build_object('total', p.total::text) end;
    else
      new.day_start := '{}'::jsonb;
    end if;
  end if;
  return new;
end $$;

-- Each statement adds its rows' per-currency changes to the day and records the rises.
create function economy_history_add_currencies() returns trigger language plpgsql as $$
begin
  with v as (
    select a.project_id, a.id, a.user_id, a.observed_at, a.prev_observed_at, a.source,
      (a.observed_at at time zone 'UTC')::date as day,
      a.prev_observed_at is not null
        and (a.prev_observed_at at time zone 'UTC')::date = (a.observed_at at time zone 'UTC')::date as same_day,
      k.key,
      coalesce((now_t ->> k.key)::numeric, 0) as amount,
      (prev_t ->> k.key)::numeric as prev_amount,
      coalesce((a.day_start ->> k.key)::numeric, 0) as start_amount
    from added a
    cross join lateral (select a.balances || jsonb_build_object('total', a.total::text) as now_t,
      case when a.prev_total is null and a.prev_balances is null then null
        else coalesce(a.prev_balances, '{}'::jsonb) || jsonb_build_object('total', coalesce(a.prev_total, 0)::text) end as prev_t) t
    cross join lateral (select jsonb_object_keys(now_t || coalesce(prev_t, '{}'::jsonb)) as key) k
  ), nets as (
    select *, amount - start_amount as new_net,
      case when same_day then coalesce(prev_amount, 0) - start_amount else 0 end as old_net
    from v
  ), daily as (
    insert into economy_daily_currency as d (project_id, currency, day, shard, delta, gained, lost, gainers, losers)
    select project_id, key, day, pg_backend_pid() % 8,
      sum(amount - coalesce(prev_amount, 0)),
      sum(greatest(new_net, 0) - greatest(old_net, 0)),
      sum(greatest(-new_net, 0) - greatest(-old_net, 0)),
      sum((new_net > 0)::int - (old_net > 0)::int),
      sum((new_net < 0)::int - (old_net < 0)::int)
    from nets group by 1, 2, 3 order by 1, 2, 3
    on conflict (project_id, currency, day, shard) do update set
      delta = d.delta + excluded.delta, gained = d.gained + excluded.gained, lost = d.lost + excluded.lost,
      gainers = d.gainers + excluded.gainers, losers = d.losers + excluded.losers
    returning 1
  )
  insert into economy_rises (project_id, history_id, user_id, currency, amount, prev_amount, observed_at, prev_observed_at, source)
  select project_id, id, user_id, key, amount, prev_amount, observed_at, prev_observed_at, source
  from nets where key <> 'total' and prev_amount is not null and amount > prev_amount
  order by id, key;
  return null;
end $$;
create trigger economy_history_add_currencies after insert on economy_history
  referencing new table as added
  for each statement execute function economy_history_add_currencies();

-- the same for the history already written
with v as (
  select h.project_id, h.id, h.user_id, h.observed_at, h.prev_observed_at, h.source,
    (h.observed_at at time zone 'UTC')::date as day,
    h.prev_observed_at is not null
      and (h.prev_observed_at at time zone 'UTC')::date = (h.observed_at at time zone 'UTC')::date as same_day,
    k.key,
    coalesce((now_t ->> k.key)::numeric, 0) as amount,
    (prev_t ->> k.key)::numeric as prev_amount,
    coalesce((h.day_start ->> k.key)::numeric, 0) as start_amount
  from economy_history h
  cross join lateral (select h.balances || jsonb_build_object('total', h.total::text) as now_t,
    case when h.prev_total is null then null
      else coalesce(h.prev_balances, '{}'::jsonb) || jsonb_build_object('total', h.prev_total::text) end as prev_t) t
  cross join lateral (select jsonb_object_keys(now_t || coalesce(prev_t, '{}'::jsonb)) as key) k
), nets as (
  select *, amount - start_amount as new_net,
    case when same_day then coalesce(prev_amount, 0) - start_amount else 0 end as old_net
  from v
), daily as (
  insert into economy_daily_currency (project_id, currency, day, shard, delta, gained, lost, gainers, losers)
  select project_id, key, day, 0,
    sum(amount - coalesce(prev_amount, 0)),
    sum(greatest(new_net, 0) - greatest(old_net, 0)),
    sum(greatest(-new_net, 0) - greatest(-old_net, 0)),
    sum((new_net > 0)::int - (old_net > 0)::int),
    sum((new_net < 0)::int - (old_net < 0)::int)
  from nets group by 1, 2, 3
  returning 1
)
insert into economy_rises (project_id, history_id, user_id, currency, amount, prev_amount, observed_at, prev_observed_at, source)
select project_id, id, user_id, key, amount, prev_amount, observed_at, prev_observed_at, source
from nets where key <> 'total' and prev_amount is not null and amount > prev_amount
order by project_id, id, key;

-- snapshots: the starting point of the day of their latest history row
update economy_snapshots s set day_start = l.day_start
from (
  select distinct on (project_id, user_id) project_id, user_id, day_start
  from economy_history order by project_id, user_id, id desc
) l
where s.project_id = l.project_id and s.user_id = l.user_id;
