-- Issue search reads a narrow copy of what it matches and sorts by, one row per group, instead of the
-- groups' own rows.
--
-- A search over a project's issues rechecked every trigram candidate in error_groups, whose rows are
-- wide (~370 bytes) and kept at fillfactor 30 (126) so that occurrence updates stay HOT: 100,000
-- issues fill about 16,700 pages (130 MB, more than the default shared_buffers), and a term in one
-- issue of four read two thirds of them to recheck and sort its matches. Here each group's searched
-- text (message, culprit and frames, lowered, so the recheck is a plain LIKE) and its sort keys fit
-- in about 4,000 pages for 100,000 groups.
--
-- The sort keys: first_seen exactly, and last_seen only to the minute it falls in (`seen_minute`).
-- last_seen changes with every occurrence; the minute changes at most once a minute per group, so
-- this table is written about once a minute for a busy group instead of at every write. A page by
-- last_seen takes the matches of the newest minutes until it has limit + offset of them and reads
-- only those from error_groups for the exact order (db/errors.ts, searchGroups). Nothing here is
-- indexed but the key and the text, so that minute's update is HOT here too, and error_groups gets
-- no new index: its occurrence updates stay HOT.
--
-- The rows follow error_groups through triggers in the writing transaction: a new group adds its row,
-- and an update changes it only when something it holds changed (the WHEN clause: most occurrence
-- updates fire nothing). A deleted group's row goes with it (a statement trigger: one delete per
-- statement, however many groups it removes). No foreign key: its check is a look-up of the group
-- row for each new copy, planned once per connection, and a plan made while the table was small
-- (no statistics yet) read every group of the project per new group in a drain.
create table group_search (
  project_id uuid not null,
  group_id uuid not null,
  merged_into uuid,
  status text not null,
  level text not null,
  first_seen timestamptz not null,
  seen_minute timestamptz not null,
  -- lower(message || chr(31) || culprit || chr(31) || frames): a search holding no chr(31) cannot
  -- match across two of them, so a LIKE over this text matches as the three ILIKEs did
  search_text text not null,
  primary key (project_id, group_id)
) with (fillfactor = 90);

create index group_search_text_trgm on group_search using gin (project_id, search_text gin_trgm_ops);

create function group_search_text(message text, culprit text, frames text) returns text
  language sql immutable parallel safe
  as $$ select lower(message || chr(31) || coalesce(culprit, '') || chr(31) || coalesce(frames, '')) $$;

create function group_search_minute(at timestamptz) returns timestamptz
  language sql immutable parallel safe
  as $$ select date_bin('1 minute', at, timestamptz '2000-01-01 00:00:00+00') $$;

create function group_search_insert() returns trigger language plpgsql as $$
begin
  insert into group_search (project_id, group_id, merged_into, status, level, first_seen, seen_minute, search_text)
  values (new.project_id, new.id, new.merged_into, new.status, new.level, new.first_seen,
    group_search_minute(new.last_seen), group_search_text(new.message, new.culprit, new.frames));
  return null;
end $$;

create function group_search_update() returns trigger language plpgsql as $$
begin
  update group_search set merged_into = new.merged_into, status = new.status, level = new.level,
    first_seen = new.first_seen, seen_minute = group_search_minute(new.last_seen),
    search_text = case when new.message = old.message and new.culprit is not distinct from old.culprit
      and new.frames is not distinct from old.frames then search_text
      else group_search_text(new.message, new.culprit, new.frames) end
  where project_id = new.project_id and group_id = new.id;
  return null;
end $$;

create function group_search_delete() returns trigger language plpgsql as $$
begin
  delete from group_search s using gone g where s.project_id = g.project_id and s.group_id = g.id;
  return null;
end $$;

create trigger group_search_delete after delete on error_groups
  referencing old table as gone for each statement execute function group_search_delete();

create trigger group_search_insert after insert on error_groups
  for each row execute function group_search_insert();

create trigger group_search_update after update on error_groups
  for each row when (
    group_search_minute(new.last_seen) <> group_search_minute(old.last_seen)
    or new.first_seen <> old.first_seen
    or new.status <> old.status
    or new.level <> old.level
    or new.merged_into is distinct from old.merged_into
    or new.message <> old.message
    or new.culprit is distinct from old.culprit
    or new.frames is distinct from old.frames)
  execute function group_search_update();

insert into group_search (project_id, group_id, merged_into, status, level, first_seen, seen_minute, search_text)
select project_id, id, merged_into, status, level, first_seen, group_search_minute(last_seen), group_search_text(message, culprit, frames)
from error_groups;
