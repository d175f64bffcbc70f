-- Opening balances (docs/economy.md, "Opening balances"): a player's first observation is what they
-- brought into the economy, not what they gained. Its amounts go into the day's supply change (delta)
-- and into `opening`, one `openers` per currency key of the row (zero amounts and "total" included:
-- `openers` counts the new players read with that currency); nothing into gained/lost/gainers/losers.
-- The rest of that UTC day is measured from the opening balance: a new player's day starts at their
-- first balances (with "total"), not at nothing.

-- a first row written without its day's start (no writer gave one) starts the day at its own balances
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
      new.day_start := new.balances || jsonb_build_object('total', new.total::text);
    end if;
  end if;
  return new;
end $$;

-- Each statement adds its rows' per-currency changes to the day and records the rises. A row without
-- a previous observation (prev_total and prev_balances both null) is an opening.
create or replace function economy_history_add_currencies() returns trigger language plpgsql as $$
begin
  with v as (
    select a.project_id, a.id, a.user_id, a.observed_at, a.prev_observed_at, a.source,
      (a.observed_at at time zone 'UTC')::date as day,
      t.prev_t is null as opens,
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
    -- an opening is the start of its day: no net of its own, and nothing before it to take back
    select *, case when opens then 0 else amount - start_amount end as new_net,
      case when same_day and not opens then coalesce(prev_amount, 0) - start_amount else 0 end as old_net
    from v
  ), daily as (
    insert into economy_daily_currency as d (project_id, currency, day, shard, delta, opening, openers, gained, lost, gainers, losers)
    select project_id, key, day, pg_backend_pid() % 8,
      sum(amount - coalesce(prev_amount, 0)),
      coalesce(sum(amount) filter (where opens), 0),
      count(*) filter (where opens),
      sum(greatest(new_net, 0) - greatest(old_net, 0)),
      sum(greatest(-new_net, 0) - greatest(-old_net, 0)),
      sum((new_net > 0)::int - (old_net > 0)::int),
      sum((new_net < 0)::int - (old_net < 0)::int)
    from nets group by 1, 2, 3 order by 1, 2, 3
    on conflict (project_id, currency, day, shard) do update set
      delta = d.delta + excluded.delta, opening = d.opening + excluded.opening, openers = d.openers + excluded.openers,
      gained = d.gained + excluded.gained, lost = d.lost + excluded.lost,
      gainers = d.gainers + excluded.gainers, losers = d.losers + excluded.losers
    returning 1
  )
  insert into economy_rises (project_id, history_id, user_id, currency, amount, prev_amount, observed_at, prev_observed_at, source)
  select project_id, id, user_id, key, amount, prev_amount, observed_at, prev_observed_at, source
  from nets where key <> 'total' and prev_amount is not null and amount > prev_amount
  order by id, key;
  return null;
end $$;

-- The history already written: every row of a player's first UTC day was measured from nothing
-- (day_start '{}'). That day now starts at the player's first row.
with first_row as (
  select distinct on (project_id, user_id) project_id, user_id, (observed_at at time zone 'UTC')::date as day,
    balances || jsonb_build_object('total', total::text) as opening
  from economy_history order by project_id, user_id, id
)
update economy_history h set day_start = f.opening
from first_row f
where h.project_id = f.project_id and h.user_id = f.user_id and h.day_start = '{}'::jsonb
  and (h.observed_at at time zone 'UTC')::date = f.day;

-- a snapshot keeps the start of the day of its latest history row
update economy_snapshots s set day_start = l.day_start
from (
  select distinct on (project_id, user_id) project_id, user_id, day_start
  from economy_history order by project_id, user_id, id desc
) l
where s.project_id = l.project_id and s.user_id = l.user_id and s.day_start = '{}'::jsonb and l.day_start <> '{}'::jsonb;

-- and every day's figures again, under the rule above (the rises do not change)
delete from economy_daily_currency;
with v as (
  select h.project_id, h.id, (h.observed_at at time zone 'UTC')::date as day,
    t.prev_t is null as opens,
    h.prev_observed_at is not null
      and (h.prev_observed_at at time zone 'UTC')::date = (h.observed_at at time zone 'UTC')::date as same_day,
    k.key,
    coalesce((now_t ->> k.key)::numeric, 0) as amount,
    (prev_t ->> k.key)::numeric as prev_amount,
    coalesce((h.day_start ->> k.key)::numeric, 0) as start_amount
  from economy_history h
  cross join lateral (select h.balances || jsonb_build_object('total', h.total::text) as now_t,
    case when h.prev_total is null and h.prev_balances is null then null
      else coalesce(h.prev_balances, '{}'::jsonb) || jsonb_build_object('total', coalesce(h.prev_total, 0)::text) end as prev_t) t
  cross join lateral (select jsonb_object_keys(now_t || coalesce(prev_t, '{}'::jsonb)) as key) k
), nets as (
  select *, case when opens then 0 else amount - start_amount end as new_net,
    case when same_day and not opens then coalesce(prev_amount, 0) - start_amount else 0 end as old_net
  from v
)
insert into economy_daily_currency (project_id, currency, day, shard, delta, opening, openers, gained, lost, gainers, losers)
select project_id, key, day, 0,
  sum(amount - coalesce(prev_amount, 0)),
  coalesce(sum(amount) filter (where opens), 0),
  count(*) filter (where opens),
  sum(greatest(new_net, 0) - greatest(old_net, 0)),
  sum(greatest(-new_net, 0) - greatest(-old_net, 0)),
  sum((new_net > 0)::int - (old_net > 0)::int),
  sum((new_net < 0)::int - (old_net < 0)::int)
from nets group by 1, 2, 3;
