import type { Sql } from "./client.js";

/** One currency's threshold as the read applies it: a rise larger than `minAmount` to more than `factor` times. */
export type CurrencyThreshold = { factor: number; minAmount: string; off: boolean };

export type AnomalyFilter = {
  /** the currencies to look in, each with its own threshold; an `off` one is left out */
  thresholds: Map<string, CurrencyThreshold>;
  days: number;
  limit: number;
  offset: number;
};

export type AnomalyRow = {
  user_id: string;
  username: string | null;
  display_name: string | null;
  display_names: string[];
  balances: Record<string, string> | null;
  currency: string;
  from_amount: string;
  to_amount: string;
  from_total: string | null;
  to_total: string | null;
  increase: string;
  factor: number | null;
  from_observed_at: Date | null;
  to_observed_at: Date;
  source: string;
};

/**
 * Consecutive observations of one player where a currency rose by more than its threshold's `factor`
 * times and by more than its `minAmount`: the duplication-exploit signature, looked for in each
 * currency on its own (never in their sum). A rise from zero or debt passes the factor test. One page
 * and one count across the currencies, newest first. Every item names its currency, its amounts
 * before and after (`from_amount`, `to_amount`), and the player's totals at both observations.
 *
 * Each currency is one branch over the rise index (economy_rises_rise: project, currency, size of the
 * rise, covering the time, id and both amounts), so counting and picking the page read only the index
 * entries of the rises larger than each currency's minimum; the page's rows and their players are then
 * fetched by key.
 */
export async function listAnomalies(sql: Sql, projectId: string, f: AnomalyFilter): Promise<{ data: AnomalyRow[]; total: number }> {
  const listed = [...f.thresholds].filter(([, t]) => !t.off);
  if (listed.length === 0) return { data: [], total: 0 };
  const branches = listed.map(
    ([currency, t], i) => sql`
    ${i > 0 ? sql`union all` : sql``}
    select id, observed_at from economy_rises
    where project_id = ${projectId} and currency = ${currency}
      and (amount - prev_amount) > ${t.minAmount}::numeric
      and observed_at >= now() - make_interval(days => ${f.days})
      and (prev_amount <= 0 or amount > prev_amount * ${String(t.factor)}::numeric)`,
  );
  const rises = sql`(${branches}) r`;
  // one pass over the rises gives the page and their count; a page past the end has no row to carry
  // the count, so only then is it counted on its own
  const rows = await sql<(AnomalyRow & { total: string })[]>`
    select a.user_id::text as user_id, s.username, s.display_name, coalesce(s.display_names, '{}') as display_names, s.balances,
      a.currency, a.prev_amount::text as from_amount, a.amount::text as to_amount,
      h.prev_total::text as from_total, h.total::text as to_total, (a.amount - a.prev_amount)::text as increase,
      -- a ratio past what a double holds (5e-324 to 1e308 is a valid push) has no finite factor
      case when a.prev_amount > 0 and a.amount / a.prev_amount < 1e300 then round(a.amount / a.prev_amount, 2)::float8 end as factor,
      a.prev_observed_at as from_observed_at, a.observed_at as to_observed_at, a.source, p.total::text as total
    from (select id, observed_at, count(*) over () as total from ${rises} order by observed_at desc, id desc limit ${f.limit} offset ${f.offset}) p
    join economy_rises a on a.project_id = ${projectId} and a.id = p.id
    left join economy_history h on h.project_id = ${projectId} and h.id = a.history_id
    left join economy_snapshots s on s.project_id = ${projectId} and s.user_id = a.user_id
    order by p.observed_at desc, p.id desc`;
  const total =
    rows.length > 0 ? rows[0].total : f.offset > 0 ? (await sql<{ total: string }[]>`select count(*)::text as total from ${rises}`)[0].total : "0";
  return { data: rows.map(({ total: _, ...row }) => row), total: Number(total) };
}
