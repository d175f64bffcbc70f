-- A search whose term is in more than TOTAL_CAP (10,000) issues remembers that, so that the next one
-- walks to its page without counting again.
--
-- Past TOTAL_CAP own matches the total is a floor and the page is found by walking the issues in its
-- order (138); what is left of a dense search's cost is proving that there are more than 10,000: the
-- trigram index's bitmap of every candidate and the recheck of 10,001 of them, most of the statement.
-- A term's own matches (its issues not merged into another, through the status and level filters)
-- can only become fewer when a group's status, level, merge or texts change, or a group is deleted;
-- a new group, an occurrence or a new minute never lowers them. Each such change bumps its project's
-- version here as the writing transaction commits (deferred triggers, below), and a remembered term holds the
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

-- A project's version moves on once per transaction that changed it, at its commit (the triggers
-- below are deferred): the version row is locked after every group row the transaction locks, and
-- only while it commits, so a bump never holds it while waiting for a group row that another
-- transaction bumping the same project holds (ingest regressing an issue beside a bulk status
-- change or a merge): no deadlock, and the group rows' own lock order (db/groups.ts) stands. A
-- project deleted in the same transaction has no version left to move.
create function group_search_bump() returns trigger language plpgsql as $$
declare
  project uuid := case when tg_op = 'DELETE' then old.project_id else new.project_id end;
begin
  if current_setting('group_search.bumped', true) is distinct from project::text then
    insert into group_search_version as v (project_id, version)
    select project, 1 where exists (select 1 from projects where id = project)
    on conflict (project_id) do update set version = v.version + 1;
    perform set_config('group_search.bumped', project::text, true);
  end if;
  return null;
end $$;

-- A change that can lower a term's own matches (the columns of group_search they are counted from).
-- A culprit set for the first time and frames added after the ones kept (the upsert appends them)
-- only add text to a group's searched text: no term loses a match, so ingest's usual updates bump
-- nothing.
create constraint trigger group_search_bump_update after update on error_groups
  deferrable initially deferred
  for each row when (
    new.status <> old.status
    or new.level <> old.level
    or new.merged_into is distinct from old.merged_into
    or new.message <> old.message
    or (old.culprit is not null and new.culprit is distinct from old.culprit)
    or (old.frames is not null and (new.frames is null or left(new.frames, length(old.frames)) <> old.frames)))
  execute function group_search_bump();

create constraint trigger group_search_bump_delete after delete on error_groups
  deferrable initially deferred
  for each row execute function group_search_bump();
