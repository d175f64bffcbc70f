import type { Sql, TxSql } from "./client.js";

/**
 * One flow as the game reported it: what moved a player's balance of one currency and why. A
 * positive amount is a source (a faucet: a quest, a purchase), a negative one a sink (a shop).
 */
export type Flow = {
  userId: string;
  /** a key of the project's map */
  currency: string;
  /** a non-zero decimal string */
  amount: string;
  /** trimmed and lowercased */
  source: string;
  item: string | null;
  /** the game server's clock, as sent (display only) */
  occurredAt: Date | null;
};

/**
 * Appends flows received at `receivedAt`, inside the caller's transaction (which holds the players'
 * locks, see lockPlayers in db/economy.ts): the rows, the first receipt of each currency (kept once), and the day's
 * sources and sinks per currency and source, added to this connection's shard so concurrent writers
 * of one day add up without waiting on one row.
 */
export async function writeFlowsTx(tx: TxSql, projectId: string, flows: Flow[], receivedAt: Date): Promise<void> {
  if (flows.length === 0) return;
  const input = flows.map((f) => ({
    user_id: f.userId,
    currency: f.currency,
    amount: f.amount,
    source: f.source,
    item: f.item,
    occurred_at: f.occurredAt?.toISOString() ?? null,
  }));
  await tx`
    with input as (
      select * from jsonb_to_recordset(${tx.json(input)}::jsonb)
        as x(user_id bigint, currency text, amount numeric, source text, item text, occurred_at timestamptz)
    ), rows as (
      insert into economy_flows (project_id, user_id, currency, amount, source, item, occurred_at, received_at)
      select ${projectId}, user_id, currency, amount, source, item, occurred_at, ${receivedAt} from input
      returning 1
    ), firsts as (
      insert into economy_flow_currencies (project_id, currency, first_received_at)
      select distinct ${projectId}::uuid, currency, ${receivedAt}::timestamptz from input order by 2
      on conflict (project_id, currency) do nothing
      returning 1
    )
    insert into economy_flow_daily as d (project_id, currency, source, day, shard, gained, spent, flows)
    select ${projectId}, currency, source, (${receivedAt}::timestamptz at time zone 'UTC')::date, pg_backend_pid() % 8,
      coalesce(sum(amount) filter (where amount > 0), 0), coalesce(-sum(amount) filter (where amount < 0), 0), count(*)
    from input group by currency, source order by currency, source
    on conflict (project_id, currency, day, source, shard) do update set
      gained = d.gained + excluded.gained, spent = d.spent + excluded.spent, flows = d.flows + excluded.flows`;
}

/**
 * Reconciles the history rows a push just wrote (ids) with the flows: for each row with a previous
 * observation newer than `keptSince` (older flows may be gone), and each currency the project has
 * received flows of since at or before that previous observation, and which both observations read:
 * explained = Σ flows of the player and currency received in (previous observation, observation];
 * a gain of (to − from) − explained > 0 is recorded as unexplained. Returns how many were recorded.
 */
export async function reconcileTx(tx: TxSql, projectId: string, historyIds: string[], keptSince: Date): Promise<number> {
  if (historyIds.length === 0) return 0;
  const rows = await tx`
    with h as (
      select id, user_id, balances, prev_balances, observed_at, prev_observed_at from economy_history
      where project_id = ${projectId} and id = any(${historyIds}::bigint[])
        and prev_observed_at is not null and prev_observed_at >= ${keptSince}
    ), pairs as (
      select h.id, h.user_id, c.currency, (h.prev_balances ->> c.currency)::numeric as from_amount,
        (h.balances ->> c.currency)::numeric as to_amount, h.prev_observed_at, h.observed_at
      from h join economy_flow_currencies c on c.project_id = ${projectId} and c.first_received_at <= h.prev_observed_at
      where h.prev_balances ? c.currency and h.balances ? c.currency
    ), explained as (
      select p.*, coalesce((
        select sum(f.amount) from economy_flows f
        where f.project_id = ${projectId} and f.user_id = p.user_id and f.currency = p.currency
          and f.received_at > p.prev_observed_at and f.received_at <= p.observed_at), 0) as explained
      from pairs p
    )
    insert into economy_unexplained (project_id, history_id, user_id, currency, from_amount, to_amount, explained, unexplained,
      from_observed_at, observed_at)
    select ${projectId}, id, user_id, currency, from_amount, to_amount, explained, (to_amount - from_amount) - explained,
      prev_observed_at, observed_at
    from explained where (to_amount - from_amount) - explained > 0
    order by id, currency
    returning 1`;
  return rows.length;
}

/**
 * Flows received more than `retentionDays` days ago go, like raw events (at most `batchSize` a
 * statement); the daily sources and sinks and the unexplained gains stay. A push reconciles only
 * gains since an observation within the period (reconcileTx's `keptSince`), so a deleted flow never
 * makes a gain look unexplained.
 */
export async function pruneFlows(sql: Sql, retentionDays: number, batchSize = 5000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const { count } = await sql`
      delete from economy_flows f using (
        select project_id, id from economy_flows where received_at < now() - make_interval(days => ${retentionDays}) limit ${batchSize}
      ) d where f.project_id = d.project_id and f.id = d.id`;
    deleted += count;
    if (count < batchSize) return deleted;
  }
}

// ---- read side ---------------------------------------------------------------------------------

export type SourceTotals = { source: string; gained: string; spent: string; flows: number };
export type CurrencyFlows = { currency: string; sources: SourceTotals[]; totals: { gained: string; spent: string; flows: number } };

/**
 * Sources and sinks by source over the last `days` UTC days (today included) of receipt, per
 * currency of `currencies` (in that order), largest movement first. `gained` and `spent` are
 * positive decimal strings.
 */
export async function flowsBySource(sql: Sql, projectId: string, currencies: string[], days: number): Promise<CurrencyFlows[]> {
  // one pass over the days: each currency's sources, and (source null) the currency's totals
  const rows = await sql<(Omit<SourceTotals, "source"> & { currency: string; source: string | null })[]>`
    select currency, source, sum(gained)::text as gained, sum(spent)::text as spent, sum(flows)::int as flows
    from economy_flow_daily
    where project_id = ${projectId} and currency = any(${currencies}::text[])
      and day >= (now() at time zone 'UTC')::date - ${days - 1}::int
    group by grouping sets ((currency, source), (currency))
    order by currency, sum(gained) + sum(spent) desc, source`;
  return currencies.map((currency) => {
    const own = rows.filter((r) => r.currency === currency);
    const total = own.find((r) => r.source === null);
    return {
      currency,
      sources: own.flatMap(({ currency: _, source, ...r }) => (source === null ? [] : [{ source, ...r }])),
      totals: total ? { gained: total.gained, spent: total.spent, flows: total.flows } : { gained: "0", spent: "0", flows: 0 },
    };
  });
}

/** Whether the project has ever received a flow (of any currency). */
export async function hasFlows(sql: Sql, projectId: string): Promise<boolean> {
  const [row] = await sql`select 1 from economy_flow_currencies where project_id = ${projectId} limit 1`;
  return Boolean(row);
}

export type UnexplainedFilter = { currency?: string; /** a decimal string */ minAmount: string; days: number; limit: number; offset: number };

const UNEXPLAINED_COLUMNS = (sql: Sql) => sql`
  u.id::text as id, u.user_id::text as user_id, s.username, s.display_name, coalesce(s.display_names, '{}') as display_names,
  u.currency, u.from_amount::text as from_amount, u.to_amount::text as to_amount, (u.to_amount - u.from_amount)::text as increase,
  u.explained::text as explained, u.unexplained::text as unexplained, u.from_observed_at, u.observed_at as to_observed_at`;

/** Unexplained gains, newest first, of one currency or all, of at least `minAmount`, over the last `days` days. */
export async function listUnexplained(sql: Sql, projectId: string, f: UnexplainedFilter) {
  const where = sql`
    u.project_id = ${projectId} ${f.currency ? sql`and u.currency = ${f.currency}` : sql``}
    and u.unexplained >= ${f.minAmount}::numeric and u.observed_at >= now() - make_interval(days => ${f.days})`;
  const [data, [{ total }]] = await Promise.all([
    sql`
      select ${UNEXPLAINED_COLUMNS(sql)} from economy_unexplained u
      left join economy_snapshots s on s.project_id = u.project_id and s.user_id = u.user_id
      where ${where} order by u.observed_at desc, u.id desc limit ${f.limit} offset ${f.offset}`,
    sql<{ total: string }[]>`select count(*)::text as total from economy_unexplained u where ${where}`,
  ]);
  return { data, total: Number(total) };
}

/** One player's latest `limit` flows, newest first. */
export async function playerFlows(sql: Sql, projectId: string, userId: string, limit = 100) {
  return sql`
    select id::text as id, currency, amount::text as amount, source, item, occurred_at, received_at from economy_flows
    where project_id = ${projectId} and user_id = ${userId}
    order by received_at desc, id desc limit ${limit}`;
}

/** One player's latest `limit` unexplained gains, newest first. */
export async function playerUnexplained(sql: Sql, projectId: string, userId: string, limit = 100) {
  return sql`
    select id::text as id, currency, from_amount::text as from_amount, to_amount::text as to_amount,
      (to_amount - from_amount)::text as increase, explained::text as explained, unexplained::text as unexplained,
      from_observed_at, observed_at as to_observed_at
    from economy_unexplained where project_id = ${projectId} and user_id = ${userId}
    order by id desc limit ${limit}`;
}
