import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { insertDsnKey, listDsnKeys, projectDsnId, revokeDsnKey, type DsnKeyRow } from "../../db/sentry.js";
import { asUuid } from "~/errors/params.server";
import { notFound } from "~/http.server";
import { parseOr400 } from "~/accounts/users.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

const KeyInput = z
  .object({ name: z.string().trim().max(100, "must be at most 100 characters").optional() })
  .optional()
  .transform((v) => v ?? {});

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
  const { name } = parseOr400(KeyInput, input);
  const [key, dsnId] = await Promise.all([insertDsnKey(sql, projectId, newPublicKey(), name || null), projectDsnId(sql, projectId)]);
  return view(key, base, dsnId!);
}

export async function revokeDsnKeyFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, keyIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "revoke DSN keys");
  const keyId = asUuid(keyIdParam);
  if (!keyId || !(await revokeDsnKey(sql, projectId, keyId))) throw notFound("No active DSN key with that id in this project.");
}
