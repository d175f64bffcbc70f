/**
 * Data for the benchmark's query scenarios, generated inside PostgreSQL (not through HTTP), so tens
 * of millions of rows take minutes instead of hours. The rows look like what ingest and the economy
 * push write (groups with their counters, raw events over the last 30 days in their daily partitions,
 * minute/hour/day rollups, per-group users, environments and versions, per-user last-seen times;
 * snapshots and a balance history), so the read paths see the same shapes as in production.
 */
import type { Sql } from "../../db/client.js";

const TEXTS = [
  "attempt to index nil with 'Damage'",
  "attempt to perform arithmetic (add) on nil and number",
  "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'",
  "HTTP 429 (Too Many Requests)",
];

/** `groups` groups (message `ServerScriptService.<prefix><g>:<line>: <text>`) with no occurrences yet. */
export async function generateGroups(sql: Sql, projectId: string, groups: number, prefix: string) {
  await sql`
    insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, culprit)
    select ${projectId}, md5(${prefix} || g), 'ServerScriptService.' || ${prefix} || g || ':' || (10 + g % 7) || ': ' || (${TEXTS}::text[])[1 + g % 4],
      (array['error', 'error', 'warn', 'info'])[1 + g % 4], now() - interval '30 days' + make_interval(secs => g), now() - make_interval(secs => g),
      'production', 'ServerScriptService.' || ${prefix} || g
    from generate_series(0, ${groups - 1}::int) g`;
}

/**
 * `events` raw events spread evenly over the last 30 days across the project's groups, in chunks of up to a
 * million rows (`progress` after each), then the rollups, user times and group counters that ingest
 * would have kept. Daily partitions for those 30 days are created first, as the partitions job would have.
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

/** The map of the generated economies: the seed's cash (a column) and gems (read from the balances). */
export const BENCH_ECONOMY_MAP = {
  currencies: [
    { key: "cash", name: "Cash", paths: ["Wallet.Cash"] },
    { key: "gems", name: "Gems", paths: ["Wallet.Gems"] },
  ],
  names: [],
  data_code: null,
  match: ["Wallet"],
};

/**
 * `players` snapshots and `perPlayer` history rows each over the last 30 days (the latest equal to
 * the snapshot), in two currencies (BENCH_ECONOMY_MAP). The same 200 players end on a
 * duplication-sized jump whatever the history's size (every 100th player's cash, every 100th + 50th
 * player's gems, in their last observation; these players have at least two observations), so the
 * small and the large economy hold the same anomalies and comparing them measures the history's size,
 * not the answer's. Rows carry what any writer leaves: balances, the previous observation and the
 * day's starting point, so the insert trigger only adds the per-currency rises and daily aggregates.
 */
export async function generateEconomy(sql: Sql, projectId: string, players: number, perPlayer: number) {
  // n: the player's observations; the last one of a spiking player is the jump
  const cash = (u: string, j: string) => `(case when ${u} % 100 = 0 and ${j} = n then 50000000 else 1000 + (${u} * 31 + ${j} * 17) % 5000 end)::numeric`;
  const gems = (u: string, j: string) => `(case when ${u} % 100 = 50 and ${j} = n then 20000000 else (${u} * 7 + ${j} * 3) % 300 end)::numeric`;
  const at = (j: string) => `now() - make_interval(secs => (30 * 86400.0 * (n - ${j}) / n)::double precision)`;
  const balances = (c: string, g: string) => `jsonb_build_object('cash', ${c}::text, 'bank', '0', 'dark_coin', '0', 'gems', ${g}::text)`;
  await sql.unsafe(
    `insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
       prev_total, prev_observed_at, prev_balances, day_start)
     with p as (
       select u, case when u % 50 = 0 then greatest($2::int, 2) else $2::int end as n from generate_series(1, $3::int) u
     ), g as (
       select u, j, ${cash("u", "j")} as cash, ${gems("u", "j")} as gems, ${at("j")} as at,
         case when j > 1 then ${cash("u", "(j - 1)")} end as prev_cash, case when j > 1 then ${gems("u", "(j - 1)")} end as prev_gems,
         case when j > 1 then ${at("(j - 1)")} end as prev_at
       from p cross join lateral generate_series(1, n) j
     ), d as (
       -- the day starts where the player's last observation before it left them (nothing: 0)
       select *, first_value(prev_cash) over w as start_cash, first_value(prev_gems) over w as start_gems
       from g window w as (partition by u, (at at time zone 'UTC')::date order by j)
     )
     select $1::uuid, u, cash, 0, 0, cash + gems, ${balances("cash", "gems")}, at, 'push',
       prev_cash + prev_gems, prev_at, case when j > 1 then ${balances("prev_cash", "prev_gems")} end,
       case when start_cash is null then '{}'::jsonb
         else ${balances("start_cash", "start_gems")} || jsonb_build_object('total', (start_cash + start_gems)::text) end
     from d order by j, u`,
    [projectId, perPlayer, players],
  );
  await sql`
    insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source, last_logout,
      history_observed_at, day_start, first_observed_at, username)
    select distinct on (user_id) project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, 'push', observed_at,
      observed_at, day_start, now() - interval '30 days' + make_interval(secs => (30 * 86400.0 / ${perPlayer})::double precision),
      'player' || user_id
    from economy_history where project_id = ${projectId} order by user_id, id desc`;
  await sql`insert into economy_maps (project_id, map) values (${projectId}, ${sql.json(BENCH_ECONOMY_MAP)})
    on conflict (project_id) do update set map = excluded.map`;
}
