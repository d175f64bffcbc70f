/*
 * Occurrences per project, hour and level: what the overview's 24h, 7d and 30d charts draw
 * (db/dashboard.ts). Kept from every change of the hour cells by statement triggers on rollup_hour:
 * the drain's upserts add, a group's or a project's delete subtracts, and a merge or unmerge, which
 * moves cells between groups of one project, changes nothing here. Only the drain and what holds its
 * lock write rollup_hour, so one writer at a time updates these rows.
 *
 * The charts read every group's hour cells before: 24 per active group for a day, 168 for a week.
 * Here a day is 72 rows and 30 days 2,160, whatever the number of groups.
 */
create table rollup_project_hour (
  project_id uuid not null references projects(id) on delete cascade,
  bucket timestamptz not null,
  level text not null,
  count bigint not null,
  primary key (project_id, bucket, level)
);

create function rollup_project_hour_follow() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into rollup_project_hour as p (project_id, bucket, level, count)
    select project_id, bucket, level, sum(count) from new_rows
    group by 1, 2, 3 order by 1, 2, 3
    on conflict (project_id, bucket, level) do update set count = p.count + excluded.count;
  elsif tg_op = 'UPDATE' then
    insert into rollup_project_hour as p (project_id, bucket, level, count)
    select project_id, bucket, level, sum(n) from (
      select project_id, bucket, level, count as n from new_rows
      union all
      select project_id, bucket, level, -count from old_rows) c
    group by 1, 2, 3 having sum(n) <> 0 order by 1, 2, 3
    on conflict (project_id, bucket, level) do update set count = p.count + excluded.count;
  else
    -- a delete only lowers rows that exist: a project's delete removes its cells before its row,
    -- and then its rows here go with it
    update rollup_project_hour p set count = p.count - d.n
    from (select project_id, bucket, level, sum(count) as n from old_rows group by 1, 2, 3) d
    where p.project_id = d.project_id and p.bucket = d.bucket and p.level = d.level;
  end if;
  return null;
end $$;

create trigger rollup_project_hour_insert after insert on rollup_hour referencing new table as new_rows
  for each statement execute function rollup_project_hour_follow();
create trigger rollup_project_hour_update after update on rollup_hour referencing old table as old_rows new table as new_rows
  for each statement execute function rollup_project_hour_follow();
create trigger rollup_project_hour_delete after delete on rollup_hour referencing old table as old_rows
  for each statement execute function rollup_project_hour_follow();

-- the triggers hold rollup_hour against writes until this commits: no cell is counted twice or missed
insert into rollup_project_hour (project_id, bucket, level, count)
select r.project_id, r.bucket, r.level, sum(r.count) from rollup_hour r
join projects p on p.id = r.project_id
group by 1, 2, 3;
