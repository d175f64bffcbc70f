import { randomBytes } from "node:crypto";
import { z } from "zod";
import { deleteChannel, findChannel, getChannel, insertChannel, listChannels, updateChannel, type ChannelRow } from "../../db/alerts.js";
import type { Actor } from "~/team/access.server";
import { authorize, EVERYONE, MANAGERS } from "~/team/access.server";
import { recordAudit } from "../../db/audit.js";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import type { AlertSetupDeps } from "./rules.server";
import { parseOr400, asUuid } from "~/input.server";
import { ApiError, invalidPayload, notFound } from "~/http.server";
import { countOrRefuse } from "~/rate-limit.server";
import { sendTestAlert, type AlertDeps } from "./dispatch.server";
import { maskUrl, seal } from "./seal.server";
import { ipLiteral, isPublicAddress } from "./address.server";

/** Channels: where alerts go. Owner/admin only; the URL is sealed at rest and shown masked. */

const Name = z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters");
const Url = z.string().trim().max(2000, "must be at most 2000 characters");
const Secret = z.string().min(16, "must be at least 16 characters").max(200, "must be at most 200 characters");

/** An email channel's addresses: 1 to 20, each once (compared without case). */
const Recipients = z
  .array(z.string().trim().max(254, "must be at most 254 characters").pipe(z.email({ error: "must be an email address" })), { error: "must be a list of email addresses" })
  .min(1, "must name at least one address")
  .max(20, "must be at most 20 addresses")
  .transform((list) => list.filter((a, i) => list.findIndex((b) => b.toLowerCase() === a.toLowerCase()) === i));

export const NewChannel = z
  .object({
    name: Name,
    kind: z.enum(["discord", "slack", "webhook", "email"], { error: "must be discord, slack, webhook or email" }),
    url: Url.optional(),
    recipients: Recipients.optional(),
    secret: Secret.optional(),
    enabled: z.boolean().optional(),
  })
  .superRefine((c, ctx) => {
    if (c.kind === "email") {
      if (!c.recipients) ctx.addIssue({ code: "custom", path: ["recipients"], message: "an email channel needs recipients (a list of addresses)" });
      if (c.url !== undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "an email channel has no url; send recipients" });
    } else {
      if (c.url === undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "is required" });
      if (c.recipients !== undefined) ctx.addIssue({ code: "custom", path: ["recipients"], message: "only for kind email" });
    }
  });
export const ChannelPatch = z
  .object({ name: Name.optional(), url: Url.optional(), recipients: Recipients.optional(), secret: Secret.optional(), enabled: z.boolean().optional() })
  .refine((p) => Object.keys(p).length > 0, { message: "send at least one of name, url, recipients, secret, enabled" });

/** What an operator does before a team can add an email channel. */
const SMTP_HINT = "Email channels send through the SMTP server the operator configures: start the service with SMTP_URL and SMTP_FROM set (see docs/operations.md).";

const DISCORD_PATH = /^\/api(\/v\d+)?\/webhooks\/\d+\/[\w-]+\/?$/;

/** What an operator does to alert a local or LAN endpoint (a test receiver, a self-hosted chat). */
const ALLOW_PRIVATE_HINT =
  "To send alerts to plain http or to private and loopback addresses (local testing), the operator starts the service with WEBHOOK_ALLOW_PRIVATE=true.";

/** http(s) only (plain http only where private destinations are allowed, i.e. local testing); Discord URLs must be webhook URLs. */
function checkUrl(raw: string, kind: ChannelRow["kind"], allowPrivate: boolean): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalidPayload("url is not a valid URL.", [{ path: "url", message: "must be a valid URL" }]);
  }
  const ok = u.protocol === "https:" || (allowPrivate && u.protocol === "http:");
  if (!ok) throw invalidPayload(`url must be an https URL. ${ALLOW_PRIVATE_HINT}`, [{ path: "url", message: "must start with https://" }]);
  if (u.username || u.password) throw invalidPayload("url must not contain credentials.", [{ path: "url", message: "must not contain user:password@" }]);
  // a literal address is judged now; a name is resolved and judged at every delivery
  const literal = ipLiteral(u.hostname);
  if (!allowPrivate && literal !== undefined && !isPublicAddress(literal)) {
    throw invalidPayload(`url points at a private, loopback or reserved address. ${ALLOW_PRIVATE_HINT}`, [{ path: "url", message: "must be a public address" }]);
  }
  if (kind === "discord" && !DISCORD_PATH.test(u.pathname)) {
    throw invalidPayload("url is not a Discord webhook URL (…/api/webhooks/{id}/{token}).", [
      { path: "url", message: "must look like https://discord.com/api/webhooks/{id}/{token}" },
    ]);
  }
  return u.toString();
}

export const publicChannel = (c: ChannelRow) => ({
  id: c.id,
  name: c.name,
  kind: c.kind,
  /** masked; null for email channels */
  url: c.url_hint,
  /** email channels: where alerts go; empty for every other kind */
  recipients: c.recipients,
  has_secret: c.secret_sealed !== null,
  enabled: c.enabled,
  created_at: c.created_at,
  updated_at: c.updated_at,
});

/** Creating or editing a channel seals its URL and secret, and checks where the URL points. */
type SealingDeps = { sql: Sql; config: Pick<Config, "appSecret" | "webhookAllowPrivate" | "smtpUrl"> };

export async function listProjectChannels(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see alert channels");
  return (await listChannels(deps.sql, projectId)).map(publicChannel);
}

/** A webhook channel without a secret gets a generated one, returned in this answer only. */
export async function createChannel(deps: SealingDeps, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "create alert channels");
  const c = parseOr400(NewChannel, input);
  if (c.kind === "email") {
    if (!deps.config.smtpUrl) throw invalidPayload(`This server cannot send email yet. ${SMTP_HINT}`, [{ path: "kind", message: "email is not configured on this server" }]);
    if (c.secret) throw invalidPayload("Only webhook channels have a secret.", [{ path: "secret", message: "only for kind webhook" }]);
    const row = await insertChannel(deps.sql, {
      projectId,
      name: c.name,
      kind: "email",
      urlSealed: null,
      urlHint: null,
      secretSealed: null,
      recipients: c.recipients!,
      enabled: c.enabled ?? true,
    });
    return { channel: publicChannel(row) };
  }
  const url = checkUrl(c.url!, c.kind, deps.config.webhookAllowPrivate);
  const secret = c.kind === "webhook" ? (c.secret ?? randomBytes(24).toString("base64url")) : null;
  const { appSecret } = deps.config;
  const row = await insertChannel(deps.sql, {
    projectId,
    name: c.name,
    kind: c.kind,
    urlSealed: seal(appSecret, projectId, url),
    urlHint: maskUrl(url),
    secretSealed: secret ? seal(appSecret, projectId, secret) : null,
    enabled: c.enabled ?? true,
  });
  // a channel is named by kind and name: its URL (a Discord webhook's carries its token) and secret never
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "alert_channel.created", target: row.id, details: { name: row.name, kind: row.kind, enabled: row.enabled } });
  return { channel: publicChannel(row), ...(secret && !c.secret ? { secret } : {}) };
}

async function channelIn(deps: { sql: Sql }, projectId: string, idParam: string | undefined): Promise<ChannelRow> {
  const id = asUuid(idParam);
  const c = id ? await getChannel(deps.sql, projectId, id) : undefined;
  if (!c) throw notFound("No alert channel with that id in this project.");
  return c;
}

export async function editChannel(deps: SealingDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "edit alert channels");
  const current = await channelIn(deps, projectId, idParam);
  const p = parseOr400(ChannelPatch, input);
  if (p.secret && current.kind !== "webhook") throw invalidPayload("Only webhook channels have a secret.", [{ path: "secret", message: "only for kind webhook" }]);
  if (p.recipients && current.kind !== "email") throw invalidPayload("Only email channels have recipients.", [{ path: "recipients", message: "only for kind email" }]);
  if (p.url !== undefined && current.kind === "email") throw invalidPayload("An email channel has no url; send recipients.", [{ path: "url", message: "not for kind email" }]);
  const { appSecret } = deps.config;
  const url = p.url === undefined ? undefined : checkUrl(p.url, current.kind, deps.config.webhookAllowPrivate);
  const row = await updateChannel(deps.sql, projectId, current.id, {
    name: p.name,
    enabled: p.enabled,
    urlSealed: url ? seal(appSecret, projectId, url) : undefined,
    urlHint: url ? maskUrl(url) : undefined,
    secretSealed: p.secret ? seal(appSecret, projectId, p.secret) : undefined,
    recipients: p.recipients,
  });
  if (!row) throw notFound("No alert channel with that id in this project.");
  const onlyEnabled = p.enabled !== undefined && p.enabled !== current.enabled && p.name === undefined && url === undefined && !p.secret;
  await recordAudit(deps.sql, {
    projectId,
    actorId: actor.id,
    action: onlyEnabled ? (row.enabled ? "alert_channel.enabled" : "alert_channel.disabled") : "alert_channel.changed",
    target: row.id,
    details: {
      name: row.name,
      kind: row.kind,
      ...(p.name !== undefined && p.name !== current.name ? { renamed_from: current.name } : {}),
      ...(p.enabled !== undefined && p.enabled !== current.enabled ? { enabled: row.enabled } : {}),
      ...(url !== undefined ? { address_changed: true } : {}),
      ...(p.secret ? { signing_changed: true } : {}),
    },
  });
  return { channel: publicChannel(row) };
}

export async function removeChannel(deps: AlertSetupDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "delete alert channels");
  const id = asUuid(idParam);
  const current = id ? await getChannel(deps.sql, projectId, id) : undefined;
  if (!id || !(await deleteChannel(deps.sql, projectId, id))) throw notFound("No alert channel with that id in this project.");
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "alert_channel.deleted", target: id, details: { name: current?.name ?? null, kind: current?.kind ?? null } });
  deps.alerts.forget(projectId);
  deps.economyAlerts?.forget(projectId);
}

export const TestInput = z.object({ channel_id: z.string({ error: "is required" }) });

/** The window of ALERT_TEST_RATE_LIMIT. */
const TEST_WINDOW_SECONDS = 60;

/**
 * POST /api/notifications/test: a synthetic alert through the channel's adapter. A channel of a
 * project where the user is not owner/admin is a 404 like one that does not exist; a failed
 * delivery is a 502 carrying the delivery error. Each user may send ALERT_TEST_RATE_LIMIT a minute
 * over all channels and projects (429 with Retry-After past it, nothing sent): a test reaches a
 * third party (a Discord channel, an inbox, someone's webhook), so a script or a held-down button
 * must not turn this server into a spammer. Tests refused with a 4xx before the send are not counted;
 * failed deliveries are, since they cost the destination as much.
 */
export async function testChannel(deps: AlertDeps & { config: Pick<Config, "alertTestRateLimit"> }, actor: Actor, input: unknown) {
  const { channel_id } = parseOr400(TestInput, input);
  const id = asUuid(channel_id);
  if (!id) throw invalidPayload("channel_id must be a UUID.", [{ path: "channel_id", message: "must be a UUID" }]);
  const channel = await findChannel(deps.sql, id);
  const missing = () => notFound("No alert channel with that id among the projects you manage.");
  if (!channel) throw missing();
  try {
    await authorize(deps.sql, actor, channel.project_id, MANAGERS);
  } catch {
    throw missing();
  }
  const limit = deps.config.alertTestRateLimit;
  await countOrRefuse(deps.sql, `alert-test:${actor.id}`, {
    windowSeconds: TEST_WINDOW_SECONDS,
    limit,
    refusal: (retry) => `Too many test alerts: at most ${limit} a minute; try again in ${retry} seconds.`,
  });
  const r = await sendTestAlert(deps, channel);
  if (!r.ok) {
    throw new ApiError(502, "delivery_failed", `The test alert was not delivered: ${r.error ?? "unknown error"}.`, [
      { path: "delivery", message: `status ${r.status ?? "none"} after ${r.attempts} attempt(s)` },
    ]);
  }
  return { success: true as const };
}
