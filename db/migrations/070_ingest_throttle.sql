-- The ingest throttle is decided inside the group upsert, on the locked row (db/events.ts).
--
-- error_groups.received_at: the receive time of the latest ingest write to the row: the clock read
-- right after that write was granted the row's lock. The events it stored carry the same time, and it
-- is the time appended to throttle_times for each untraced event the write kept, so the write can
-- tell how many it kept (the entries equal to it; earlier writes' entries are strictly older).
alter table error_groups add column received_at timestamptz;

-- The throttle of one group row for `n` untraced events of a write (the caller passes at most the
-- limit): reads the clock once (the row is locked by now), keeps the entries still inside the window,
-- and lets in as many of the `n` as the limit leaves room for. With n = 0 the entries stay as they are.
create function ingest_throttle(times timestamptz[], n int, lim int, win interval,
  out new_times timestamptz[], out at timestamptz, out kept int)
language plpgsql volatile as $$
declare
  live timestamptz[];
begin
  at := clock_timestamp();
  if n <= 0 then
    new_times := times;
    kept := 0;
    return;
  end if;
  live := array(select t from unnest(times) t where t > at - win);
  kept := least(n, greatest(0, lim - cardinality(live)));
  new_times := live || array_fill(at, array[kept]);
end $$;
