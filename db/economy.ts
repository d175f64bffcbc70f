import type { Sql, TxSql } from "./client.js";

/** A value of a currency path that could not be read as an amount (see app/economy/currency-map.server.ts). */
export type SkippedValue = { currency: string; path: string; reason: string };

/** One player's balances as seen at one moment, by a push or a scan. Amounts are decimal strings. */
export type Observation = {
  userId: string;
  /** every currency of the project's map, read with the map of the moment */
  balances: Record<string, string>;
  /** the sum of every currency, exact */
  total: string;
  /** the seed's three fields: the map's currencies of those keys, "0" when the map has no such key */
  cash: string;
  bank: string;
  darkCoin: string;
  /** values the map's paths reached that are not amounts (at most 20) and how many in all */
  skippedValues: SkippedValue[];
  skippedCount: number;
  displayNames: string[];
  username: string | null;
  displayName: string | null;
  dataCode: string | null;
  observedAt: Date;
  /** scans only: the data-store revision's creation time (equals observedAt) */
  revisionTime: Date | null;
};

const byBigInt = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0);

/**
 * Per-player advisory locks, taken in user-id order inside the caller's transaction: every writer of
 * a player's balances or flows takes them, so two batches sharing players can neither deadlock nor
 * interleave, and a push that locks a superset later in the same transaction waits for nothing more.
 */
export async function lockPlayers(tx: TxSql, projectId: string, userIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(userIds)].sort(byBigInt);
  if (ids.length === 0) return;
  await tx`
    select pg_advisory_xact_lock(hashtextextended(${projectId}::text || ':' || u, 0))
    from (select unnest(${ids}::text[]) as u, generate_subscripts(${ids}::text[], 1) as i order by i) ordered`;
}

export type Source = "push" | "scan";

/**
 * Upserts snapshots and appends change-only history, inside the caller's transaction.
 * - push: always overwrites (seed rule 3) and sets last_logout to the push time (rule 4).
 * - scan: overwrites only when the revision is newer than the snapshot's observation; keeps
 *   last_logout and the pushed username/display_name.
 * Writers of the same players serialize on per-player advisory locks taken in user-id order, so two
 * batches sharing players can neither deadlock nor both append the same change.
 * Returns the user ids whose snapshot was written.
 *
 * The snapshot keeps what the latest observation read (balances of every currency, their total,
 * skipped values), when the player was first observed, and the balances at the start of the UTC day
 * of its latest history row (`day_start`, with "total"). A history row is appended when the balances
 * or the total differ from the snapshot's; it carries the previous observation and the day's start,
 * taken here from the locked snapshot, so the history triggers never look the player's rows up. A
 * player without a snapshot is new (every writer writes the snapshot with its history): no previous
 * observation, and the day starts at this first observation (its balances and total: the opening
 * balance), so the rest of that day is measured from what the player brought, not from nothing.
 */
export async function writeObservationsTx(tx: TxSql, projectId: string, source: Source, rows: Observation[]): Promise<Set<string>> {
  return (await writeObservationsWithHistoryTx(tx, projectId, source, rows)).stored;
}

/** writeObservationsTx, also answering the ids of the history rows it appended (what a push reconciles with flows). */
export async function writeObservationsWithHistoryTx(
  tx: TxSql,
  projectId: string,
  source: Source,
  rows: Observation[],
): Promise<{ stored: Set<string>; historyIds: string[] }> {
  if (rows.length === 0) return { stored: new Set(), historyIds: [] };
  // one row per player (ON CONFLICT cannot touch a row twice): the latest observation, later rows winning ties
  const latest = new Map<string, Observation>();
  for (const r of rows) {
    const seen = latest.get(r.userId);
    if (!seen || seen.observedAt.getTime() <= r.observedAt.getTime()) latest.set(r.userId, r);
  }
  rows = [...latest.values()];
  await lockPlayers(tx, projectId, rows.map((r) => r.userId));
  const input = rows.map((r) => ({
    user_id: r.userId,
    cash: r.cash,
    bank: r.bank,
    dark_coin: r.darkCoin,
    total: r.total,
    balances: r.balances,
    skipped_values: r.skippedCount > 0 ? r.skippedValues : null,
    skipped_count: r.skippedCount,
    display_names: r.displayNames,
    username: r.username,
    display_name: r.displayName,
    data_code: r.dataCode,
    observed_at: r.observedAt.toISOString(),
    revision_time: r.revisionTime?.toISOString() ?? null,
  }));
  const push = source === "push";
  // the snapshot's values before this statement (CTEs all see the same snapshot of the table); the
  // advisory locks keep any other writer of these players out until commit
  const written = await tx<{ user_id: string | null; history_id: string | null }[]>`
    with input as (
      select * from jsonb_to_recordset(${tx.json(input)}::jsonb) as x(
        user_id bigint, cash numeric, bank numeric, dark_coin numeric, total numeric, balances jsonb, skipped_values jsonb,
        skipped_count integer, display_names jsonb, username text, display_name text, data_code numeric,
        observed_at timestamptz, revision_time timestamptz)
    ), prev as (
      -- one primary-key probe per player (the limit keeps the planner from turning this into a join,
      -- which stale statistics of a growing project make a scan of all its snapshots)
      select s.user_id, s.balances, s.total, s.history_observed_at
      from input i cross join lateral (
        select s.user_id, s.balances, s.total, s.history_observed_at from economy_snapshots s
        where s.project_id = ${projectId} and s.user_id = i.user_id limit 1) s
    ), up as (
      insert into economy_snapshots as s (
        project_id, user_id, cash, bank, dark_coin, total, balances, skipped_values, skipped_count, display_names,
        username, display_name, data_code, last_logout, observed_at, source, revision_time, history_observed_at,
        first_observed_at, day_start)
      select ${projectId}, i.user_id, i.cash, i.bank, i.dark_coin, i.total, i.balances, i.skipped_values, i.skipped_count,
        array(select jsonb_array_elements_text(coalesce(i.display_names, '[]'::jsonb))),
        i.username, i.display_name, i.data_code, ${push ? tx`i.observed_at` : tx`null::timestamptz`}, i.observed_at, ${source},
        i.revision_time, i.observed_at, i.observed_at, i.balances || jsonb_build_object('total', i.total::text)
      from input i order by i.user_id
      on conflict (project_id, user_id) do update set
        cash = excluded.cash,
        bank = excluded.bank,
        dark_coin = excluded.dark_coin,
        total = excluded.total,
        balances = excluded.balances,
        skipped_values = excluded.skipped_values,
        skipped_count = excluded.skipped_count,
        display_names = excluded.display_names,
        username = coalesce(excluded.username, s.username),
        display_name = coalesce(excluded.display_name, s.display_name),
        data_code = excluded.data_code,
        last_logout = coalesce(excluded.last_logout, s.last_logout),
        observed_at = excluded.observed_at,
        source = excluded.source,
        revision_time = excluded.revision_time,
        -- least() skips a null: a snapshot written before first_observed_at existed gets this one
        first_observed_at = least(s.first_observed_at, excluded.first_observed_at),
        history_observed_at = case when (s.balances, s.total) is distinct from (excluded.balances, excluded.total)
          then excluded.observed_at else s.history_observed_at end,
        -- a history row is written: the day starts where it started when the previous change was the
        -- same UTC day, else at the previous balances
        day_start = case
          when (s.balances, s.total) is not distinct from (excluded.balances, excluded.total) then s.day_start
          when s.day_start is not null and s.history_observed_at is not null
            and (s.history_observed_at at time zone 'UTC')::date = (excluded.observed_at at time zone 'UTC')::date then s.day_start
          else s.balances || jsonb_build_object('total', s.total::text) end,
        updated_at = now()
      ${push ? tx`` : tx`where s.observed_at < excluded.observed_at`}
      returning s.user_id, s.cash, s.bank, s.dark_coin, s.total, s.balances, s.day_start, s.observed_at, s.source
    ), changed as (
      select u.user_id, u.cash, u.bank, u.dark_coin, u.total, u.balances, u.day_start, u.observed_at, u.source,
        p.total as prev_total, p.balances as prev_balances, p.history_observed_at as prev_observed_at
      from up u left join prev p on p.user_id = u.user_id
      where p.user_id is null or (p.balances, p.total) is distinct from (u.balances, u.total)
    ), hist as (
      insert into economy_history (
        project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
        prev_total, prev_balances, prev_observed_at, day_start)
      select ${projectId}, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
        prev_total, prev_balances, prev_observed_at, day_start
      from changed order by user_id
      returning id
    )
    select user_id::text as user_id, null as history_id from up
    union all select null, id::text from hist`;
  const stored = written.filter((r) => r.user_id !== null);
  if (!push && stored.length !== rows.length) {
    // a scanned revision older than the snapshot does not overwrite it, but the player was seen then
    await tx`
      update economy_snapshots s set first_observed_at = i.observed_at
      from jsonb_to_recordset(${tx.json(rows.map((r) => ({ user_id: r.userId, observed_at: r.observedAt.toISOString() })))}::jsonb)
        as i(user_id bigint, observed_at timestamptz)
      where s.project_id = ${projectId} and s.user_id = i.user_id and s.first_observed_at > i.observed_at`;
  }
  return { stored: new Set(stored.map((r) => r.user_id!)), historyIds: written.flatMap((r) => (r.history_id === null ? [] : [r.history_id])) };
}

// ---- read side ---------------------------------------------------------------------------------
//
// A currency is `total` (the sum of every currency, a column) or a key of the project's map, read from
// the `balances` jsonb ({key: "decimal string"}). Snapshots and history keep the balances they were read
// with: a key the player was not read with (the map changed since) reads as 0 in sums and orders, and is
// absent from the player's `balances`.

/** `total` or a currency key; callers check the key against the project's map before it gets here. */
export type CurrencyKey = string;

export type PlayerSort = CurrencyKey;
export type PlayerFilter = { sort: PlayerSort; order: "asc" | "desc"; search?: string; limit: number; offset: number };

/** `%` and `_` in a search are literal characters, not patterns. */
const likePattern = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

const PLAYER_COLUMNS = (sql: Sql) => sql`
  user_id::text as user_id, cash::text as cash, bank::text as bank, dark_coin::text as dark_coin, total::text as total,
  balances, display_names, username, display_name, data_code::text as data_code, last_logout, observed_at, source, revision_time`;

const SEED_COLUMNS = new Set(["cash", "bank", "dark_coin", "total"]);

/**
 * One currency's amount on a row aliased `alias` (numeric): the column for total and the seed's keys
 * (the writer keeps them equal to the map's currencies of those keys, 0 when the map lacks one), the
 * jsonb balance otherwise (0 when the row was read without that currency).
 */
export function amountOf(sql: Sql, alias: string, currency: CurrencyKey) {
  if (SEED_COLUMNS.has(currency)) return sql`${sql(alias)}.${sql(currency)}`;
  return sql`coalesce((${sql(alias)}.balances ->> ${currency})::numeric, 0)`;
}

export async function listPlayers(sql: Sql, projectId: string, f: PlayerFilter) {
  const pattern = f.search ? likePattern(f.search.trim()) : null;
  const byId = f.search && /^\d{1,19}$/.test(f.search.trim()) && BigInt(f.search.trim()) <= 9223372036854775807n;
  const where = sql`
    project_id = ${projectId}
    ${
      pattern
        ? sql`and (${byId ? sql`user_id = ${f.search!.trim()}::bigint or` : sql``}
            username ilike ${pattern} or display_name ilike ${pattern}
            or exists (select 1 from unnest(display_names) n where n ilike ${pattern}))`
        : sql``
    }`;
  // qualified: the select list aliases the ::text casts to the same names, and text sorts "9" after "10"
  const column = amountOf(sql, "s", f.sort);
  const order = f.order === "asc" ? sql`${column} asc, s.user_id asc` : sql`${column} desc, s.user_id desc`;
  const [data, [{ total }]] = await Promise.all([
    sql`select ${PLAYER_COLUMNS(sql)} from economy_snapshots s where ${where} order by ${order} limit ${f.limit} offset ${f.offset}`,
    sql<{ total: string }[]>`select count(*)::text as total from economy_snapshots where ${where}`,
  ]);
  return { data, total: Number(total) };
}

/** The player's snapshot with the values the latest observation skipped and when the player was first seen. */
export async function getPlayer(sql: Sql, projectId: string, userId: string) {
  const [p] = await sql`
    select ${PLAYER_COLUMNS(sql)}, coalesce(skipped_values, '[]') as skipped_values, skipped_count, first_observed_at
    from economy_snapshots where project_id = ${projectId} and user_id = ${userId}`;
  return p;
}

/** The latest `limit` balance changes of one player, oldest first (ready to chart), with the balances as read. */
export async function playerHistory(sql: Sql, projectId: string, userId: string, limit = 500) {
  return sql`
    select id::text as id, cash, bank, dark_coin, total, balances, observed_at, source from (
      select id, cash::text as cash, bank::text as bank, dark_coin::text as dark_coin, total::text as total,
        coalesce(balances, '{}') as balances, observed_at, source
      from economy_history where project_id = ${projectId} and user_id = ${userId}
      order by economy_history.id desc limit ${limit}
    ) latest order by latest.id asc`;
}

export type EconomyStats = {
  players: string;
  cash: string;
  bank: string;
  dark_coin: string;
  total: string;
  median_total: string | null;
  p99_total: string | null;
  /** the sum of each key asked for, over the players' latest balances (0 for a player read without it) */
  sums: Record<string, string>;
  /** the selected currency: */
  median: string | null;
  p99: string | null;
  top1_share: number | null;
  top10_share: number | null;
  newcomers: string;
  newcomers_median: string | null;
};

/**
 * Everything the summary says about the players' latest balances, in one pass over the project's
 * snapshots: the count, the seed's sums and the total's median and 99th percentile; the sum of each
 * of `keys`; and for one `currency`: its median and 99th percentile, the share of its supply the
 * richest 1% and 10% hold (floor of the share of the players, at least one player; null when the
 * supply is not positive), and the players first observed in the last `days` UTC days (the money
 * supply's window) with the median of their current balance.
 */
export async function economyStats(sql: Sql, projectId: string, keys: string[], currency: CurrencyKey, days: number): Promise<EconomyStats> {
  // a currency's balance is read from the jsonb once per player (a materialized CTE: inlined, every
  // aggregate would read it again), then one pass aggregates and a top-N sort picks the richest 10%.
  // For the total (a column) the CTE is inlined instead, so the richest 10% come from its index. Each
  // percentile pair is one sort (an array of fractions), and the total's serves when it is the currency.
  const isTotal = currency === "total";
  const [row] = await sql<(Omit<EconomyStats, "sums"> & Record<string, string>)[]>`
    with b as ${isTotal ? sql`not materialized` : sql`materialized`} (
      select s.cash, s.bank, s.dark_coin, s.total, ${isTotal ? sql`s.total` : amountOf(sql, "s", currency)} as v,
        s.first_observed_at >= date_trunc('day', now(), 'UTC') - make_interval(days => ${days - 1}) as new
      from economy_snapshots s where s.project_id = ${projectId}
    ), t as (
      select count(*) as players, coalesce(sum(cash), 0) as cash, coalesce(sum(bank), 0) as bank,
        coalesce(sum(dark_coin), 0) as dark_coin, coalesce(sum(total), 0) as total,
        percentile_disc(array[0.5, 0.99]) within group (order by total) as pct_total,
        ${isTotal ? sql`null::numeric[]` : sql`percentile_disc(array[0.5, 0.99]) within group (order by v)`} as pct_v,
        coalesce(sum(v), 0) as supply,
        count(*) filter (where new) as newcomers,
        percentile_disc(0.5) within group (order by v) filter (where new) as newcomers_median
      from b
    ), top as (
      select v, row_number() over (order by v desc) as rn
      from (select v from b order by v desc limit (select greatest(1, floor(players * 0.1))::bigint from t)) x
    ), shares as (
      select sum(v) filter (where rn <= (select greatest(1, floor(players * 0.01)) from t)) as top1, sum(v) as top10 from top
    )
    select players::text as players, cash::text as cash, bank::text as bank, dark_coin::text as dark_coin, total::text as total,
      pct_total[1]::text as median_total, pct_total[2]::text as p99_total,
      (coalesce(pct_v, pct_total))[1]::text as median, (coalesce(pct_v, pct_total))[2]::text as p99,
      case when supply > 0 then round(top1 / supply, 4)::float8 end as top1_share,
      case when supply > 0 then round(top10 / supply, 4)::float8 end as top10_share,
      newcomers::text as newcomers, newcomers_median::text as newcomers_median,
      -- each currency's supply is the sum of its daily changes (every change of a balance is a history
      -- row, counted into its day), which is the sum of the players' latest balances without reading them
      (select coalesce(jsonb_object_agg(currency, supply::text), '{}') from (
        select currency, sum(delta) as supply from economy_daily_currency
        where project_id = ${projectId} and currency = any(${keys}::text[]) group by currency) d) as sums
    from t, shares`;
  const supplies = row.sums as unknown as Record<string, string>;
  return { ...row, sums: Object.fromEntries(keys.map((k) => [k, supplies[k] ?? "0"])) };
}

export async function topPlayers(sql: Sql, projectId: string, n = 10, currency: CurrencyKey = "total") {
  const v = amountOf(sql, "s", currency);
  return sql`select ${PLAYER_COLUMNS(sql)} from economy_snapshots s where project_id = ${projectId} order by ${v} desc, s.user_id desc limit ${n}`;
}

/**
 * Players per order of magnitude of one currency (default the total): bucket -1 is below 0, 0 is
 * [0, 1), d >= 1 is [10^(d-1), 10^d). Digits of the integer part, not log(), so huge values bucket exactly.
 */
export async function wealthBuckets(sql: Sql, projectId: string, currency: CurrencyKey = "total") {
  const v = amountOf(sql, "s", currency);
  return sql<{ bucket: number; count: string }[]>`
    select case when v < 0 then -1 when v < 1 then 0 else length(trunc(v)::text) end as bucket, count(*)::text as count
    from (select ${v} as v from economy_snapshots s where s.project_id = ${projectId}) b group by 1 order by 1`;
}

export type SupplyDay = {
  day: Date;
  supply: string;
  change: string;
  /** what the players first observed that day held then (part of `change`, never of `gained`) */
  opening: string;
  /** players first observed that day */
  newcomers: number;
  growth_pct: number | null;
  gained: string;
  lost: string;
  gainers: number;
  losers: number;
};

/**
 * One currency's (or the total's) supply at the end of each UTC day of the last `days` days, its change
 * that day, the new players' starting wealth within that change (`opening`, their first observations,
 * and how many they were), the growth over the previous day's supply without those openings (null when
 * that supply is not positive), and the faucet/sink split: what the players who ended the day above
 * where they started gained, what those below lost, and how many of each (a new player starts the day
 * at their opening balance). economy_daily_currency keeps each day at write time, so this reads one row
 * per day and shard, whatever the size of the history.
 */
export async function moneySupplyPerDay(sql: Sql, projectId: string, days: number, currency: CurrencyKey = "total") {
  return sql<SupplyDay[]>`
    with per_day as (
      select day::timestamp at time zone 'UTC' as day, sum(delta) as delta, sum(opening) as opening, sum(openers)::int as openers,
        sum(gained) as gained, sum(lost) as lost, sum(gainers)::int as gainers, sum(losers)::int as losers
      from economy_daily_currency where project_id = ${projectId} and currency = ${currency} group by 1
    ), running as (
      select *, sum(delta) over (order by day) as supply from per_day
    ), days as (
      select generate_series(date_trunc('day', now(), 'UTC') - make_interval(days => ${days - 1}), date_trunc('day', now(), 'UTC'), interval '1 day') as day
    ), out as (
      select d.day,
        coalesce((select r.supply from running r where r.day <= d.day order by r.day desc limit 1), 0) as supply,
        coalesce(r.delta, 0) as delta, coalesce(r.opening, 0) as opening, coalesce(r.openers, 0) as openers,
        r.gained, r.lost, r.gainers, r.losers
      from days d left join running r on r.day = d.day
    )
    select day, supply::text as supply, delta::text as change, opening::text as opening, openers as newcomers,
      case when supply - delta > 0 then round((delta - opening) * 100 / (supply - delta), 2)::float8 end as growth_pct,
      coalesce(gained, 0)::text as gained, coalesce(lost, 0)::text as lost, coalesce(gainers, 0) as gainers, coalesce(losers, 0) as losers
    from out order by day`;
}
