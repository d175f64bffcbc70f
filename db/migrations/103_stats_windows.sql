-- The stats windows kept ahead of the request. Summing a window's rollup cells costs what the window
-- holds (up to groups × buckets), so a 30d window of a busy project read tens of thousands of cells
-- per request. Instead each window keeps, per group, its occurrences by level over the cells from
-- `since` on; a read adds or subtracts only the cells between `since` and its own start (none when
-- `since` is current). The sums carry no index beyond their key, so a write's updates stay HOT.
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

-- one row per group with the four windows' sums side by side, so a write updates one row per group
create table stats_window_counts (
  project_id uuid not null references projects (id) on delete cascade,
  group_id uuid not null,
  h1_error bigint not null default 0,
  h1_warn bigint not null default 0,
  h1_info bigint not null default 0,
  h24_error bigint not null default 0,
  h24_warn bigint not null default 0,
  h24_info bigint not null default 0,
  d7_error bigint not null default 0,
  d7_warn bigint not null default 0,
  d7_info bigint not null default 0,
  d30_error bigint not null default 0,
  d30_warn bigint not null default 0,
  d30_info bigint not null default 0,
  primary key (project_id, group_id)
) with (fillfactor = 70);

/** The sums one window at a time: (project_id, timeframe, group_id, error, warn, info, count). */
create view stats_window_sums as
select s.project_id, v.timeframe, s.group_id, v.error, v.warn, v.info, v.error + v.warn + v.info as count
from stats_window_counts s, lateral (values
      ('1h', s.h1_error, s.h1_warn, s.h1_info),
      ('24h', s.h24_error, s.h24_warn, s.h24_info),
      ('7d', s.d7_error, s.d7_warn, s.d7_info),
      ('30d', s.d30_error, s.d30_warn, s.d30_info)
    ) v(timeframe, error, warn, info)
where v.error <> 0 or v.warn <> 0 or v.info <> 0;


/** Where window `tf`'s sums start when they are current: its unit's floor of now, less its length. */
create function stats_window_target(tf text) returns timestamptz language sql stable as $$
  select date_trunc(case when tf in ('1h', '24h') then 'minute' else 'hour' end, now(), 'UTC')
    - case tf when '1h' then interval '1 hour' when '24h' then interval '24 hours' when '7d' then interval '7 days' else interval '30 days' end
$$;

/** One rollup cell, signed (a removed cell counts negatively). */
create type stats_window_cell as (project_id uuid, group_id uuid, level text, bucket timestamptz, count bigint);

/**
 * Adds the signed `cells` to the sums of the windows `tfs` where a cell's bucket reaches its project's
 * `since`, with the windows' marks held FOR SHARE until commit, and drops the groups left at zero.
 */
create function stats_window_apply(cells stats_window_cell[], tfs text[]) returns void language plpgsql as $$
declare
  z record;
begin
  perform 1 from stats_window_marks
  where timeframe = any(tfs) and project_id in (select distinct c.project_id from unnest(cells) c)
  order by project_id, timeframe for share;
  for z in
    with m as (
      select project_id, max(since) filter (where timeframe = '1h') as s_h1, max(since) filter (where timeframe = '24h') as s_h24, max(since) filter (where timeframe = '7d') as s_d7, max(since) filter (where timeframe = '30d') as s_d30
      from stats_window_marks where timeframe = any(tfs) and project_id in (select distinct c.project_id from unnest(cells) c)
      group by 1
    ), d as (
      select c.project_id, c.group_id,
        coalesce(sum(c.count) filter (where '1h' = any(tfs) and c.bucket >= m.s_h1 and c.level = 'error'), 0) as h1_error,
        coalesce(sum(c.count) filter (where '1h' = any(tfs) and c.bucket >= m.s_h1 and c.level = 'warn'), 0) as h1_warn,
        coalesce(sum(c.count) filter (where '1h' = any(tfs) and c.bucket >= m.s_h1 and c.level = 'info'), 0) as h1_info,
        coalesce(sum(c.count) filter (where '24h' = any(tfs) and c.bucket >= m.s_h24 and c.level = 'error'), 0) as h24_error,
        coalesce(sum(c.count) filter (where '24h' = any(tfs) and c.bucket >= m.s_h24 and c.level = 'warn'), 0) as h24_warn,
        coalesce(sum(c.count) filter (where '24h' = any(tfs) and c.bucket >= m.s_h24 and c.level = 'info'), 0) as h24_info,
        coalesce(sum(c.count) filter (where '7d' = any(tfs) and c.bucket >= m.s_d7 and c.level = 'error'), 0) as d7_error,
        coalesce(sum(c.count) filter (where '7d' = any(tfs) and c.bucket >= m.s_d7 and c.level = 'warn'), 0) as d7_warn,
        coalesce(sum(c.count) filter (where '7d' = any(tfs) and c.bucket >= m.s_d7 and c.level = 'info'), 0) as d7_info,
        coalesce(sum(c.count) filter (where '30d' = any(tfs) and c.bucket >= m.s_d30 and c.level = 'error'), 0) as d30_error,
        coalesce(sum(c.count) filter (where '30d' = any(tfs) and c.bucket >= m.s_d30 and c.level = 'warn'), 0) as d30_warn,
        coalesce(sum(c.count) filter (where '30d' = any(tfs) and c.bucket >= m.s_d30 and c.level = 'info'), 0) as d30_info
      from unnest(cells) c join m on m.project_id = c.project_id
      group by 1, 2
    ), up as (
      insert into stats_window_counts as s (project_id, group_id, h1_error, h1_warn, h1_info, h24_error, h24_warn, h24_info, d7_error, d7_warn, d7_info, d30_error, d30_warn, d30_info)
      select project_id, group_id, h1_error, h1_warn, h1_info, h24_error, h24_warn, h24_info, d7_error, d7_warn, d7_info, d30_error, d30_warn, d30_info from d
      where h1_error <> 0 or h1_warn <> 0 or h1_info <> 0 or h24_error <> 0 or h24_warn <> 0 or h24_info <> 0 or d7_error <> 0 or d7_warn <> 0 or d7_info <> 0 or d30_error <> 0 or d30_warn <> 0 or d30_info <> 0
      order by project_id, group_id
      on conflict (project_id, group_id) do update set
        h1_error = s.h1_error + excluded.h1_error,
        h1_warn = s.h1_warn + excluded.h1_warn,
        h1_info = s.h1_info + excluded.h1_info,
        h24_error = s.h24_error + excluded.h24_error,
        h24_warn = s.h24_warn + excluded.h24_warn,
        h24_info = s.h24_info + excluded.h24_info,
        d7_error = s.d7_error + excluded.d7_error,
        d7_warn = s.d7_warn + excluded.d7_warn,
        d7_info = s.d7_info + excluded.d7_info,
        d30_error = s.d30_error + excluded.d30_error,
        d30_warn = s.d30_warn + excluded.d30_warn,
        d30_info = s.d30_info + excluded.d30_info
      returning s.project_id, s.group_id, (s.h1_error = 0 and s.h1_warn = 0 and s.h1_info = 0 and s.h24_error = 0 and s.h24_warn = 0 and s.h24_info = 0 and s.d7_error = 0 and s.d7_warn = 0 and s.d7_info = 0 and s.d30_error = 0 and s.d30_warn = 0 and s.d30_info = 0) as zero
    )
    select project_id, group_id from up where zero
  loop
    delete from stats_window_counts where project_id = z.project_id and group_id = z.group_id and h1_error = 0 and h1_warn = 0 and h1_info = 0 and h24_error = 0 and h24_warn = 0 and h24_info = 0 and d7_error = 0 and d7_warn = 0 and d7_info = 0 and d30_error = 0 and d30_warn = 0 and d30_info = 0;
  end loop;
end $$;

/**
 * Moves window `tf` of project `p` forward to its target when it is behind and no other transaction
 * holds its mark (a writer holding it FOR SHARE; the next write moves it): subtracts the cells it passes.
 */
create function stats_window_move(p uuid, tf text) returns void language plpgsql as $$
declare
  s timestamptz;
  target timestamptz := stats_window_target(tf);
  cells stats_window_cell[];
begin
  begin
    select since into s from stats_window_marks where project_id = p and timeframe = tf and since < target for update nowait;
  exception when lock_not_available then
    return;
  end;
  if s is null then return; end if;
  if tf in ('1h', '24h') then
    select array_agg((project_id, group_id, level, bucket, -count)::stats_window_cell) into cells
    from rollup_minute where project_id = p and bucket >= s and bucket < target;
  else
    select array_agg((project_id, group_id, level, bucket, -count)::stats_window_cell) into cells
    from rollup_hour where project_id = p and bucket >= s and bucket < target;
  end if;
  if cells is not null then perform stats_window_apply(cells, array[tf]); end if;
  update stats_window_marks set since = target where project_id = p and timeframe = tf;
end $$;

/**
 * After a statement on rollup_minute (TG_ARGV: 1h, 24h) or rollup_hour (7d, 30d): the cells it
 * inserted count, the ones it deleted stop counting, an update is both, in every window whose `since`
 * the cell's bucket reaches. Then moves each touched window that fell a unit behind.
 */
create function stats_windows_follow() returns trigger language plpgsql as $$
declare
  cells stats_window_cell[];
  z record;
begin
  if tg_op = 'INSERT' then
    select array_agg((project_id, group_id, level, bucket, count)::stats_window_cell) into cells from new_rows;
  elsif tg_op = 'DELETE' then
    select array_agg((project_id, group_id, level, bucket, -count)::stats_window_cell) into cells from old_rows;
  else
    select array_agg(c) into cells from (
      select (project_id, group_id, level, bucket, count)::stats_window_cell as c from new_rows
      union all
      select (project_id, group_id, level, bucket, -count)::stats_window_cell from old_rows) u;
  end if;
  if cells is null then return null; end if;
  perform stats_window_apply(cells, tg_argv::text[]);
  for z in
    select m.project_id, m.timeframe from stats_window_marks m
    where m.timeframe = any(tg_argv::text[]) and m.since < stats_window_target(m.timeframe)
      and m.project_id in (select distinct c.project_id from unnest(cells) c)
  loop
    perform stats_window_move(z.project_id, z.timeframe);
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
insert into stats_window_counts (project_id, group_id, h1_error, h1_warn, h1_info, h24_error, h24_warn, h24_info, d7_error, d7_warn, d7_info, d30_error, d30_warn, d30_info)
select r.project_id, r.group_id,
  coalesce(sum(r.count) filter (where m.timeframe = '1h' and r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '1h' and r.level = 'warn'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '1h' and r.level = 'info'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '24h' and r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '24h' and r.level = 'warn'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '24h' and r.level = 'info'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '7d' and r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '7d' and r.level = 'warn'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '7d' and r.level = 'info'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '30d' and r.level = 'error'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '30d' and r.level = 'warn'), 0),
  coalesce(sum(r.count) filter (where m.timeframe = '30d' and r.level = 'info'), 0)
from (
  select project_id, group_id, level, bucket, count, 'minute' as unit from rollup_minute
  union all
  select project_id, group_id, level, bucket, count, 'hour' from rollup_hour
) r join stats_window_marks m on m.project_id = r.project_id and r.bucket >= m.since
  and m.timeframe in (case r.unit when 'minute' then '1h' else '7d' end, case r.unit when 'minute' then '24h' else '30d' end)
group by 1, 2;
