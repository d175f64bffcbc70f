import { randomUUID } from "node:crypto";
import type PgBoss from "pg-boss";
import { getProject } from "../../db/projects.js";
import { recordAudit } from "../../db/audit.js";
import {
  claimSync,
  deleteOpenCloudKey,
  finishSync,
  getOpenCloudKey,
  getSync,
  putOpenCloudKey,
  type SyncRow,
} from "../../db/economy-sync.js";
import { z } from "zod";
import { ApiError, conflict, invalidPayload, issuePath, notFound } from "~/http.server";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import { sealKey } from "./crypto.server";
import { assertStorableText } from "~/text.server";

export const SYNC_QUEUE = "economy-sync";
/**
 * A job is one slice of a scan (minutes, not the hours a large store takes): a crashed process's
 * slice expires and is retried from the saved cursor; transient failures retry with backoff.
 */
export const SLICE_MS = 5 * 60_000;
export const SYNC_JOB_OPTIONS = { retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 15 * 60 } as const;

export type SliceJob = { projectId: string; scanId: string };

export function enqueueSlice(boss: PgBoss, job: SliceJob, id?: string) {
  return boss.send(SYNC_QUEUE, job, { ...SYNC_JOB_OPTIONS, ...(id ? { id } : {}) });
}

/** The body of POST /api/economy/sync. */
export const SyncInput = z.object({ project_id: z.string(), restart: z.boolean().optional() });

/** POST /api/economy/sync: claim the project's scan slot (409 if a scan is live), then enqueue after commit. */
export async function startSync(deps: { sql: Sql; boss: PgBoss | null }, projectId: string, body: unknown): Promise<{ job_id: string }> {
  const input = SyncInput.safeParse(body);
  if (!input.success) {
    const i = input.error.issues[0];
    throw invalidPayload(`Invalid body: ${issuePath(i.path)} ${i.message}.`);
  }
  const boss = deps.boss;
  if (!boss) throw new ApiError(503, "unavailable", "Background jobs are disabled on this instance (JOBS_ENABLED=false).");
  if (!(await getOpenCloudKey(deps.sql, projectId))) {
    throw conflict("No Open Cloud key is configured for this project; store one with PUT /api/economy/key first.");
  }
  const scanId = randomUUID();
  const claimed = await claimSync(deps.sql, projectId, scanId, input.data.restart ?? false);
  if (!claimed) throw conflict("A scan is already queued or running for this project; watch it with GET /api/economy/sync.");
  try {
    await enqueueSlice(boss, { projectId, scanId }, scanId);
  } catch (err) {
    await finishSync(deps.sql, projectId, scanId, { state: "failed", error: "The scan could not be queued; try again." });
    throw err;
  }
  return { job_id: scanId };
}

const num = (s: string) => Number(s);

export function syncView(row: SyncRow | undefined) {
  if (!row) {
    return { state: "idle", job_id: null, scanned: 0, stored: 0, skipped: 0, failed: 0, pages: 0, started_at: null, finished_at: null, updated_at: null, error: null };
  }
  return {
    state: row.state,
    job_id: row.scan_id,
    scanned: num(row.scanned),
    stored: num(row.stored),
    skipped: num(row.skipped),
    failed: num(row.failed),
    pages: num(row.pages),
    started_at: row.started_at,
    finished_at: row.finished_at,
    updated_at: row.updated_at,
    error: row.error,
  };
}

export async function syncStatus(deps: { sql: Sql }, projectId: string) {
  return syncView(await getSync(deps.sql, projectId));
}

// ---- the Open Cloud key --------------------------------------------------------------------------

export const KeyBody = z.object({
  project_id: z.string(),
  api_key: z.string().trim().min(8, "must be an Open Cloud API key").max(4096),
  universe_id: z.union([z.number().int().positive(), z.string().regex(/^\d{1,19}$/, "must be a positive integer")]).transform(String),
  datastore_name: z.string().trim().min(1, "must not be empty").max(50, "must be at most 50 characters"),
  scope: z.string().trim().min(1).max(50).optional(),
  key_prefix: z.string().max(50).optional().nullable(),
});

export async function putKey(deps: { sql: Sql; config: Pick<Config, "appSecret"> }, projectId: string, body: unknown, actorId: string | null = null) {
  const parsed = KeyBody.safeParse(body);
  if (!parsed.success) {
    const details = parsed.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
    throw invalidPayload(`Invalid body: ${details[0].path} ${details[0].message}.`, details);
  }
  const k = parsed.data;
  assertStorableText(k);
  if (BigInt(k.universe_id) === 0n || BigInt(k.universe_id) > 9223372036854775807n) {
    throw invalidPayload("Invalid body: universe_id must be a positive integer.", [{ path: "universe_id", message: "must be a positive integer" }]);
  }
  const sealed = sealKey(deps.config.appSecret, projectId, k.api_key);
  await putOpenCloudKey(deps.sql, projectId, {
    ...sealed,
    last4: k.api_key.slice(-4),
    universeId: k.universe_id,
    datastoreName: k.datastore_name,
    scope: k.scope ?? "global",
    keyPrefix: k.key_prefix || null,
  });
  // where the key points, never the key (nor its last characters)
  await recordAudit(deps.sql, {
    projectId, actorId, action: "open_cloud_key.saved", target: null,
    details: { universe_id: k.universe_id, datastore_name: k.datastore_name, scope: k.scope ?? "global", key_prefix: k.key_prefix || null },
  });
  return keyStatus(deps, projectId);
}

/** Never the key: only where it points and its last four characters. */
export async function keyStatus(deps: { sql: Sql }, projectId: string) {
  const row = await getOpenCloudKey(deps.sql, projectId);
  if (!row) return { configured: false, universe_id: null, datastore_name: null, scope: null, key_prefix: null, key_last4: null, updated_at: null };
  return {
    configured: true,
    universe_id: row.universe_id,
    datastore_name: row.datastore_name,
    scope: row.scope,
    key_prefix: row.key_prefix,
    key_last4: row.key_last4,
    updated_at: row.updated_at,
  };
}

export async function deleteKey(deps: { sql: Sql }, projectId: string, actorId: string | null = null) {
  if (!(await deleteOpenCloudKey(deps.sql, projectId))) throw notFound("No Open Cloud key is stored for this project.");
  await recordAudit(deps.sql, { projectId, actorId, action: "open_cloud_key.deleted", target: null });
  return { deleted: true };
}

/** For x-internal-key callers, who name a project without being a member of it. */
export async function requireProject(deps: { sql: Sql }, projectId: string | undefined) {
  const p = projectId && (await getProject(deps.sql, projectId));
  if (!p) throw notFound("No project with that id.");
}
