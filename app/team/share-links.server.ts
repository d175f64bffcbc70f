import { createHash, randomBytes } from "node:crypto";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getShareLink, insertShareLink, listShareLinks as dbList, revokeShareLink, type ShareLink } from "../../db/share-links.js";
import { recordAudit } from "../../db/audit.js";
import { parseOr400, asUuid } from "~/input.server";
import { forbidden, notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

export const CreateInput = z.object({
  group_id: z.uuid({ error: "must be a group id" }),
  role: z.enum(["viewer", "editor"], { error: "must be viewer or editor" }),
  expires_in_days: z.number({ error: "must be a number of days" }).int("must be a whole number of days").min(1).max(365).nullish(),
});

export const hashShareToken = (token: string) => createHash("sha256").update(token).digest();

const withState = (l: ShareLink) => ({
  ...l,
  active: l.revoked_at === null && (l.expires_at === null || l.expires_at.getTime() > Date.now()),
});

/**
 * Any member may share an issue they are triaging. The token (256 random bits) is in this answer
 * only; the database keeps its SHA-256.
 */
export async function createShareLink(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown, baseUrl: string) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { group_id, role, expires_in_days } = parseOr400(CreateInput, input);
  const token = "shr_" + randomBytes(32).toString("base64url");
  const link = await insertShareLink(sql, projectId, {
    groupId: group_id.toLowerCase(),
    role,
    tokenHash: hashShareToken(token),
    createdBy: actor.id,
    expiresAt: expires_in_days ? new Date(Date.now() + expires_in_days * 86_400_000) : null,
  });
  if (!link) throw notFound("No error group with that id in this project.");
  await recordAudit(sql, { projectId, actorId: actor.id, action: "share_link.created", target: link.id, details: { group_id: link.group_id, role: link.role, expires_at: link.expires_at } });
  return { ...withState(link), token, url: `${baseUrl}/share/${token}` };
}

export async function listShareLinks(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam?: string | null) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = groupIdParam ? asUuid(groupIdParam) : undefined;
  if (groupIdParam && !groupId) return [];
  return (await dbList(sql, projectId, groupId)).map(withState);
}

/** Owners and admins revoke any link; a member revokes the links they made. */
export async function revokeShare(sql: Sql, actor: Actor, projectIdParam: string | undefined, linkIdParam: string | undefined) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const linkId = asUuid(linkIdParam);
  const link = linkId ? await getShareLink(sql, projectId, linkId) : undefined;
  if (!linkId || !link) throw notFound("No share link with that id in this project.");
  if (!MANAGERS.includes(role) && link.created_by !== actor.id) {
    throw forbidden("Only the link's creator, an owner or an admin can revoke this share link.");
  }
  if (!(await revokeShareLink(sql, projectId, linkId, actor.id))) throw notFound("That share link is already revoked.");
  await recordAudit(sql, { projectId, actorId: actor.id, action: "share_link.revoked", target: linkId, details: { group_id: link.group_id, role: link.role } });
}
