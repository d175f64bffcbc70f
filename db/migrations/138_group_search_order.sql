-- A search whose term is in many issues reads its page by walking the issues newest first instead of
-- reading every match.
--
-- A term in one issue of four among 100,000 has 25,000 matches; reading all of them from group_search
-- (135) to count them and to find the newest minutes' ones cost about 3,800 pages and 25,000 LIKE
-- rechecks per search. Past TOTAL_CAP (10,000) matches the total is not exact anyway, and the page
-- holds the newest few: walking the issues in the page's order and checking each one's text finds
-- them after a few hundred rows (db/errors.ts, searchNarrow).
--
-- The walk needs the issues in order of the minute they were last seen in. An index on
-- group_search.seen_minute would make the minute's update (about once a minute for a busy group)
-- a non-HOT update there, with new entries in the trigram index for each; so the minute is kept again
-- here, in a table of keys only, whose update is a new tuple and two small btree entries. By first
-- seen the walk reads group_search through its own index: first_seen hardly ever changes, so the
-- minute's update stays HOT there.
--
-- The rows follow error_groups through triggers in the writing transaction, as group_search's do.
create table group_search_order (
  project_id uuid not null,
  group_id uuid not null,
  seen_minute timestamptz not null,
  primary key (project_id, group_id)
) with (fillfactor = 90);

create index group_search_order_seen on group_search_order (project_id, seen_minute desc, group_id desc);

create index group_search_first_seen on group_search (project_id, first_seen desc, group_id desc);

create function group_search_order_insert() returns trigger language plpgsql as $$
begin
  insert into group_search_order (project_id, group_id, seen_minute)
  values (new.project_id, new.id, group_search_minute(new.last_seen));
  return null;
end $$;

create function group_search_order_update() returns trigger language plpgsql as $$
begin
  update group_search_order set seen_minute = group_search_minute(new.last_seen)
  where project_id = new.project_id and group_id = new.id;
  return null;
end $$;

create function group_search_order_delete() returns trigger language plpgsql as $$
begin
  delete from group_search_order s using gone g where s.project_id = g.project_id and s.group_id = g.id;
  return null;
end $$;

create trigger group_search_order_delete after delete on error_groups
  referencing old table as gone for each statement execute function group_search_order_delete();

create trigger group_search_order_insert after insert on error_groups
  for each row execute function group_search_order_insert();

-- only when the minute changes: most occurrence updates fire nothing
create trigger group_search_order_update after update on error_groups
  for each row when (group_search_minute(new.last_seen) <> group_search_minute(old.last_seen))
  execute function group_search_order_update();

insert into group_search_order (project_id, group_id, seen_minute)
select project_id, group_id, seen_minute from group_search;
