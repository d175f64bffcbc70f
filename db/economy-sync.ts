import type { Sql, TxSql } from "./client.js";

// ---- Open Cloud key ------------------------------------------------------------------------------

export type OpenCloudKeyRow = {
  project_id: string;
  key_ciphertext: Buffer;
  key_iv: Buffer;
  key_tag: Buffer;
  key_last4: string;
  universe_id: string;
  datastore_name: string;
  scope: string;
  key_prefix: string | null;
  updated_at: Date;
};

export async function putOpenCloudKey(
  sql: Sql,
  projectId: string,
  k: { ciphertext: Buffer; iv: Buffer; tag: Buffer; last4: string; universeId: string; datastoreName: string; scope: string; keyPrefix: string | null },
) {
  const [row] = await sql<{ updated_at: Date }[]>`
    insert into economy_open_cloud_keys (project_id, key_ciphertext, key_iv, key_tag, key_last4, universe_id, datastore_name, scope, key_prefix)
    values (${projectId}, ${k.ciphertext}, ${k.iv}, ${k.tag}, ${k.last4}, ${k.universeId}, ${k.datastoreName}, ${k.scope}, ${k.keyPrefix})
    on conflict (project_id) do update set
      key_ciphertext = excluded.key_ciphertext, key_iv = excluded.key_iv, key_tag = excluded.key_tag,
      key_last4 = excluded.key_last4, universe_id = excluded.universe_id, datastore_name = excluded.datastore_name,
      scope = excluded.scope, key_prefix = excluded.key_prefix, updated_at = now()
    returning updated_at`;
  return row;
}

export async function getOpenCloudKey(sql: Sql, projectId: string): Promise<OpenCloudKeyRow | undefined> {
  const [row] = await sql<OpenCloudKeyRow[]>`
    select project_id, key_ciphertext, key_iv, key_tag, key_last4, universe_id::text as universe_id, datastore_name, scope,
      key_prefix, updated_at
    from economy_open_cloud_keys where project_id = ${projectId}`;
  return row;
}

export async function deleteOpenCloudKey(sql: Sql, projectId: string): Promise<boolean> {
  const rows = await sql`delete from economy_open_cloud_keys where project_id = ${projectId} returning 1`;
  return rows.length > 0;
}

// ---- scan state ----------------------------------------------------------------------------------

export type SyncRow = {
  project_id: string;
  scan_id: string | null;
  state: "idle" | "queued" | "running" | "succeeded" | "failed";
  cursor: string | null;
  pages: string;
  scanned: string;
  stored: string;
  skipped: string;
  failed: string;
  error: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
};

const SYNC_COLUMNS = (sql: Sql | TxSql) => sql`
  project_id, scan_id, state, cursor, pages::text as pages, scanned::text as scanned, stored::text as stored,
  skipped::text as skipped, failed::text as failed, error, started_at, finished_at, updated_at`;

/** A scan whose row has not moved for this long is presumed dead (its process crashed) and may be replaced. */
const STALE = "30 minutes";

/**
 * Claims the project's scan slot for a new scan id, or returns undefined when a live scan holds it
 * (the 409). An unfinished scan (failed, or running in a process that died) resumes from its cursor
 * with its counters unless `restart`; a finished one starts over.
 */
export async function claimSync(sql: Sql, projectId: string, scanId: string, restart: boolean): Promise<SyncRow | undefined> {
  const [row] = await sql<SyncRow[]>`
    insert into economy_sync as s (project_id, scan_id, state, started_at, updated_at)
    values (${projectId}, ${scanId}, 'queued', now(), now())
    on conflict (project_id) do update set
      scan_id = excluded.scan_id,
      state = 'queued',
      error = null,
      finished_at = null,
      updated_at = now(),
      cursor = case when s.state <> 'succeeded' and not ${restart} then s.cursor end,
      pages = case when s.state <> 'succeeded' and not ${restart} then s.pages else 0 end,
      scanned = case when s.state <> 'succeeded' and not ${restart} then s.scanned else 0 end,
      stored = case when s.state <> 'succeeded' and not ${restart} then s.stored else 0 end,
      skipped = case when s.state <> 'succeeded' and not ${restart} then s.skipped else 0 end,
      failed = case when s.state <> 'succeeded' and not ${restart} then s.failed else 0 end,
      started_at = case when s.state <> 'succeeded' and not ${restart} and s.cursor is not null then s.started_at else now() end
    where s.state not in ('queued', 'running') or s.updated_at < now() - ${STALE}::interval
    returning ${SYNC_COLUMNS(sql)}`;
  return row;
}

export async function getSync(sql: Sql, projectId: string): Promise<SyncRow | undefined> {
  const [row] = await sql<SyncRow[]>`select ${SYNC_COLUMNS(sql)} from economy_sync where project_id = ${projectId}`;
  return row;
}

/** Marks the scan running; undefined when this scan id no longer owns the slot (superseded or finished). */
export async function beginRun(sql: Sql, projectId: string, scanId: string): Promise<SyncRow | undefined> {
  const [row] = await sql<SyncRow[]>`
    update economy_sync set state = 'running', updated_at = now()
    where project_id = ${projectId} and scan_id = ${scanId} and state in ('queued', 'running')
    returning ${SYNC_COLUMNS(sql)}`;
  return row;
}

/** Saves a page's counters and the next cursor in the transaction that wrote its snapshots. */
export async function savePage(
  tx: TxSql,
  projectId: string,
  scanId: string,
  p: { cursor: string | null; scanned: number; stored: number; skipped: number; failed: number },
): Promise<boolean> {
  const rows = await tx`
    update economy_sync set cursor = ${p.cursor}, pages = pages + 1, scanned = scanned + ${p.scanned},
      stored = stored + ${p.stored}, skipped = skipped + ${p.skipped}, failed = failed + ${p.failed}, updated_at = now()
    where project_id = ${projectId} and scan_id = ${scanId} and state = 'running'
    returning 1`;
  return rows.length > 0;
}

export async function touchSync(sql: Sql, projectId: string, scanId: string): Promise<void> {
  await sql`update economy_sync set updated_at = now() where project_id = ${projectId} and scan_id = ${scanId} and state = 'running'`;
}

export async function finishSync(sql: Sql, projectId: string, scanId: string, outcome: { state: "succeeded" | "failed"; error?: string }) {
  await sql`
    update economy_sync set state = ${outcome.state}, error = ${outcome.error ?? null}, finished_at = now(), updated_at = now()
    where project_id = ${projectId} and scan_id = ${scanId} and state in ('queued', 'running')`;
}
