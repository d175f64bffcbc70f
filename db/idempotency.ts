import { asJson, type Sql, type TxSql } from "./client.js";

/** One committed part of a keyed ingest request: which of the request's events it wrote, and the outcome. */
export type RecordedPart = { events: number[]; bodyHash: Buffer; stored: number; throttled: number };

/** A part to record inside the transaction that writes it. */
export type PartRecord = { projectId: string; key: string; bodyHash: Buffer; events: number[]; stored: number; throttled: number };

/**
 * Another transaction already recorded some of these events under the key (a concurrent duplicate
 * of the request), or recorded the key for another body. The transaction is rolled back; the caller
 * reads what was recorded and decides.
 */
export class IdempotencyClash extends Error {
  readonly code = "IDEMPOTENCY_CLASH";
  static is(err: unknown): err is IdempotencyClash {
    return err instanceof IdempotencyClash;
  }
  constructor() {
    super("The idempotency key was recorded concurrently for some of these events");
  }
}

/** The parts already committed under a key. */
export async function recordedParts(sql: Sql, projectId: string, key: string): Promise<RecordedPart[]> {
  return sql<RecordedPart[]>`
    select events, body_hash as "bodyHash", stored, throttled from ingest_idempotency
    where project_id = ${projectId} and key = ${key}`;
}

/**
 * Records parts in the transaction that wrote them, just before it commits. Each key is locked first
 * (in a fixed order), so a concurrent duplicate waits here until the other transaction has committed
 * or rolled back, and the check that follows, a new statement, sees its rows. A part that overlaps a
 * recorded one, or a key recorded for another body, throws IdempotencyClash and nothing is kept.
 */
export async function recordParts(tx: TxSql, parts: PartRecord[]): Promise<void> {
  if (parts.length === 0) return;
  const locks = [...new Set(parts.map((p) => `ingest-key:${p.projectId}:${p.key}`))].sort();
  await tx`select pg_advisory_xact_lock(hashtextextended(k, 0)) from unnest(${locks}::text[]) k order by k`;
  const input = parts.map((p, n) => ({
    n,
    project_id: p.projectId,
    key: p.key,
    first_event: Math.min(...p.events),
    events: p.events,
    body_hash: p.bodyHash.toString("hex"),
    stored: p.stored,
    throttled: p.throttled,
  }));
  const [{ clash }] = await tx<{ clash: boolean }[]>`
    with input as (
      select n, project_id, key, first_event, events, decode(body_hash, 'hex') as body_hash, stored, throttled
      from json_to_recordset(${asJson(tx, input)}::json)
        as t(n int, project_id uuid, key text, first_event int, events int[], body_hash text, stored int, throttled int)
    ), clash as (
      select 1 from input i join ingest_idempotency k on k.project_id = i.project_id and k.key = i.key
      where k.events && i.events or k.body_hash <> i.body_hash
      union all
      -- two requests with one key coalesced into this very transaction
      select 1 from input a join input b on a.project_id = b.project_id and a.key = b.key and a.n < b.n
      where a.events && b.events or a.body_hash <> b.body_hash
    ), ins as (
      insert into ingest_idempotency (project_id, key, first_event, events, body_hash, stored, throttled)
      select project_id, key, first_event, events, body_hash, stored, throttled from input
      where not exists (select 1 from clash)
      order by project_id, key, first_event
    )
    select exists (select 1 from clash) as clash`;
  if (clash) throw new IdempotencyClash();
}

/** What an economy push recorded under its key: whether the body was the same, and the answer it gave. */
export type RecordedPush = { sameBody: boolean; answer: unknown };

/**
 * The push recorded under a key, or null when the key is new. The key stays locked until the
 * transaction ends, so a concurrent duplicate waits here and then finds this one's record.
 */
export async function claimPushKey(tx: TxSql, projectId: string, key: string, bodyHash: Buffer): Promise<RecordedPush | null> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`economy-key:${projectId}:${key}`}, 0))`;
  const [row] = await tx<{ same_body: boolean; answer: unknown }[]>`
    select body_hash = ${bodyHash} as same_body, answer from economy_idempotency
    where project_id = ${projectId} and key = ${key}`;
  return row ? { sameBody: row.same_body, answer: row.answer } : null;
}

/** Records a push's answer under its key, in the transaction that wrote its players (after claimPushKey). */
export async function recordPush(tx: TxSql, projectId: string, key: string, bodyHash: Buffer, answer: unknown): Promise<void> {
  await tx`
    insert into economy_idempotency (project_id, key, body_hash, answer)
    values (${projectId}, ${key}, ${bodyHash}, ${asJson(tx, answer)})`;
}

/** Keys are honoured for at least a day; the hourly retention job removes older ones (ingest and economy). */
export async function pruneIdempotencyKeys(sql: Sql): Promise<number> {
  const [ingest, economy] = await Promise.all([
    sql`delete from ingest_idempotency where created_at < now() - interval '1 day'`,
    sql`delete from economy_idempotency where created_at < now() - interval '1 day'`,
  ]);
  return ingest.count + economy.count;
}
