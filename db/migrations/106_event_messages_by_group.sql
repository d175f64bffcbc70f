-- The stored events' texts per group (the group an event was written for, before any merge: an
-- event's own group, coalesce(origin_group_id, group_id)), so that issue search finds an issue by
-- any of its stored events' messages, not only those among the newest 20,000 events: the matching
-- texts name their groups, and a merged issue is found through its members as with its own message.
-- A merge or an unmerge moves no row (the own group does not change); a group's delete removes its rows.
-- Raw search sums a text's rows over its groups.
--
-- The counts are recomputed from the stored events. A pending drain row written before this carries
-- its texts per project (payload "t"), without their groups: those events are counted here already,
-- so "t" is dropped from the pending rows. One written by a service instance of the previous version
-- after this is given the group of the text's newest stored event (db/counter-deltas.ts).
alter table event_messages drop constraint event_messages_pkey;
truncate event_messages;
alter table event_messages add column group_id uuid not null;
alter table event_messages add primary key (project_id, group_id, hash);

insert into event_messages (project_id, group_id, hash, message, stored_count)
select project_id, coalesce(origin_group_id, group_id), md5(message)::uuid, message, count(*)
from events group by project_id, coalesce(origin_group_id, group_id), message;

update counter_deltas set payload = (payload::jsonb - 't')::json where payload::jsonb ? 't';
