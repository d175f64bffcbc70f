import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { listApiKeys, revokeApiKey, type ApiKeyRow } from "../../db/projects.js";
import { recordAudit } from "../../db/audit.js";
import { createApiKey } from "~/auth/api-keys.server";
import { parseOr400, asUuid } from "~/input.server";
import { notFound } from "~/http.server";
import { authorize, MANAGERS, type Actor } from "./access.server";

export const KeyInput = z
  .object({ name: z.string().trim().max(100, "must be at most 100 characters").optional() })
  .optional()
  .transform((v) => v ?? {});

const publicKey = ({ project_id: _p, ...k }: ApiKeyRow) => ({ ...k, active: k.revoked_at === null });

export async function listKeys(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "see API keys");
  return (await listApiKeys(sql, projectId)).map(publicKey);
}

/** A new key for rotation; the full key is in this answer only. */
export async function createKey(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "create API keys");
  const { name } = parseOr400(KeyInput, input);
  const { key, apiKey } = await createApiKey(sql, projectId, name || null);
  await recordAudit(sql, { projectId, actorId: actor.id, action: "api_key.created", target: key.id, details: { name: key.name, prefix: key.prefix } });
  return { key: publicKey(key), api_key: apiKey };
}

/** Revokes through db/projects so every instance's key cache forgets it at once (and the audit row commits with it). */
export async function revokeKey(sql: Sql, actor: Actor, projectIdParam: string | undefined, keyIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "revoke API keys");
  const keyId = asUuid(keyIdParam);
  if (!keyId || !(await revokeApiKey(sql, keyId, { projectId, actorId: actor.id }))) throw notFound("No active API key with that id in this project.");
}
