-- Economy summary and anomalies without reading the whole history on every request.
--
-- economy_daily: per UTC day, the change of the money supply (each history row adds its total minus
-- the player's previous total). The supply at the end of a day is the running sum up to it. Writers
-- add to one of a few shard rows per day (picked by backend), so concurrent pushes do not queue on one row.
--
-- economy_history.prev_total / prev_observed_at: the player's previous observation, known at write time
-- from the snapshot, so an anomaly (a rise between consecutive observations) is a filter on one row,
-- indexed by the size of the rise.
--
-- economy_snapshots.history_observed_at: the observation time of the player's latest history row.

create table economy_daily (
  project_id uuid not null references projects (id) on delete cascade,
  day date not null,
  shard smallint not null,
  delta numeric not null,
  primary key (project_id, day, shard)
);

alter table economy_history add column prev_total numeric, add column prev_observed_at timestamptz;
alter table economy_snapshots add column history_observed_at timestamptz;

with h as (
  select project_id, id, lag(total) over w as prev_total, lag(observed_at) over w as prev_observed_at
  from economy_history
  window w as (partition by project_id, user_id order by id)
)
update economy_history e set prev_total = h.prev_total, prev_observed_at = h.prev_observed_at
from h where e.project_id = h.project_id and e.id = h.id and h.prev_total is not null;

update economy_snapshots s set history_observed_at = l.observed_at
from (
  select distinct on (project_id, user_id) project_id, user_id, observed_at
  from economy_history order by project_id, user_id, id desc
) l
where s.project_id = l.project_id and s.user_id = l.user_id;

insert into economy_daily (project_id, day, shard, delta)
select project_id, (observed_at at time zone 'UTC')::date, 0, sum(total - coalesce(prev_total, 0))
from economy_history group by 1, 2;

-- Every insert into the history keeps these up to date, whoever writes it: a row without its previous
-- observation gets it from the player's latest row, and each statement adds its rows' changes to the day.
create function economy_history_fill_prev() returns trigger language plpgsql as $$
begin
  if new.prev_total is null then
    select h.total, h.observed_at into new.prev_total, new.prev_observed_at
    from economy_history h
    where h.project_id = new.project_id and h.user_id = new.user_id
    order by h.id desc limit 1;
  end if;
  return new;
end $$;
create trigger economy_history_fill_prev before insert on economy_history
  for each row execute function economy_history_fill_prev();

create function economy_history_add_daily() returns trigger language plpgsql as $$
begin
  -- one of 8 rows per project and day, by backend, so concurrent writers rarely wait on the same row
  insert into economy_daily as d (project_id, day, shard, delta)
  select project_id, (observed_at at time zone 'UTC')::date, pg_backend_pid() % 8, sum(total - coalesce(prev_total, 0))
  from added group by 1, 2 order by 1, 2
  on conflict (project_id, day, shard) do update set delta = d.delta + excluded.delta;
  return null;
end $$;
create trigger economy_history_add_daily after insert on economy_history
  referencing new table as added
  for each statement execute function economy_history_add_daily();

-- observations by the size of their rise, so `increase > min_amount` reads only the big ones (an
-- expression index, not a partial one, so ANALYZE keeps statistics on the rise and the planner knows
-- that large rises are rare)
create index economy_history_rise on economy_history (project_id, (total - prev_total));
