import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { insertDsnKey, listDsnKeys, projectDsnId, revokeDsnKey, updateDsnKey, type DsnKeyRow } from "../../db/sentry.js";
import { recordAudit } from "../../db/audit.js";
import { parseOr400, asUuid } from "~/input.server";
import { notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

/** Events per minute a key may post; null lifts the limit. */
const RateLimit = z
  .number({ error: "must be a whole number of events per minute, or null for no limit" })
  .int("must be a whole number of events per minute, or null for no limit")
  .min(1, "must be at least 1 (null lifts the limit)")
  .max(100_000_000, "must be at most 100,000,000")
  .nullable();

/**
 * A rate limit typed into a settings form, for the Team API's check: empty lifts the limit (null),
 * digit separators are dropped, anything else goes on as a number (a non-number fails the check
 * with the API's message).
 */
export function rateLimitFromForm(v: unknown): number | null {
  const text = String(v ?? "").trim().replace(/[,_\s]/g, "");
  return text === "" ? null : Number(text);
}

const Name = z.string().trim().max(100, "must be at most 100 characters");

export const KeyInput = z
  .object({ name: Name.optional(), rate_limit_per_minute: RateLimit.optional() })
  .optional()
  .transform((v) => v ?? {});

export const KeyChange = z
  .object({ name: Name.nullable().optional(), rate_limit_per_minute: RateLimit.optional() })
  .refine((v) => v.name !== undefined || v.rate_limit_per_minute !== undefined, "Send `name` or `rate_limit_per_minute`.");

/**
 * The DSN Sentry SDKs are configured with. The project part is the project's numeric DSN id,
 * because Sentry SDKs accept only a number there.
 */
export function dsnFor(base: string, publicKey: string, dsnId: string): string {
  const u = new URL(base);
  return `${u.protocol}//${publicKey}@${u.host}${u.pathname.replace(/\/+$/, "")}/${dsnId}`;
}

const view = (k: DsnKeyRow, base: string, dsnId: string) => ({
  id: k.id,
  name: k.name,
  public_key: k.public_key,
  dsn: dsnFor(base, k.public_key, dsnId),
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
  active: k.revoked_at === null,
  rate_limit_per_minute: k.rate_limit_per_minute,
});

/**
 * DSN keys, readable by every member: they are not secrets (they ship inside game and web clients)
 * and can only post events. Creating and revoking them is for owners and admins.
 */
export async function listDsnKeysFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, base: string) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const [keys, dsnId] = await Promise.all([listDsnKeys(sql, projectId), projectDsnId(sql, projectId)]);
  return keys.map((k) => view(k, base, dsnId!));
}

/** 128 random bits as 32 hex digits, the shape Sentry SDKs expect of a public key. */
export const newPublicKey = () => randomBytes(16).toString("hex");

export async function createDsnKey(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown, base: string) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "create DSN keys");
  const { name, rate_limit_per_minute } = parseOr400(KeyInput, input);
  const [key, dsnId] = await Promise.all([insertDsnKey(sql, projectId, newPublicKey(), name || null, rate_limit_per_minute), projectDsnId(sql, projectId)]);
  await recordAudit(sql, { projectId, actorId: actor.id, action: "dsn_key.created", target: key.id, details: { name: key.name, rate_limit_per_minute: key.rate_limit_per_minute } });
  return view(key, base, dsnId!);
}

/** Renames a DSN key or changes its rate limit; every instance applies the new limit at once. */
export async function updateDsnKeyFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, keyIdParam: string | undefined, input: unknown, base: string) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "change DSN keys");
  const keyId = asUuid(keyIdParam);
  const change = parseOr400(KeyChange, input);
  const before = keyId ? (await listDsnKeys(sql, projectId)).find((k) => k.id === keyId) : undefined;
  const key = keyId && (await updateDsnKey(sql, projectId, keyId, { name: change.name === undefined ? undefined : change.name || null, rateLimit: change.rate_limit_per_minute }));
  if (!key) throw notFound("No active DSN key with that id in this project.");
  const changed: Record<string, unknown> = {};
  if (change.name !== undefined && before?.name !== key.name) changed.renamed_from = before?.name ?? null;
  if (change.rate_limit_per_minute !== undefined && before?.rate_limit_per_minute !== key.rate_limit_per_minute) {
    changed.rate_limit_per_minute = { from: before?.rate_limit_per_minute ?? null, to: key.rate_limit_per_minute };
  }
  if (Object.keys(changed).length > 0) {
    const action = "rate_limit_per_minute" in changed ? "dsn_key.limit_changed" : "dsn_key.renamed";
    await recordAudit(sql, { projectId, actorId: actor.id, action, target: key.id, details: { name: key.name, ...changed } });
  }
  return view(key, base, (await projectDsnId(sql, projectId))!);
}

export async function revokeDsnKeyFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, keyIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "revoke DSN keys");
  const keyId = asUuid(keyIdParam);
  if (!keyId || !(await revokeDsnKey(sql, projectId, keyId))) throw notFound("No active DSN key with that id in this project.");
  const key = (await listDsnKeys(sql, projectId)).find((k) => k.id === keyId);
  await recordAudit(sql, { projectId, actorId: actor.id, action: "dsn_key.revoked", target: keyId, details: { name: key?.name ?? null } });
}
