-- The stats windows kept ahead of the request. Summing a window's rollup cells costs what the window
-- holds (up to groups × buckets), so a 30d window of a busy project read tens of thousands of cells
-- per request. Instead each window keeps, per group, its occurrences by level over the cells from
-- `since` on; a read adds or subtracts only the cells between `since` and its own start (none when
-- `since` is current), and the top ten come from an index on the window's count.
--
-- 1h and 24h sum rollup_minute, 7d and 30d rollup_hour (the windows' units, db/stats.ts). Triggers on
-- those tables keep the sums whoever writes the cells (ingest, merges, unmerges, deletes, retention):
-- a cell counts iff its bucket >= since. The writer that finds a window's `since` a unit behind moves
-- it forward and subtracts the cells it passed. A writer holds the window's mark row FOR SHARE while it
-- applies its cells and the mover holds it FOR UPDATE, so no cell is counted against a `since` that
-- moves past it before the writer commits.

create table stats_window_marks (
  project_id uuid not null references projects (id) on delete cascade,
  timeframe text not null check (timeframe in ('1h', '24h', '7d', '30d')),
  -- the sums hold exactly the cells with bucket >= since
  since timestamptz not null,
  primary key (project_id, timeframe)
);

create table stats_window_counts (
  project_id uuid not null references projects (id) on delete cascade,
  timeframe text not null,
  group_id uuid not null,
  error bigint not null default 0,
  warn bigint not null default 0,
  info bigint not null default 0,
  count bigint generated always as (error + warn + info) stored,
  primary key (project_id, timeframe, group_id)
);
create index stats_window_counts_top on stats_window_counts (project_id, timeframe, count desc) include (group_id, error, warn, info);

/** Where window `tf`'s sums start when they are current: its unit's floor of now, less its length. */
create function stats_window_target(tf text) returns timestamptz language sql stable as $$
  select date_trunc(case when tf in ('1h', '24h') then 'minute' else 'hour' end, now(), 'UTC')
    - case tf when '1h' then interval '1 hour' when '24h' then interval '24 hours' when '7d' then interval '7 days' else interval '30 days' end
$$;

/**
 * The statement that adds signed cells `cells` (a query over project_id, group_id, level, bucket,
 * count) to the sums of window `tf` where a cell's bucket reaches its project's `since` (`marks`: a
 * query over project_id, since); it returns the projects where a group fell to zero.
 */
create function stats_window_statement(tf text, cells text, marks text) returns text language sql immutable as $$
  select format($q$
    with c as (%s), m as (%s), d as (
      select c.project_id, c.group_id, coalesce(sum(c.count) filter (where c.level = 'error'), 0) as e,
        coalesce(sum(c.count) filter (where c.level = 'warn'), 0) as w, coalesce(sum(c.count) filter (where c.level = 'info'), 0) as i
      from c join m on m.project_id = c.project_id and c.bucket >= m.since group by 1, 2
    ), up as (
      insert into stats_window_counts as s (project_id, timeframe, group_id, error, warn, info)
      select project_id, %L, group_id, e, w, i from d where e <> 0 or w <> 0 or i <> 0
      order by project_id, group_id
      on conflict (project_id, timeframe, group_id) do update
        set error = s.error + excluded.error, warn = s.warn + excluded.warn, info = s.info + excluded.info
      returning s.project_id, s.count
    )
    -- the projects whose window left a group at zero (dropped by stats_window_prune)
    select distinct project_id from up where count = 0$q$,
    cells, marks, tf)
$$;

/** Drops the groups window `tf` of project `p` holds at zero (a count-ordered index range). */
create function stats_window_prune(p uuid, tf text) returns void language sql as $$
  delete from stats_window_counts where project_id = p and timeframe = tf and count = 0
$$;

/**
 * Moves window `tf` of project `p` forward to its target when it is behind and no other transaction
 * holds its mark (a writer holding it FOR SHARE; the next write moves it): subtracts the cells it passes.
 */
create function stats_window_move(p uuid, tf text) returns void language plpgsql as $$
declare
  s timestamptz;
  z uuid;
  target timestamptz := stats_window_target(tf);
  tbl text := case when tf in ('1h', '24h') then 'rollup_minute' else 'rollup_hour' end;
begin
  begin
    select since into s from stats_window_marks where project_id = p and timeframe = tf and since < target for update nowait;
  exception when lock_not_available then
    return;
  end;
  if s is null then return; end if;
  for z in execute stats_window_statement(tf,
      format('select project_id, group_id, level, bucket, -count as count from %I where project_id = %L and bucket >= %L and bucket < %L', tbl, p, s, target),
      format('select %L::uuid as project_id, %L::timestamptz as since', p, s)) loop
    perform stats_window_prune(z, tf);
  end loop;
  update stats_window_marks set since = target where project_id = p and timeframe = tf;
end $$;

/**
 * After a statement on rollup_minute (TG_ARGV: 1h, 24h) or rollup_hour (7d, 30d): the cells it
 * inserted count, the ones it deleted stop counting, an update is both, in every window whose `since`
 * the cell's bucket reaches. Then moves each touched window that fell a unit behind.
 */
create function stats_windows_follow() returns trigger language plpgsql as $$
declare
  tf text;
  cells text := case tg_op
    when 'INSERT' then 'select project_id, group_id, level, bucket, count from new_rows'
    when 'DELETE' then 'select project_id, group_id, level, bucket, -count as count from old_rows'
    else 'select project_id, group_id, level, bucket, count from new_rows union all select project_id, group_id, level, bucket, -count from old_rows'
  end;
  p uuid;
begin
  foreach tf in array tg_argv loop
    -- the marks of the projects the statement touched, held until commit (see the head of this file)
    for p in execute stats_window_statement(tf, cells, format(
        'select project_id, since from stats_window_marks where timeframe = %L and project_id in (select project_id from c) order by project_id for share', tf)) loop
      perform stats_window_prune(p, tf);
    end loop;
    for p in execute format('select m.project_id from stats_window_marks m where m.timeframe = %L and m.since < stats_window_target(%L)
        and m.project_id in (select project_id from (%s) c)', tf, tf, cells) loop
      perform stats_window_move(p, tf);
    end loop;
  end loop;
  return null;
end $$;

create trigger stats_windows_insert after insert on rollup_minute referencing new table as new_rows
  for each statement execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_update after update on rollup_minute referencing old table as old_rows new table as new_rows
  for each statement execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_delete after delete on rollup_minute referencing old table as old_rows
  for each statement execute function stats_windows_follow('1h', '24h');
create trigger stats_windows_insert after insert on rollup_hour referencing new table as new_rows
  for each statement execute function stats_windows_follow('7d', '30d');
create trigger stats_windows_update after update on rollup_hour referencing old table as old_rows new table as new_rows
  for each statement execute function stats_windows_follow('7d', '30d');
create trigger stats_windows_delete after delete on rollup_hour referencing old table as old_rows
  for each statement execute function stats_windows_follow('7d', '30d');

/** Every project has its four windows, current from the start. */
create function stats_windows_open() returns trigger language plpgsql as $$
begin
  insert into stats_window_marks (project_id, timeframe, since)
  select new.id, tf, stats_window_target(tf) from unnest(array['1h', '24h', '7d', '30d']) tf;
  return null;
end $$;
create trigger stats_windows_open after insert on projects for each row execute function stats_windows_open();

insert into stats_window_marks (project_id, timeframe, since)
select p.id, tf, stats_window_target(tf) from projects p, unnest(array['1h', '24h', '7d', '30d']) tf;
insert into stats_window_counts (project_id, timeframe, group_id, error, warn, info)
select r.project_id, m.timeframe, r.group_id, coalesce(sum(r.count) filter (where r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where r.level = 'warn'), 0), coalesce(sum(r.count) filter (where r.level = 'info'), 0)
from rollup_minute r join stats_window_marks m on m.project_id = r.project_id and m.timeframe in ('1h', '24h') and r.bucket >= m.since
group by 1, 2, 3;
insert into stats_window_counts (project_id, timeframe, group_id, error, warn, info)
select r.project_id, m.timeframe, r.group_id, coalesce(sum(r.count) filter (where r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where r.level = 'warn'), 0), coalesce(sum(r.count) filter (where r.level = 'info'), 0)
from rollup_hour r join stats_window_marks m on m.project_id = r.project_id and m.timeframe in ('7d', '30d') and r.bucket >= m.since
group by 1, 2, 3;
