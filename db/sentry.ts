import { asJson, type Sql, type TxSql } from "./client.js";
import { announceKeysChanged } from "./key-events.js";

export type DsnKeyRow = {
  id: string;
  project_id: string;
  name: string | null;
  public_key: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  /** events per minute; null: no limit */
  rate_limit_per_minute: number | null;
};

const COLUMNS = "id, project_id, name, public_key, created_at, last_used_at, revoked_at, rate_limit_per_minute";

/** A new DSN key; without `rateLimit` it gets the column's default limit. */
export async function insertDsnKey(sql: Sql, projectId: string, publicKey: string, name: string | null, rateLimit?: number | null): Promise<DsnKeyRow> {
  const [k] = await sql<DsnKeyRow[]>`
    insert into dsn_keys (project_id, public_key, name, rate_limit_per_minute)
    values (${projectId}, ${publicKey}, ${name}, ${rateLimit === undefined ? sql`default` : rateLimit})
    returning ${sql.unsafe(COLUMNS)}`;
  return k;
}

/**
 * Changes an active key's name and/or rate limit and tells every instance to forget cached keys, so
 * the new limit applies at once. Undefined if no active key had that id.
 */
export async function updateDsnKey(
  sql: Sql,
  projectId: string,
  keyId: string,
  change: { name?: string | null; rateLimit?: number | null },
): Promise<DsnKeyRow | undefined> {
  const [k] = await sql<DsnKeyRow[]>`
    update dsn_keys set
      name = ${change.name === undefined ? sql`name` : change.name},
      rate_limit_per_minute = ${change.rateLimit === undefined ? sql`rate_limit_per_minute` : change.rateLimit}
    where id = ${keyId} and project_id = ${projectId} and revoked_at is null
    returning ${sql.unsafe(COLUMNS)}`;
  if (k) {
    announceKeysChanged();
    await sql`select pg_notify('api_keys_changed', ${keyId})`;
  }
  return k;
}

export async function listDsnKeys(sql: Sql, projectId: string): Promise<DsnKeyRow[]> {
  return sql<DsnKeyRow[]>`
    select ${sql.unsafe(COLUMNS)} from dsn_keys where project_id = ${projectId} order by created_at, id`;
}

/** Revokes a DSN key and tells every instance to forget cached keys. False if no active key had that id. */
export async function revokeDsnKey(sql: Sql, projectId: string, keyId: string): Promise<boolean> {
  const rows = await sql`
    update dsn_keys set revoked_at = now()
    where id = ${keyId} and project_id = ${projectId} and revoked_at is null returning id`;
  if (rows.length) {
    announceKeysChanged();
    await sql`select pg_notify('api_keys_changed', ${keyId})`;
  }
  return rows.length > 0;
}

type ActiveDsnKey = { id: string; project_id: string; dsn_id: string; rate_limit_per_minute: number | null };

export async function findActiveDsnKey(sql: Sql, publicKey: string): Promise<ActiveDsnKey | undefined> {
  const [k] = await sql<ActiveDsnKey[]>`
    select k.id, k.project_id, p.dsn_id::text as dsn_id, k.rate_limit_per_minute
    from dsn_keys k join projects p on p.id = k.project_id
    where k.public_key = ${publicKey} and k.revoked_at is null`;
  return k;
}

export async function projectDsnId(sql: Sql, projectId: string): Promise<string | undefined> {
  const [p] = await sql<{ dsn_id: string }[]>`select dsn_id::text as dsn_id from projects where id = ${projectId}`;
  return p?.dsn_id;
}

export async function touchDsnKey(sql: Sql, keyId: string): Promise<void> {
  await sql`update dsn_keys set last_used_at = now() where id = ${keyId}`;
}

/** An event id to claim: the event's index in its batch, its project and its id (32 hex digits or a UUID). */
export type EventIdClaim = { seq: number; project_id: string; event_id: string };

/** The event ids of a batch to claim (events without one are always fresh). */
export const eventIdClaims = (items: { projectId: string; eventId?: string | null }[]): EventIdClaim[] =>
  items.flatMap((it, seq) => (it.eventId ? [{ seq, project_id: it.projectId, event_id: it.eventId }] : []));

/**
 * The statement step that claims event ids inside the ingest transaction, in key order (so
 * concurrent claims cannot deadlock), returning a `key` (`<project>/<32 hex digits>`) per id claimed
 * now: the first time this project sees it. A retry of an event being written concurrently waits for
 * that transaction and then finds the id. Used as a CTE of the statement that resolves the batch's
 * groups (db/write-resolve.ts); freshEvents reads its answer.
 */
export const claimEventIdsStep = (tx: TxSql, claims: EventIdClaim[]) => tx`
    insert into sentry_event_ids (project_id, event_id)
    select distinct project_id, event_id
    from json_to_recordset(${asJson(tx, claims)}::json) as t(seq int, project_id uuid, event_id uuid)
    order by project_id, event_id
    on conflict do nothing
    returning project_id::text || '/' || replace(event_id::text, '-', '') as key`;

/**
 * A claim's key as claimEventIdsStep answers it (`<project>/<32 hex digits>`). Node's keys are never
 * fewer than the server's for one batch (the server also reads ids in braces or upper case as the
 * same uuid), so a count of claimed rows equal to the number of Node's keys means every one was.
 */
export const claimKey = (c: { project_id: string; event_id: string }) => `${c.project_id.toLowerCase()}/${c.event_id.replace(/-/g, "").toLowerCase()}`;

/**
 * Per input, whether it is fresh: it has no event id, or its id was claimed now (`claimed`, keys as
 * claimEventIdsStep returns them); within one batch the first of several events with one id is the
 * one kept.
 */
export function freshEvents(items: { projectId: string; eventId?: string | null }[], claimed: string[]): boolean[] {
  // PostgreSQL answers ids in the dashed form; compare on the bare hex digits
  const fresh = new Set(claimed);
  return items.map((it) => !it.eventId || fresh.delete(claimKey({ project_id: it.projectId, event_id: it.eventId })));
}

/** Drops claimed event ids older than a day (SDK retries come within minutes). */
export async function pruneEventIds(sql: Sql): Promise<number> {
  const r = await sql`delete from sentry_event_ids where received_at < now() - interval '1 day'`;
  return r.count;
}
