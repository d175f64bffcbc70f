import type { Sql } from "./client.js";

/** An owner's override of one currency's anomaly threshold; a null figure keeps the learned one. */
export type OverrideRow = { currency: string; factor: number | null; min_amount: string | null; off: boolean; updated_at: Date };

/** What was learned from one currency's rises (or the default from its balances when it had too few). */
export type LearnedRow = { currency: string; factor: number; min_amount: string; rises: number; window_days: number; computed_at: Date };

export async function readThresholdRows(sql: Sql, projectId: string, keys: string[]) {
  const [overrides, learned] = await Promise.all([
    sql<OverrideRow[]>`
      select currency, factor::float8 as factor, min_amount::text as min_amount, off, updated_at
      from economy_threshold_overrides where project_id = ${projectId} and currency = any(${keys}::text[])`,
    sql<LearnedRow[]>`
      select currency, factor::float8 as factor, min_amount::text as min_amount, rises, window_days, computed_at
      from economy_learned_thresholds where project_id = ${projectId} and currency = any(${keys}::text[])`,
  ]);
  return { overrides: new Map(overrides.map((r) => [r.currency, r])), learned: new Map(learned.map((r) => [r.currency, r])) };
}

export type LearningParams = {
  windowDays: number;
  sample: number;
  minRises: number;
  amountK: number;
  factorPercentile: number;
  minSigma: number;
  factorMin: number;
  factorMax: number;
  defaultFactor: number;
  defaultMinAmount: string;
};

/**
 * Learns one currency's threshold from its latest rises (at most `sample`, within the last
 * `windowDays` days, read newest first from economy_rises_recent) and stores it, in one statement:
 * - min_amount: e^(median + amountK·σ) of the logarithms of the rises (to − from), σ = 1.4826 × their
 *   median absolute deviation, at least minSigma; rounded to two significant digits.
 * - factor: e^ of the `factorPercentile` of the log-ratios to/from (rises from a positive balance),
 *   within [factorMin, factorMax], to two decimals.
 * With fewer than `minRises` rises, the default: factor `defaultFactor`, min_amount the smaller of
 * `defaultMinAmount` and the median positive balance of up to `sample` players (a brand-new game
 * then flags a rise larger than what a typical player holds; with no player at all, the default).
 *
 * The statement first tries a transaction-scoped advisory lock on the currency without waiting; when
 * another session holds it (learning the same currency right now), nothing is read or written and
 * null comes back. The lock ends with the statement (or the caller's transaction).
 */
export async function learnThreshold(sql: Sql, projectId: string, currency: string, p: LearningParams): Promise<LearnedRow | null> {
  const rows = await sql<LearnedRow[]>`
    with lock as (
      select pg_try_advisory_xact_lock(hashtextextended('economy-thresholds:' || ${projectId}::text || ':' || ${currency}::text, 0)) as got
    ), sample as (
      select ln(amount - prev_amount)::float8 as li,
        case when prev_amount > 0 then ln(amount / prev_amount)::float8 end as lr
      from economy_rises
      where project_id = ${projectId} and currency = ${currency}
        and observed_at >= now() - make_interval(days => ${p.windowDays})
        and (select got from lock)
      order by observed_at desc
      limit ${p.sample}
    ), mid as (
      select count(*)::int as n,
        percentile_cont(0.5) within group (order by li) as mi,
        percentile_cont(${p.factorPercentile}::float8) within group (order by lr) as hr
      from sample
    ), spread as (
      select greatest(1.4826 * percentile_cont(0.5) within group (order by abs(s.li - m.mi)), ${p.minSigma}::float8) as si
      from sample s, mid m
    ), learned as (
      select m.n,
        exp((m.mi + ${p.amountK}::float8 * sp.si)::numeric) as min_amount,
        least(${p.factorMax}::numeric, greatest(${p.factorMin}::numeric, round(exp(coalesce(m.hr, 0)::numeric), 2))) as factor
      from mid m, spread sp
    ), balances as (
      select percentile_disc(0.5) within group (order by v) as median
      from (select (balances ->> ${currency})::numeric as v from economy_snapshots where project_id = ${projectId} limit ${p.sample}) b
      where v > 0
    ), figures as (
      select l.n,
        case when l.n >= ${p.minRises} then l.factor else ${p.defaultFactor}::numeric end as factor,
        case when l.n >= ${p.minRises} then round(l.min_amount, 1 - floor(log(l.min_amount))::int)
          else least(${p.defaultMinAmount}::numeric, coalesce((select median from balances), ${p.defaultMinAmount}::numeric)) end as min_amount
      from learned l
      where (select got from lock)
    )
    insert into economy_learned_thresholds as t (project_id, currency, factor, min_amount, rises, window_days, computed_at)
    select ${projectId}, ${currency}, factor, min_amount, n, ${p.windowDays}, now() from figures
    on conflict (project_id, currency) do update set
      factor = excluded.factor, min_amount = excluded.min_amount, rises = excluded.rises,
      window_days = excluded.window_days, computed_at = excluded.computed_at
    returning currency, factor::float8 as factor, min_amount::text as min_amount, rises, window_days, computed_at`;
  return rows[0] ?? null;
}

/** Sets (inserts or replaces) one currency's override. */
export async function putThresholdOverride(
  sql: Sql,
  projectId: string,
  currency: string,
  o: { factor: number | null; min_amount: string | null; off: boolean },
  userId: string,
) {
  await sql`
    insert into economy_threshold_overrides (project_id, currency, factor, min_amount, off, updated_at, updated_by)
    values (${projectId}, ${currency}, ${o.factor}, ${o.min_amount}, ${o.off}, now(), ${userId})
    on conflict (project_id, currency) do update set
      factor = excluded.factor, min_amount = excluded.min_amount, off = excluded.off, updated_at = now(), updated_by = excluded.updated_by`;
}

export async function deleteThresholdOverride(sql: Sql, projectId: string, currency: string) {
  await sql`delete from economy_threshold_overrides where project_id = ${projectId} and currency = ${currency}`;
}
