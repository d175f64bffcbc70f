import { createHmac } from "node:crypto";
import type { ChannelKind } from "../../db/alerts.js";
import { TRIGGER_NAME } from "./triggers";
import { economyDiscordPayload, economySlackPayload, economyWebhookPayload, type EconomyAlert } from "./economy-payloads.server";
import { healthDiscordPayload, healthSlackPayload, healthWebhookPayload, type HealthAlert } from "./health-payloads.server";

/**
 * Pure builders of what each channel kind receives. One entry point, `buildRequest(kind, alert)`,
 * so every adapter goes through the same sender with the same content.
 */
export type AlertKind = "new_group" | "regression" | "frequency" | "test";

export type Alert = {
  kind: AlertKind;
  project: { id: string; name: string };
  rule: { id: string; name: string; threshold_count?: number | null; window_minutes?: number | null } | null;
  group: {
    id: string;
    fingerprint: string;
    message: string;
    /** the issue's title (its message in its grouping form); without one (a test alert) the message stands in */
    title?: string;
    level: string;
    environment: string;
    culprit: string | null;
    count: number;
    first_seen: Date;
    last_seen: Date;
    stack_trace: string | null;
    /** occurrences in the rule's window (frequency) */
    window_count?: number;
    /** the email of the member the issue is assigned to; absent or null: nobody */
    assignee?: string | null;
  };
  /** dashboard link to the group, when the public URL is known */
  url: string | null;
  at: Date;
};

// Discord's documented limits (ROBLOX.md)
export const DISCORD = { title: 256, description: 4096, fieldName: 256, fieldValue: 1024, footer: 2048, total: 6000 } as const;
const SLACK = { header: 150, section: 3000, text: 3000 } as const;

const HEADLINE: Record<AlertKind, string> = { ...TRIGGER_NAME, test: "Test alert" };

const COLOR: Record<string, number> = { error: 0xd64545, warn: 0xe0a030, info: 0x3b82f6 };

/** Cuts to `max` characters (code points), marking the cut with an ellipsis. */
export function cut(s: string, max: number): string {
  const chars = [...s];
  if (chars.length <= max) return s;
  if (max <= 1) return chars.slice(0, Math.max(0, max)).join("");
  return chars.slice(0, max - 1).join("") + "…";
}
const len = (s: string) => [...s].length;

/**
 * What an alert calls the issue: its title (the message in its grouping form), so a message shared by
 * the whole team's chat names what failed, not the player it happened to first.
 */
const titleOf = (a: Alert) => a.group.title ?? a.group.message;

function summary(a: Alert): string {
  if (a.kind === "frequency" && a.rule?.threshold_count) {
    return `${a.group.window_count ?? a.rule.threshold_count} occurrences in the last ${a.rule.window_minutes} min (threshold ${a.rule.threshold_count})`;
  }
  if (a.kind === "regression") return "A resolved issue occurred again.";
  if (a.kind === "new_group") return "First occurrence of a new issue.";
  return "This is a test alert from Roblox Monitor; the channel works.";
}

/**
 * Discord Markdown: every punctuation character that can start formatting, a masked link
 * (`[text](url)`), a mention (`@everyone`, `<@&role>`), a heading, a quote or a list is escaped with a
 * backslash, which Discord removes when it renders. So user text shows as typed and a message such as
 * `[click me](https://evil.example)` cannot become a link whose target is hidden.
 * Text is escaped before it is cut (a cut after a backslash leaves it escaping the ellipsis).
 */
export const escapeDiscord = (s: string) => s.replace(/[\\`*_~|<>[\]()#@:!\-+=.{}]/g, "\\$&");
const dcut = (s: string, max: number) => cut(escapeDiscord(s), max);

export function discordPayload(a: Alert) {
  const title = cut(`${HEADLINE[a.kind]} in ${escapeDiscord(a.project.name)}: ${escapeDiscord(titleOf(a).split("\n")[0])}`, DISCORD.title);
  const fields = [
    { name: "Level", value: a.group.level, inline: true },
    { name: "Environment", value: dcut(a.group.environment, 200), inline: true },
    { name: "Occurrences", value: String(a.group.count), inline: true },
    ...(a.group.culprit ? [{ name: "Culprit", value: dcut(a.group.culprit, 500), inline: false }] : []),
    ...(a.rule ? [{ name: "Rule", value: dcut(a.rule.name, 200), inline: true }] : []),
    ...(a.group.assignee ? [{ name: "Assignee", value: dcut(a.group.assignee, 320), inline: true }] : []),
  ];
  const footer = { text: cut(`fingerprint ${a.group.fingerprint}`, 200) };
  const fixed = len(title) + len(footer.text) + fields.reduce((n, f) => n + len(f.name) + len(f.value), 0);
  // what is left of the 6,000-character total goes to the description; the stack trace gets what
  // the message leaves. Backtick fences in user text would break the code block, so they are bent.
  const budget = Math.min(DISCORD.description, DISCORD.total - fixed - 16);
  // (inside a code block Markdown is not rendered, so the stack trace needs only that)
  const safe = (s: string) => s.replace(/```/g, "ʼʼʼ");
  const head = `${summary(a)}\n\n${escapeDiscord(titleOf(a))}`;
  // a long message must not starve the stack trace: with a trace, the message gets at most 1,500
  let description = cut(head, a.group.stack_trace ? Math.min(budget, 1500) : budget);
  if (a.group.stack_trace && len(description) + 20 < budget) {
    const room = budget - len(description) - 10; // "\n```\n" + "\n```"
    description += `\n\`\`\`\n${cut(safe(a.group.stack_trace), room)}\n\`\`\``;
  }
  return discordBody({ title, description, color: COLOR[a.group.level] ?? COLOR.error, fields, footer }, a.at, a.url);
}

type Embed = { title: string; description: string; color: number; fields: { name: string; value: string; inline: boolean }[]; footer: { text: string } };

/** One embed as Discord receives it, linking to the dashboard when there is a link. */
export function discordBody(embed: Embed, at: Date, url: string | null) {
  return {
    embeds: [{ ...embed, timestamp: at.toISOString(), ...(url ? { url } : {}) }],
    // never ping @everyone, roles or users named in an error message or a player's name
    allowed_mentions: { parse: [] as string[] },
  };
}

/** Slack mrkdwn: &, < and > must be escaped or they turn into links and mentions. */
export const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** One named figure of an alert that is told as facts (economy and health alerts). */
export type Fact = { name: string; value: string; inline: boolean };

/**
 * A Discord body for an alert told as a title (already escaped and cut), a description, facts and a
 * footer: the facts' values cut to 500 characters, the description to what the 6,000-character embed
 * leaves, with the dashboard link when there is one.
 */
export function factsDiscordBody(p: { title: string; description: string; facts: Fact[]; footer: string; color: number; at: Date; url: string | null }) {
  const fields = p.facts.map((f) => ({ name: cut(f.name, DISCORD.fieldName), value: cut(escapeDiscord(f.value), 500), inline: f.inline }));
  const footer = { text: cut(`${p.footer}${p.url ? "" : " • set PUBLIC_URL for a link to the dashboard"}`, 200) };
  const fixed = len(p.title) + len(footer.text) + fields.reduce((n, f) => n + len(f.name) + len(f.value), 0);
  const text = p.url ? `${escapeDiscord(p.description)}\n\n[Open in Roblox Monitor](${p.url})` : escapeDiscord(p.description);
  const body = cut(text, Math.min(DISCORD.description, DISCORD.total - fixed - 16));
  return discordBody({ title: p.title, description: body, color: p.color, fields, footer }, p.at, p.url);
}

/** The Slack body of the same alert: a header, the description, the facts on one line, and a context line (already escaped). */
export function factsSlackBody(p: { headline: string; description: string; facts: Fact[]; context: string; emoji: boolean }) {
  const details = p.facts.map((f) => `*${esc(f.name)}:* ${esc(f.value)}`).join("  •  ");
  return {
    text: cut(esc(p.headline), 3000),
    blocks: [
      { type: "header", text: { type: "plain_text", text: cut(p.headline, 150), emoji: p.emoji } },
      { type: "section", text: { type: "mrkdwn", text: cut(esc(p.description), 3000) } },
      { type: "section", text: { type: "mrkdwn", text: cut(details, 3000) } },
      { type: "context", elements: [{ type: "mrkdwn", text: cut(p.context, 2000) }] },
    ],
  };
}

export function slackPayload(a: Alert) {
  const title = titleOf(a);
  const headline = `${HEADLINE[a.kind]} in ${a.project.name}: ${title.split("\n")[0]}`;
  const meta = `*Level:* ${a.group.level}  •  *Environment:* ${esc(a.group.environment)}  •  *Occurrences:* ${a.group.count}${a.rule ? `  •  *Rule:* ${esc(a.rule.name)}` : ""}${a.group.assignee ? `  •  *Assignee:* ${esc(a.group.assignee)}` : ""}`;
  const body = `${esc(summary(a))}\n${cut(esc(title), 1500)}`;
  const blocks: object[] = [
    { type: "header", text: { type: "plain_text", text: cut(headline, SLACK.header), emoji: false } },
    { type: "section", text: { type: "mrkdwn", text: cut(body, SLACK.section) } },
    { type: "section", text: { type: "mrkdwn", text: cut(meta, SLACK.section) } },
  ];
  if (a.group.stack_trace) {
    blocks.push({ type: "section", text: { type: "mrkdwn", text: "```" + cut(esc(a.group.stack_trace.replace(/```/g, "ʼʼʼ")), SLACK.section - 6) + "```" } });
  }
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: cut(`fingerprint ${a.group.fingerprint}${a.url ? ` • <${a.url}|open>` : ""}`, 2000) }],
  });
  return { text: cut(esc(headline), SLACK.text), blocks };
}

export function webhookPayload(a: Alert) {
  return {
    type: a.kind === "test" ? "test" : "alert",
    trigger: a.kind,
    project: a.project,
    rule: a.rule ? { id: a.rule.id, name: a.rule.name } : null,
    group: {
      id: a.group.id,
      fingerprint: a.group.fingerprint,
      message: a.group.message,
      title: titleOf(a),
      level: a.group.level,
      environment: a.group.environment,
      culprit: a.group.culprit,
      count: a.group.count,
      window_count: a.group.window_count ?? null,
      first_seen: a.group.first_seen.toISOString(),
      last_seen: a.group.last_seen.toISOString(),
      stack_trace: a.group.stack_trace,
      assignee: a.group.assignee ? { email: a.group.assignee } : null,
    },
    url: a.url,
    sent_at: a.at.toISOString(),
  };
}

/** Hex HMAC-SHA256 of `${timestamp}.${body}` under the channel's secret. */
export const signBody = (secret: string, timestamp: string, body: string) =>
  createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");

/**
 * The HTTP body and headers for one channel. Webhook receivers verify
 * `X-Signature: sha256=<hex HMAC-SHA256(secret, X-Timestamp + "." + raw body)>` and reject stale
 * `X-Timestamp`s (unix seconds).
 */
export function buildRequest(
  kind: ChannelKind,
  alert: Alert | EconomyAlert | HealthAlert,
  secret: string | null,
  now = () => Math.floor(Date.now() / 1000),
): { body: string; headers: Record<string, string> } {
  if ("health" in alert) return channelRequest(kind, alert.kind, healthDiscordPayload(alert), healthSlackPayload(alert), healthWebhookPayload(alert), secret, now);
  const economy = "event" in alert;
  if (kind === "discord") return { body: JSON.stringify(economy ? economyDiscordPayload(alert) : discordPayload(alert)), headers: {} };
  if (kind === "slack") return { body: JSON.stringify(economy ? economySlackPayload(alert) : slackPayload(alert)), headers: {} };
  const body = JSON.stringify(economy ? economyWebhookPayload(alert) : webhookPayload(alert));
  const timestamp = String(now());
  return {
    body,
    headers: {
      "x-timestamp": timestamp,
      "x-signature": `sha256=${signBody(secret ?? "", timestamp, body)}`,
      "x-alert-trigger": alert.kind,
    },
  };
}

/** buildRequest for builders already run (the health alerts'). */
function channelRequest(kind: ChannelKind, trigger: string, discord: object, slack: object, webhook: object, secret: string | null, now: () => number): { body: string; headers: Record<string, string> } {
  if (kind === "discord") return { body: JSON.stringify(discord), headers: {} };
  if (kind === "slack") return { body: JSON.stringify(slack), headers: {} };
  const body = JSON.stringify(webhook);
  const timestamp = String(now());
  return { body, headers: { "x-timestamp": timestamp, "x-signature": `sha256=${signBody(secret ?? "", timestamp, body)}`, "x-alert-trigger": trigger } };
}

/** What an email says about an issue alert (app/alerts/email-payloads.server.ts lays it out). */
export function issueEmailParts(a: Alert): EmailParts {
  const title = titleOf(a);
  return {
    headline: `${HEADLINE[a.kind]} in ${a.project.name}: ${title.split("\n")[0]}`,
    description: `${summary(a)}\n\n${title}`,
    facts: [
      { name: "Level", value: a.group.level, inline: true },
      { name: "Environment", value: a.group.environment, inline: true },
      { name: "Occurrences", value: String(a.group.count), inline: true },
      ...(a.group.culprit ? [{ name: "Culprit", value: a.group.culprit, inline: false }] : []),
      ...(a.rule ? [{ name: "Rule", value: a.rule.name, inline: true }] : []),
    ],
    code: a.group.stack_trace,
    footer: `fingerprint ${a.group.fingerprint}`,
    url: a.url,
  };
}

/** An alert told for email: a headline (the subject), a description, facts, an optional stack trace. */
export type EmailParts = { headline: string; description: string; facts: Fact[]; code?: string | null; footer: string; url: string | null };
