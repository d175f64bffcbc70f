-- Who an issue's shown text names. An issue's message (its title's source) and culprit are the text of
-- the events that set them, and may name those events' players; a share view scrubs the names it
-- knows, and learns them from the events it reads (the oldest and newest stored ones). Those events
-- may be neither, or deleted by retention: the group row keeps the names and ids of the events whose
-- text it shows (player name, user id, players in instance paths, values under tag and context keys
-- that name someone; db/identities.ts) that the text holds, at most 32, written by the group upsert
-- that sets the text. Only what the text already says is kept: nothing more about anyone is retained.
alter table error_groups add column identities text[];

-- Existing issues: what can still be found, as far as the message or culprit holds it. The earliest
-- stored events (by occurrence time, up to 4) that carry the issue's exact message, read through the
-- message-hash index, give their player names and user ids; the players in the message's and the
-- culprit's instance paths are read from the row itself, so they are kept even when retention deleted
-- every event. Not recovered: the events' tag and context values (that rule lives in db/identities.ts,
-- not in SQL), a first event already deleted, and the event that set the culprit (events do not
-- store it).
with own as (
  select g.project_id, g.id, g.message, g.culprit, case when g.merged_own then g.merged_into else g.id end as own_id
  from error_groups g
), firsts as (
  select o.project_id, o.id, f.player_name, f.user_id::text as user_id, f.rn
  from own o
  cross join lateral (
    select e.player_name, e.user_id, row_number() over (order by e."timestamp", e.id) as rn from (
      select e.player_name, e.user_id, e."timestamp", e.id from events e
      where e.project_id = o.project_id and md5(e.message)::uuid = md5(o.message)::uuid and e.message = o.message
        and coalesce(e.origin_group_id, e.group_id) = o.own_id
      order by e."timestamp", e.id
      limit 4) e
  ) f
), candidates as (
  select project_id, id, trim(player_name) as v, rn * 2 as o from firsts
  union all
  select project_id, id, user_id, rn * 2 + 1 from firsts
  union all
  select o.project_id, o.id, m[1], 100 from own o,
    regexp_matches(o.message || ' ' || coalesce(o.culprit, ''), '\yPlayers\.([A-Za-z0-9_]+)', 'g') as m
  where m[1] not in ('LocalPlayer', 'PlayerAdded', 'PlayerRemoving', 'PlayerMembershipChanged', 'MaxPlayers', 'RespawnTime', 'CharacterAutoLoads')
), distinct_values as (
  select c.project_id, c.id, c.v, min(c.o) as o from candidates c
  join own o on o.project_id = c.project_id and o.id = c.id
  where c.v is not null and length(c.v) between 3 and 64
    and strpos(lower(o.message || E'\n' || coalesce(o.culprit, '')), lower(c.v)) > 0
  group by 1, 2, 3
), lists as (
  select project_id, id, (array_agg(v order by o, v))[1:32] as ids from distinct_values group by 1, 2
)
update error_groups g set identities = l.ids
from lists l
where g.project_id = l.project_id and g.id = l.id;
