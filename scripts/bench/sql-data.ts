/**
 * Events for the benchmark's query scenarios, generated inside PostgreSQL (not through HTTP), so tens
 * of millions of rows take minutes instead of hours. The rows look like what ingest writes (groups
 * with their counters, raw events over the last 30 days in their daily partitions, minute/hour/day
 * rollups, per-group users, environments and versions, per-user last-seen times, traces), so the read paths
 * see the same shapes as in production. The economy's generated data is in economy.ts.
 */
import type { Sql } from "../../db/client.js";
import { addToMessages } from "../../db/event-messages.js";
import { TEXTS } from "./payloads.js";

/**
 * `groups` groups (message `ServerScriptService.<prefix><g>:<line>: <text>`) with no occurrences yet;
 * their frames (issue search) are the script's function (`on<prefix><g>`, every 4th `onTouched`) and
 * a caller every group shares.
 */
export async function generateGroups(sql: Sql, projectId: string, groups: number, prefix: string) {
  await sql`
    insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, culprit, frames)
    select ${projectId}, md5(${prefix} || g), 'ServerScriptService.' || ${prefix} || g || ':' || (10 + g % 7) || ': ' || (${TEXTS}::text[])[1 + g % 4],
      (array['error', 'error', 'warn', 'info'])[1 + g % 4], now() - interval '30 days' + make_interval(secs => g), now() - make_interval(secs => g),
      'production', 'ServerScriptService.' || ${prefix} || g,
      'ServerScriptService.' || ${prefix} || g || case when g % 4 = 0 then ' onTouched' else ' on' || ${prefix} || g end
        || E'\n' || 'ServerScriptService.Main run'
    from generate_series(0, ${groups - 1}::int) g`;
}

/**
 * `events` raw events spread evenly over the last 30 days across the project's groups, in chunks of up to a
 * million rows (`progress` after each), then the rollups, user times, texts and group counters that
 * ingest would have kept. Daily partitions for those 30 days are created first, as the partitions job would have.
 */
export async function generateEvents(sql: Sql, projectId: string, events: number, progress: (done: number) => void = () => {}) {
  await sql`select ensure_day_partitions('events', 'timestamp', (now() at time zone 'UTC')::date - 31, (now() at time zone 'UTC')::date)`;
  await sql`select ensure_day_partitions('rollup_minute', 'bucket', (now() at time zone 'UTC')::date - 2, (now() at time zone 'UTC')::date)`;
  const chunk = 1_000_000;
  for (let from = 0; from < events; from += chunk) {
    const to = Math.min(events, from + chunk);
    await sql`
      with g as (
        select array_agg(id order by fingerprint) as ids, array_agg(message order by fingerprint) as messages,
          array_agg(level order by fingerprint) as levels, count(*)::int as n
        from error_groups where project_id = ${projectId}
      ), rows as (
        select i, 1 + (i * 7919) % g.n as k, g.ids, g.messages, g.levels, 1 + (i * 104729) % 5000 as user_id,
          -- in time order, as ingest writes them: ids and heap order follow the timestamps
          now() - make_interval(secs => 2592000.0 * (${events}::bigint - i) / ${events}::bigint) as ts
        from g, generate_series(${from + 1}::bigint, ${to}::bigint) i
      )
      insert into events (project_id, group_id, message, level, stack_trace, user_id, player_name, trace_id,
        environment, game_version, count, "timestamp", received_at)
      select ${projectId}, ids[k], messages[k], levels[k], 'ServerScriptService.Gen:10 function run' || chr(10) || 'ServerScriptService.Main:5',
        user_id, 'Player' || user_id, case when i % 10 = 0 then gen_random_uuid() end,
        (array['production', 'production', 'production', 'staging'])[1 + i % 4], '1.4.2', 1, ts, ts
      from rows`;
    progress(to);
  }
  // rollups in bucket order, as ingest writes them over time: a window's cells then share heap pages
  await sql`
    insert into rollup_hour (project_id, bucket, group_id, level, origin_id, count)
    select project_id, date_trunc('hour', "timestamp"), group_id, level, group_id, sum(count) from events
    where project_id = ${projectId} group by 1, 2, 3, 4 order by 2, 3`;
  await sql`
    insert into rollup_day (project_id, bucket, group_id, level, origin_id, count)
    select project_id, date_trunc('day', bucket, 'UTC'), group_id, level, origin_id, sum(count) from rollup_hour
    where project_id = ${projectId} group by 1, 2, 3, 4, 5 order by 2, 3`;
  await sql`
    insert into rollup_minute (project_id, bucket, group_id, level, origin_id, count)
    select project_id, date_trunc('minute', "timestamp"), group_id, level, group_id, sum(count) from events
    where project_id = ${projectId} and "timestamp" >= now() - interval '2 days' group by 1, 2, 3, 4 order by 2, 3`;
  // what a group's detail page reads besides its events: its users, environments and versions
  await sql`
    insert into group_users (project_id, group_id, user_id)
    select distinct project_id, group_id, user_id from events where project_id = ${projectId} and user_id is not null`;
  await sql`
    insert into group_environments (project_id, group_id, environment, count, first_seen, last_seen)
    select project_id, group_id, environment, sum(count), min("timestamp"), max("timestamp") from events
    where project_id = ${projectId} group by 1, 2, 3`;
  await sql`
    insert into group_versions (project_id, group_id, version, count, first_seen, last_seen)
    select project_id, group_id, game_version, sum(count), min("timestamp"), max("timestamp") from events
    where project_id = ${projectId} group by 1, 2, 3`;
  // the stored events' texts raw search reads (db/event-messages.ts)
  await sql`${addToMessages(sql, sql`select project_id, coalesce(origin_group_id, group_id) as group_id, message, 1 as n from events where project_id = ${projectId}`)}`;
  // the traces list reads these: one a traced event (every tenth), as ingest upserts them
  await sql`
    insert into traces (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
    select project_id, trace_id, min("timestamp"), max("timestamp"), count(*), array_agg(distinct group_id)
    from events where project_id = ${projectId} and trace_id is not null group by 1, 2`;
  await sql`
    insert into project_users (project_id, user_id, last_seen)
    select project_id, user_id, date_trunc('minute', max("timestamp")) from events
    where project_id = ${projectId} and user_id is not null group by 1, 2`;
  await sql`
    update error_groups g set count = a.n, stored_count = a.n, user_count = a.users, first_seen = a.first, last_seen = a.last
    from (
      select group_id, count(*) as n, count(distinct user_id) as users, min("timestamp") as first, max("timestamp") as last
      from events where project_id = ${projectId} group by 1
    ) a
    where g.project_id = ${projectId} and g.id = a.group_id`;
}
