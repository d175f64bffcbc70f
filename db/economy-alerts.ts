import type { Sql } from "./client.js";

/**
 * Queries of the economy alerts (app/alerts/economy.server.ts): what was written since the project's
 * cursor (see migration 113), the day's supply growth per currency, and the claims that make each
 * alert go out once per rule and subject. All scoped by project.
 */

/** Whether the project has an enabled economy rule with a channel (the push's trigger caches this). */
export async function hasEconomyRules(sql: Sql, projectId: string): Promise<boolean> {
  const [r] = await sql<{ any: boolean }[]>`
    select exists (select 1 from alert_rules where project_id = ${projectId} and enabled and cardinality(channel_ids) > 0
      and trigger in ('economy_anomaly', 'supply_growth')) as any`;
  return r.any;
}

/**
 * The project's cursor and the oldest transaction running now, read in one statement: its snapshot
 * is no later than the ones of the reads that follow, so every transaction older than `xmin` has
 * committed or aborted before any of them.
 */
export async function readCursor(sql: Sql, projectId: string): Promise<{ cursor: string | null; xmin: string }> {
  const [r] = await sql<{ cursor: string | null; xmin: string }[]>`
    select (select read_xid::text from economy_alert_cursors where project_id = ${projectId}) as cursor,
      pg_snapshot_xmin(pg_current_snapshot())::text as xmin`;
  return r;
}

/** Moves the cursor forward (never back: two passes may finish in any order). */
export async function advanceCursor(sql: Sql, projectId: string, xmin: string): Promise<void> {
  await sql`
    insert into economy_alert_cursors as c (project_id, read_xid) values (${projectId}, ${xmin}::xid8)
    on conflict (project_id) do update set read_xid = greatest(c.read_xid, excluded.read_xid), updated_at = now()`;
}

/**
 * What a rule asks of the rows: its currency (null: any), its minimum, and since when (the rule's last
 * save: a rule enabled again does not alert on what happened while it was off).
 */
export type RuleWindow = { rule_id: string; currency: string | null; min_amount: string | null; since: string };

export type PlayerNames = { username: string | null; display_name: string | null; display_names: string[] };

/** A row about one player's currency, found for one rule. */
export type PlayerCandidate = PlayerNames & {
  rule_id: string;
  id: string;
  user_id: string;
  currency: string;
  from_amount: string;
  to_amount: string;
  from_observed_at: Date | null;
  observed_at: Date;
};

export type RiseCandidate = PlayerCandidate & {
  increase: string;
  /** to / from rounded to 2 places, null from zero or debt */
  factor: number | null;
  source: string;
};

export type UnexplainedCandidate = PlayerCandidate & { from_observed_at: Date; explained: string; unexplained: string };

/** Rows are never older than this when they alert: a pass that could not run for a day drops them. */
const STALE = "24 hours";

const rulesTable = (sql: Sql, rules: RuleWindow[]) => sql`
  jsonb_to_recordset(${sql.json(rules)}::jsonb) as t(rule_id uuid, currency text, min_amount numeric, since timestamptz)`;

/**
 * Rises written since `cursor` (all of the last day when there is none) that each rule may alert on:
 * of its currency, at least its minimum, recorded after it was created, not claimed by it yet, and
 * past the loosest threshold of the project (`floor`); the caller applies each currency's threshold.
 * One page: at most `limit` rows after `afterId`, oldest first.
 */
export async function riseCandidates(
  sql: Sql,
  projectId: string,
  rules: RuleWindow[],
  cursor: string | null,
  floor: { minAmount: string; factor: number; currencies: string[] },
  page: { afterId: string; limit: number },
): Promise<RiseCandidate[]> {
  if (rules.length === 0 || floor.currencies.length === 0) return [];
  return sql<RiseCandidate[]>`
    select t.rule_id::text as rule_id, r.id::text as id, r.user_id::text as user_id, r.currency,
      r.prev_amount::text as from_amount, r.amount::text as to_amount, (r.amount - r.prev_amount)::text as increase,
      case when r.prev_amount > 0 and r.amount / r.prev_amount < 1e300 then round(r.amount / r.prev_amount, 2)::float8 end as factor,
      r.prev_observed_at as from_observed_at, r.observed_at, r.source,
      s.username, s.display_name, coalesce(s.display_names, '{}') as display_names
    from economy_rises r
    join ${rulesTable(sql, rules)}
      on (t.currency is null or t.currency = r.currency) and r.recorded_at >= t.since
        and r.amount - r.prev_amount >= coalesce(t.min_amount, 0)
    left join economy_snapshots s on s.project_id = r.project_id and s.user_id = r.user_id
    where r.project_id = ${projectId}
      ${cursor ? sql`and r.written_xid >= ${cursor}::xid8` : sql`and r.written_xid is not null`}
      and r.recorded_at >= now() - ${STALE}::interval
      and r.id > ${page.afterId}::bigint
      and r.currency = any(${floor.currencies}::text[])
      and r.amount - r.prev_amount > ${floor.minAmount}::numeric
      and (r.prev_amount <= 0 or r.amount > r.prev_amount * ${floor.factor})
      and not exists (select 1 from economy_alert_claims c
        where c.project_id = r.project_id and c.rule_id = t.rule_id and c.subject = 'rise:' || r.id)
    order by r.id, t.rule_id
    limit ${page.limit}`;
}

/** Unexplained gains written since `cursor` that each rule may alert on (as riseCandidates). */
export async function unexplainedCandidates(
  sql: Sql,
  projectId: string,
  rules: RuleWindow[],
  cursor: string | null,
  page: { afterId: string; limit: number },
): Promise<UnexplainedCandidate[]> {
  if (rules.length === 0) return [];
  return sql<UnexplainedCandidate[]>`
    select t.rule_id::text as rule_id, u.id::text as id, u.user_id::text as user_id, u.currency,
      u.from_amount::text as from_amount, u.to_amount::text as to_amount, u.explained::text as explained,
      u.unexplained::text as unexplained, u.from_observed_at, u.observed_at,
      s.username, s.display_name, coalesce(s.display_names, '{}') as display_names
    from economy_unexplained u
    join ${rulesTable(sql, rules)}
      on (t.currency is null or t.currency = u.currency) and u.observed_at >= t.since
        and u.unexplained >= coalesce(t.min_amount, 0)
    left join economy_snapshots s on s.project_id = u.project_id and s.user_id = u.user_id
    where u.project_id = ${projectId}
      ${cursor ? sql`and u.written_xid >= ${cursor}::xid8` : sql`and u.written_xid is not null`}
      and u.id > ${page.afterId}::bigint
      and u.observed_at >= now() - ${STALE}::interval
      and not exists (select 1 from economy_alert_claims c
        where c.project_id = u.project_id and c.rule_id = t.rule_id and c.subject = 'unexplained:' || u.id)
    order by u.id, t.rule_id
    limit ${page.limit}`;
}

export type SupplyGrowth = {
  currency: string;
  /** the UTC day, YYYY-MM-DD */
  day: string;
  /** the supply at the end of the previous day */
  previous: string;
  /** the day's change of supply, and how much of it is new players' opening balances */
  change: string;
  opening: string;
  supply: string;
  /** (change - opening) * 100 / previous, null when the previous supply is not positive */
  growth_pct: number | null;
};

/**
 * Today's and yesterday's (UTC) supply growth of each of `currencies`: the day's change without new
 * players' opening balances, over the supply at the end of the day before (shards summed; the
 * supply is the running sum of the daily changes, as the overview's money supply reads it).
 */
export async function supplyGrowth(sql: Sql, projectId: string, currencies: string[]): Promise<SupplyGrowth[]> {
  if (currencies.length === 0) return [];
  return sql<SupplyGrowth[]>`
    with days as (
      select d::date as day from generate_series(date_trunc('day', now(), 'UTC') - interval '1 day', date_trunc('day', now(), 'UTC'), interval '1 day') d
    ), per as (
      select k.currency, days.day,
        coalesce((select sum(delta) from economy_daily_currency e
          where e.project_id = ${projectId} and e.currency = k.currency and e.day < days.day), 0) as previous,
        coalesce(sum(e.delta), 0) as change, coalesce(sum(e.opening), 0) as opening
      from unnest(${currencies}::text[]) as k(currency) cross join days
      left join economy_daily_currency e on e.project_id = ${projectId} and e.currency = k.currency and e.day = days.day
      group by k.currency, days.day
    )
    select currency, to_char(day, 'YYYY-MM-DD') as day, previous::text as previous, change::text as change, opening::text as opening,
      (previous + change)::text as supply,
      case when previous > 0 then round((change - opening) * 100 / previous, 2)::float8 end as growth_pct
    from per order by currency, day`;
}

/**
 * Claims older than two days are dropped (hourly, with the retention job): no row older than a day is
 * ever evaluated again, and a day's supply only until the end of the next, so none can be claimed twice.
 */
export async function pruneEconomyAlertClaims(sql: Sql): Promise<number> {
  const r = await sql`delete from economy_alert_claims where created_at < now() - interval '2 days'`;
  return r.count;
}

/**
 * Claims the right to send `ruleId`'s alert about each subject: one row per (rule, subject), inserted
 * once, so of two passes (two workers, two instances) only one sends. Returns the claimed subjects.
 */
export async function claimSubjects(sql: Sql, projectId: string, ruleId: string, subjects: string[]): Promise<Set<string>> {
  if (subjects.length === 0) return new Set();
  const sorted = [...new Set(subjects)].sort();
  const rows = await sql<{ subject: string }[]>`
    insert into economy_alert_claims (project_id, rule_id, subject)
    select ${projectId}, ${ruleId}, s from unnest(${sorted}::text[]) as s order by s
    on conflict do nothing
    returning subject`;
  return new Set(rows.map((r) => r.subject));
}
