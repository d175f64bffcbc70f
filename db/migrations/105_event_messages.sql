-- Raw search without a window. A substring of an event's message cannot use a btree index, and a
-- trigram index over every stored event would make each of them pay for one, so raw search read the
-- newest 100,000 events instead: its cost grew with that window and older events were not searched.
-- Events of one issue mostly repeat the same few texts, so the distinct texts are indexed instead,
-- one row per project and text with how many stored events carry it:
--  - the trigram index finds the texts holding the term, and their counts are the search's total;
--  - the events of those texts are found through an index on the text's hash, newest first.
-- The counts follow stored events: the counter drain (db/counter-deltas.ts) adds each batch's, and
-- retention, a group's delete and a project's delete take theirs away. Each change is an upsert of a
-- sum, so they apply in any order; a row whose events are all gone is removed.
create table event_messages (
  project_id uuid not null,
  -- md5 of the message, as the events' index computes it
  hash uuid not null,
  message text not null,
  stored_count bigint not null default 0,
  primary key (project_id, hash)
  -- each drain raises the counts of the texts it saw: room on the page keeps those updates HOT
) with (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.05);

create index event_messages_project_message_trgm on event_messages using gin (project_id, message gin_trgm_ops);

create index events_message_hash on events (project_id, (md5(message)::uuid), "timestamp" desc, id desc);

insert into event_messages (project_id, hash, message, stored_count)
select project_id, md5(message)::uuid, message, count(*) from events group by project_id, message;
