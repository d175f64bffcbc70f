import type { Sql, TxSql } from "./client.js";

/** One player's balances as seen at one moment, by a push or a scan. Amounts are decimal strings. */
export type Observation = {
  userId: string;
  cash: string;
  bank: string;
  darkCoin: string;
  displayNames: string[];
  username: string | null;
  displayName: string | null;
  dataCode: string | null;
  observedAt: Date;
  /** scans only: the data-store revision's creation time (equals observedAt) */
  revisionTime: Date | null;
};

export type Source = "push" | "scan";

/**
 * Upserts snapshots and appends change-only history, in one transaction.
 * - push: always overwrites (seed rule 3) and sets last_logout to the push time (rule 4).
 * - scan: overwrites only when the revision is newer than the snapshot's observation; keeps
 *   last_logout and the pushed username/display_name.
 * Writers of the same players serialize on per-player advisory locks taken in user-id order, so two
 * batches sharing players can neither deadlock nor both append the same change.
 * Returns the user ids whose snapshot was written.
 */
export async function writeObservations(sql: Sql, projectId: string, source: Source, rows: Observation[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  return sql.begin((tx) => writeObservationsTx(tx, projectId, source, rows));
}

export async function writeObservationsTx(tx: TxSql, projectId: string, source: Source, rows: Observation[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  // one row per player (ON CONFLICT cannot touch a row twice): the latest observation, later rows winning ties
  const latest = new Map<string, Observation>();
  for (const r of rows) {
    const seen = latest.get(r.userId);
    if (!seen || seen.observedAt.getTime() <= r.observedAt.getTime()) latest.set(r.userId, r);
  }
  rows = [...latest.values()];
  const ids = rows.map((r) => r.userId).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  await tx`
    select pg_advisory_xact_lock(hashtextextended(${projectId}::text || ':' || u, 0))
    from (select unnest(${ids}::text[]) as u, generate_subscripts(${ids}::text[], 1) as i order by i) ordered`;
  const input = rows.map((r) => ({
    user_id: r.userId,
    cash: r.cash,
    bank: r.bank,
    dark_coin: r.darkCoin,
    display_names: r.displayNames,
    username: r.username,
    display_name: r.displayName,
    data_code: r.dataCode,
    observed_at: r.observedAt.toISOString(),
    revision_time: r.revisionTime?.toISOString() ?? null,
  }));
  const push = source === "push";
  const stored = await tx<{ user_id: string }[]>`
    with input as (
      select * from jsonb_to_recordset(${tx.json(input)}::jsonb) as x(
        user_id bigint, cash numeric, bank numeric, dark_coin numeric, display_names jsonb, username text,
        display_name text, data_code numeric, observed_at timestamptz, revision_time timestamptz)
    ), prev as (
      select s.user_id, s.cash, s.bank, s.dark_coin
      from economy_snapshots s join input i on i.user_id = s.user_id
      where s.project_id = ${projectId}
    ), up as (
      insert into economy_snapshots as s (
        project_id, user_id, cash, bank, dark_coin, display_names, username, display_name, data_code,
        last_logout, observed_at, source, revision_time)
      select ${projectId}, user_id, cash, bank, dark_coin,
        array(select jsonb_array_elements_text(coalesce(display_names, '[]'::jsonb))),
        username, display_name, data_code, ${push ? tx`observed_at` : tx`null::timestamptz`}, observed_at, ${source},
        revision_time
      from input order by user_id
      on conflict (project_id, user_id) do update set
        cash = excluded.cash,
        bank = excluded.bank,
        dark_coin = excluded.dark_coin,
        display_names = excluded.display_names,
        username = coalesce(excluded.username, s.username),
        display_name = coalesce(excluded.display_name, s.display_name),
        data_code = excluded.data_code,
        last_logout = coalesce(excluded.last_logout, s.last_logout),
        observed_at = excluded.observed_at,
        source = excluded.source,
        revision_time = excluded.revision_time,
        updated_at = now()
      ${push ? tx`` : tx`where s.observed_at < excluded.observed_at`}
      returning s.user_id, s.cash, s.bank, s.dark_coin, s.total, s.observed_at, s.source
    ), hist as (
      insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
      select ${projectId}, u.user_id, u.cash, u.bank, u.dark_coin, u.total, u.observed_at, u.source
      from up u left join prev p on p.user_id = u.user_id
      where p.user_id is null or (p.cash, p.bank, p.dark_coin) is distinct from (u.cash, u.bank, u.dark_coin)
      order by u.user_id
      returning 1
    )
    select user_id::text as user_id from up`;
  return new Set(stored.map((r) => r.user_id));
}
