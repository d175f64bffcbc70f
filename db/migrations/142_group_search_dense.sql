-- A search whose term is in more than TOTAL_CAP (10,000) issues remembers that, so that the next one
-- walks to its page without counting again.
--
-- Past TOTAL_CAP own matches the total is a floor and the page is found by walking the issues in its
-- order (138); what is left of a dense search's cost is proving that there are more than 10,000: the
-- trigram index's bitmap of every candidate and the recheck of 10,001 of them, most of the statement.
-- A term's own matches (its issues not merged into another, through the status and level filters)
-- can only become fewer when a group's status, level, merge or texts change, or a group is deleted;
-- a new group, an occurrence or a new minute never lowers them. Each such change bumps its project's
-- version here in the writing transaction (triggers beside 135's), and a remembered term holds the
-- version it was counted at: a search trusts it only when that is still the project's version, read
-- in the same statement (db/errors.ts, searchNarrow). Time alone never makes it stale, and the first search of a term after
-- a change counts again.
create table group_search_version (
  project_id uuid primary key references projects (id) on delete cascade,
  version bigint not null
);

create table group_search_dense (
  project_id uuid not null references projects (id) on delete cascade,
  -- the lowered LIKE pattern, and the status and level filters (`status|level`, empty when unset)
  pattern text not null,
  filters text not null,
  version bigint not null,
  primary key (project_id, pattern, filters)
);

create function group_search_bump(project uuid) returns void language sql as $$
  insert into group_search_version as v (project_id, version) values (project, 1)
  on conflict (project_id) do update set version = v.version + 1
$$;

-- a change that can lower a term's own matches (the columns of group_search they are counted from)
create function group_search_bump_update() returns trigger language plpgsql as $$
begin
  perform group_search_bump(new.project_id);
  return null;
end $$;

create trigger group_search_bump_update after update on error_groups
  for each row when (
    new.status <> old.status
    or new.level <> old.level
    or new.merged_into is distinct from old.merged_into
    or new.message <> old.message
    or new.culprit is distinct from old.culprit
    or new.frames is distinct from old.frames)
  execute function group_search_bump_update();

-- each project that lost groups (one bump per statement); a project being deleted takes its versions along
create function group_search_bump_delete() returns trigger language plpgsql as $$
begin
  perform group_search_bump(p.project_id) from (select distinct project_id from gone) p
  where exists (select 1 from projects where id = p.project_id);
  return null;
end $$;

create trigger group_search_bump_delete after delete on error_groups
  referencing old table as gone for each statement execute function group_search_bump_delete();
