-- The ingest throttle is decided inside the group upsert, on the locked row (db/events.ts).
--
-- error_groups.received_at: the receive time of the latest ingest write to the row: the clock read
-- right after that write was granted the row's lock. The events it stored carry the same time, and it
-- is the time appended to throttle_times for each untraced event the write kept, so the write can
-- tell how many it kept (the entries equal to it; earlier writes' entries are strictly older).
alter table error_groups add column received_at timestamptz;
