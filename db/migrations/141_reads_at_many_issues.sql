/*
 * Reads that grew with a project's number of issues.
 *
 * The overview's onboarding panel names the project's first issue (by first occurrence): it sorted
 * every group of the project on each view. This index serves it as a LIMIT 1. first_seen changes only
 * when a late event is older than every earlier one, so an occurrence's update of a group stays HOT.
 * Partial, on the issues listed on their own (a merge's target keeps its members' first sighting): a
 * plan made on tables without statistics took a full index of (project_id, ...) for the drain's
 * look-ups of group rows by key and read every row of the project.
 */
create index error_groups_first_seen on error_groups (project_id, first_seen, id) where merged_into is null;

/*
 * A group's delete lowered its hours in rollup_project_hour (migration 137) to zero and left the rows:
 * the overview's charts read past them, and a project that deletes many issues kept them for good.
 * A delete of hour cells now removes the hours it leaves at zero, in the same statement (only the drain
 * and what holds its lock write rollup_hour, so no other writer adds to them meanwhile). Inserts and
 * updates are left as they were: the drain only adds, and a merge or an unmerge moves cells between
 * groups of one project, so neither lowers a project's hour (and the drain pays nothing more).
 */
create or replace function rollup_project_hour_follow() returns trigger language plpgsql as $$
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
    -- and then its rows here go with it; the hours it leaves at zero go now
    update rollup_project_hour p set count = p.count - d.n
    from (select project_id, bucket, level, sum(count) as n from old_rows group by 1, 2, 3) d
    where p.project_id = d.project_id and p.bucket = d.bucket and p.level = d.level;
    delete from rollup_project_hour p
    using (select distinct project_id, bucket, level from old_rows) o
    where p.project_id = o.project_id and p.bucket = o.bucket and p.level = o.level and p.count = 0;
  end if;
  return null;
end $$;

delete from rollup_project_hour where count = 0;

/*
 * Stats over a project with 100,000 issues (db/stats.ts). `open_groups` read the status and last
 * sighting of every group with occurrences in the window, and the top ten ranked all of them by
 * (count, last_seen): each a read of every such group's row. Now open_groups is the window's groups
 * less those that are not open (this index: few, and a group's occurrence leaves them unchanged, so its
 * update stays HOT) less the open ones last seen before the window's exact start (only groups with a
 * cell in its first bucket can be). The top ten rank by count alone, and the groups tied at the tenth
 * count are ranked by last_seen among the few of them seen latest.
 */
create index error_groups_not_open on error_groups (project_id, id) where status <> 'open' or merged_into is not null;
