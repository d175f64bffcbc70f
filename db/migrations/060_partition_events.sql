-- Raw events and minute rollups become partitioned by day (native range partitioning on the
-- occurrence time), so retention drops whole days instead of deleting rows one batch at a time.
-- Days are created ahead by the partitions job (ensure_day_partitions); a row whose day has no
-- partition (a late event older than every partition) lands in the table's default partition, which
-- retention cleans with ordinary deletes. Existing rows are copied over with their ids.

-- Creates the missing daily partitions of `parent` for first_day..last_day (UTC days). Rows of such a
-- day already sitting in the default partition are moved into the new partition, since a partition
-- cannot be created over rows the default one holds.
create function ensure_day_partitions(parent text, key_column text, first_day date, last_day date) returns int
language plpgsql as $$
declare
  d date;
  part text;
  lo timestamptz;
  hi timestamptz;
  made int := 0;
begin
  -- two instances creating the same day at once would collide on the name
  perform pg_advisory_xact_lock(727275);
  for d in select generate_series(first_day, last_day, interval '1 day')::date loop
    part := parent || '_p' || to_char(d, 'YYYYMMDD');
    continue when to_regclass(part) is not null;
    lo := d::timestamp at time zone 'UTC';
    hi := (d + 1)::timestamp at time zone 'UTC';
    execute format('create temp table partition_moving (like %I) on commit drop', parent);
    execute format('with m as (delete from %I where %I >= %L and %I < %L returning *) insert into partition_moving select * from m',
      parent || '_default', key_column, lo, key_column, hi);
    execute format('create table %I partition of %I for values from (%L) to (%L)', part, parent, lo, hi);
    execute format('insert into %I select * from partition_moving', parent);
    drop table partition_moving;
    made := made + 1;
  end loop;
  return made;
end $$;

-- events -------------------------------------------------------------------------------------------
alter table events rename to events_unpartitioned;
alter index events_pkey rename to events_unpartitioned_pkey;
alter index events_timestamp rename to events_unpartitioned_timestamp;
alter index events_group rename to events_unpartitioned_group;
alter index events_trace rename to events_unpartitioned_trace;
alter index events_user rename to events_unpartitioned_user;

-- identity columns cannot be declared on a partitioned table before PostgreSQL 17: a sequence instead
create sequence events_id_seq_p as bigint;
select setval('events_id_seq_p', coalesce((select max(id) from events_unpartitioned), 0) + 1, false);

create table events (
  project_id uuid not null,
  id bigint not null default nextval('events_id_seq_p'),
  group_id uuid not null,
  message text not null,
  level text not null,
  stack_trace text,
  user_id bigint,
  player_name text,
  trace_id uuid,
  job_id text,
  place_id bigint,
  game_version text,
  environment text not null,
  context jsonb,
  tags text[],
  count integer not null default 1,
  "timestamp" timestamptz not null,
  received_at timestamptz not null default now(),
  -- the member group an event came from when it differs from group_id (merged issues)
  origin_group_id uuid,
  -- the partition key must be part of every unique key; ids stay unique through the sequence
  primary key (project_id, id, "timestamp")
) partition by range ("timestamp");
alter sequence events_id_seq_p owned by events.id;
create table events_default partition of events default;
create index events_timestamp on events (project_id, "timestamp" desc, id desc);
create index events_group on events (project_id, group_id, "timestamp" desc, id desc);
create index events_trace on events (project_id, trace_id) where trace_id is not null;
create index events_user on events (project_id, user_id, "timestamp" desc) where user_id is not null;

-- a partition for every recent day that holds rows (older rows go to the default partition), and the week ahead
select ensure_day_partitions('events', 'timestamp', d, d)
from (select distinct ("timestamp" at time zone 'UTC')::date as d from events_unpartitioned
      where "timestamp" >= now() - interval '90 days' and "timestamp" < now() + interval '8 days') days;
select ensure_day_partitions('events', 'timestamp', (now() at time zone 'UTC')::date, (now() at time zone 'UTC')::date + 7);

insert into events select * from events_unpartitioned;
drop table events_unpartitioned;

-- rollup_minute ------------------------------------------------------------------------------------
alter table rollup_minute rename to rollup_minute_unpartitioned;
alter index rollup_minute_pkey rename to rollup_minute_unpartitioned_pkey;

create table rollup_minute (
  project_id uuid not null,
  bucket timestamptz not null,
  group_id uuid not null,
  level text not null,
  count bigint not null,
  -- the member group the occurrences came from (group_id unless merged; see 030_grouping_v2.sql)
  origin_id uuid not null,
  primary key (project_id, bucket, group_id, level, origin_id)
) partition by range (bucket);
create table rollup_minute_default partition of rollup_minute default;

select ensure_day_partitions('rollup_minute', 'bucket', d, d)
from (select distinct (bucket at time zone 'UTC')::date as d from rollup_minute_unpartitioned
      where bucket >= now() - interval '3 days' and bucket < now() + interval '8 days') days;
select ensure_day_partitions('rollup_minute', 'bucket', (now() at time zone 'UTC')::date, (now() at time zone 'UTC')::date + 7);

insert into rollup_minute select * from rollup_minute_unpartitioned;
drop table rollup_minute_unpartitioned;
