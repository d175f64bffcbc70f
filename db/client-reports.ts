import { asJson, type Sql, type TxSql } from "./client.js";

/**
 * Client reports: what SDKs dropped before sending, per project × UTC day of receipt × category ×
 * reason, and each project's last SDK warning (db/migrations/108_client_reports.sql).
 *
 * Exactly once: a keyed report claims its key (ON CONFLICT DO NOTHING) in the very statement that
 * adds its quantities, and adds them only when the claim inserted the row. A retry, or a duplicate
 * running at the same time (it waits on the key's index entry until the first commits), adds nothing.
 * Whether the statement committed is always known to the caller (db/transaction.ts).
 */

/** One discarded_events entry: `quantity` occurrences of `category` dropped for `reason`. */
export type Discard = { category: string; reason: string; quantity: number };
export type LastWarning = { message: string; at: Date };
export type ClientReport = { discarded: Discard[]; lastWarning: LastWarning | null };

/** Where a keyed report came from; each has its own key namespace. */
export type ReportVia = "ingest" | "report";
export type ReportKey = { via: ReportVia; key: string; bodyHash: Buffer };

/** The longest window the SDK health read answers; older days of totals are pruned. */
export const SDK_HEALTH_MAX_DAYS = 90;

/** Totals stop here, so every figure read is an exact JSON number. */
export const MAX_QUANTITY = Number.MAX_SAFE_INTEGER;

/**
 * Adds a report. "added": counted now; "repeated": its key was claimed before with the same body
 * (counted then, not again); "conflict": the key was claimed for another body (nothing added).
 */
export async function addClientReport(tx: TxSql, projectId: string, report: ClientReport, key: ReportKey | null): Promise<"added" | "repeated" | "conflict"> {
  const discards = report.discarded.filter((d) => d.quantity > 0);
  const warning = report.lastWarning;
  const [{ counted }] = await tx<{ counted: boolean }[]>`
    with claim as (
      ${
        key
          ? tx`insert into client_report_keys (project_id, via, key, body_hash)
               values (${projectId}, ${key.via}, ${key.key}, ${key.bodyHash})
               on conflict do nothing returning 1`
          : tx`select 1`
      }
    ), go as (
      select exists (select 1 from claim) as go
    ), input as (
      select category, reason, least(sum(quantity), ${MAX_QUANTITY})::bigint as quantity
      from json_to_recordset(${asJson(tx, discards)}::json) as t(category text, reason text, quantity numeric)
      group by category, reason
    ), added as (
      insert into sdk_discards (project_id, day, category, reason, quantity)
      select ${projectId}, (now() at time zone 'utc')::date, i.category, i.reason, i.quantity
      from input i, go where go.go
      order by i.category, i.reason
      on conflict (project_id, day, category, reason)
        do update set quantity = least(sdk_discards.quantity::numeric + excluded.quantity, ${MAX_QUANTITY})::bigint
    ), warned as (
      insert into sdk_last_warnings (project_id, message, at)
      select ${projectId}, ${warning?.message ?? ""}, ${warning?.at ?? new Date(0)}
      from go where go.go and ${warning !== null}
      on conflict (project_id) do update set message = excluded.message, at = excluded.at, received_at = now()
        where excluded.at >= sdk_last_warnings.at
    )
    select go as counted from go`;
  if (counted) return "added";
  // the claim found the key: a new statement sees the row that made it wait
  const [row] = await tx<{ same: boolean }[]>`
    select body_hash = ${key!.bodyHash} as same from client_report_keys
    where project_id = ${projectId} and via = ${key!.via} and key = ${key!.key}`;
  return row && !row.same ? "conflict" : "repeated";
}

export type SdkHealth = {
  days: { day: string; discarded: Discard[] }[];
  totals: Discard[];
  last_warning: { message: string; at: string } | null;
};

/** The last `days` UTC days (today included), oldest first, each listed even when nothing was lost. */
export async function readSdkHealth(sql: Sql, projectId: string, days: number): Promise<SdkHealth> {
  const [rows, [warning]] = await Promise.all([
    sql<{ day: string; category: string; reason: string; quantity: string }[]>`
      select to_char(day, 'YYYY-MM-DD') as day, category, reason, quantity::text as quantity from sdk_discards
      where project_id = ${projectId} and day > (now() at time zone 'utc')::date - ${days}::int
      order by day, category, reason`,
    sql<{ message: string; at: Date }[]>`select message, at from sdk_last_warnings where project_id = ${projectId}`,
  ]);
  const [{ today }] = await sql<{ today: string }[]>`select to_char((now() at time zone 'utc')::date, 'YYYY-MM-DD') as today`;
  const byDay = new Map<string, Discard[]>();
  const end = Date.parse(`${today}T00:00:00Z`);
  for (let i = days - 1; i >= 0; i--) byDay.set(new Date(end - i * 86_400_000).toISOString().slice(0, 10), []);
  const totals = new Map<string, Discard>();
  for (const r of rows) {
    const quantity = Number(r.quantity);
    byDay.get(r.day)?.push({ category: r.category, reason: r.reason, quantity });
    const k = `${r.category}:${r.reason}`;
    const t = totals.get(k) ?? { category: r.category, reason: r.reason, quantity: 0 };
    t.quantity = Math.min(t.quantity + quantity, MAX_QUANTITY);
    totals.set(k, t);
  }
  return {
    days: [...byDay].map(([day, discarded]) => ({ day, discarded })),
    totals: [...totals.values()].sort((a, b) => b.quantity - a.quantity || a.category.localeCompare(b.category) || a.reason.localeCompare(b.reason)),
    last_warning: warning ? { message: warning.message, at: warning.at.toISOString() } : null,
  };
}

/** Report keys live as long as ingest's idempotency keys (a day); days of totals past the longest read window go. */
export async function pruneClientReports(sql: Sql, keepDays: number): Promise<number> {
  const [keys, days] = await Promise.all([
    sql`delete from client_report_keys where created_at < now() - interval '1 day'`,
    sql`delete from sdk_discards where day <= (now() at time zone 'utc')::date - ${keepDays}::int`,
  ]);
  return keys.count + days.count;
}
