import type { Sql } from "../../db/client.js";
import {
  claimAlerts,
  groupsByFingerprint,
  insertDeliveries,
  latestStackTraces,
  listChannels,
  listEnabledRules,
  markRegressionsSeen,
  projectName,
  windowCounts,
  type AlertGroup,
  type ChannelRow,
  type NewDelivery,
  type RuleRow,
} from "../../db/alerts.js";
import { hit } from "../../db/rate-limits.js";
import { countAlertDelivery } from "../../db/metrics.js";
import type { Config } from "~/env.server";
import { matchesFilters, triggerHolds } from "./evaluate.server";
import { buildRequest, type Alert, type AlertKind } from "./payloads.server";
import type { EconomyAlert } from "./economy-payloads.server";
import type { HealthAlert } from "./health-payloads.server";
import { unseal } from "./seal.server";
import { issueTitle } from "~/errors/title.server";
import { sendWebhook, type SendResult } from "./send.server";
import { sendEmail } from "./email.server";
import { buildEmail } from "./email-payloads.server";
import { log } from "../../log/logger.js";

export type AlertDeps = { sql: Sql; config: Pick<Config, "appSecret" | "webhookAllowPrivate" | "publicUrl" | "smtpUrl" | "smtpFrom"> };
export type DispatchResult = { sent: number; failed: number };

/** Sends one alert through one channel's adapter (the only path to the network). */
export async function deliver(deps: AlertDeps, channel: ChannelRow, alert: Alert | EconomyAlert | HealthAlert): Promise<SendResult> {
  if (channel.kind === "email") {
    const { smtpUrl, smtpFrom } = deps.config;
    if (!smtpUrl || !smtpFrom) return { ok: false, status: null, error: "email is not configured on this server (SMTP_URL and SMTP_FROM)", attempts: 0 };
    return sendEmail(channel.recipients, buildEmail(alert), { smtpUrl, from: smtpFrom });
  }
  if (!channel.url_sealed) return { ok: false, status: null, error: "the channel has no URL", attempts: 0 };
  let url: string;
  let secret: string | null = null;
  try {
    url = unseal(deps.config.appSecret, channel.project_id, channel.url_sealed);
    if (channel.secret_sealed) secret = unseal(deps.config.appSecret, channel.project_id, channel.secret_sealed);
  } catch {
    return { ok: false, status: null, error: "the channel URL cannot be decrypted (APP_SECRET changed?); enter it again", attempts: 0 };
  }
  const { body, headers } = buildRequest(channel.kind, alert, secret);
  return sendWebhook({ url, body, headers }, { allowPrivate: deps.config.webhookAllowPrivate });
}

/** The group's dashboard page, when PUBLIC_URL says where the dashboard is. */
const groupUrl = (deps: AlertDeps, projectId: string, groupId: string) =>
  deps.config.publicUrl ? `${deps.config.publicUrl}/projects/${projectId}/issues/${groupId}` : null;

const toAlert = (kind: Alert["kind"], project: Alert["project"], rule: RuleRow | null, g: Omit<AlertGroup, "title"> & { title?: string | null }, stack: string | null, windowCount?: number, url: string | null = null): Alert => ({
  kind,
  project,
  rule: rule && { id: rule.id, name: rule.name, threshold_count: rule.threshold_count, window_minutes: rule.window_minutes },
  group: {
    id: g.id,
    fingerprint: g.fingerprint,
    message: g.message,
    title: g.title ?? issueTitle(g.message),
    level: g.level,
    environment: g.environment,
    culprit: g.culprit,
    count: g.count,
    first_seen: g.first_seen,
    last_seen: g.last_seen,
    stack_trace: stack,
    window_count: windowCount,
    assignee: g.assignee ?? null,
  },
  url,
  at: new Date(),
});

const PER_RULE = 5;
const RULE_BUDGET = 10;

/** One alert standing for many groups of one rule: their count and titles (its title is its message). */
function summaryGroup(groups: AlertGroup[]): AlertGroup & { title: string } {
  const first = groups[0];
  const lines = groups.slice(0, 20).map((g) => `• ${issueTitle(g.message).split("\n")[0].slice(0, 150)}`);
  const message = `${groups.length} more errors matched this rule\n${lines.join("\n")}${groups.length > 20 ? `\n… and ${groups.length - 20} more` : ""}`;
  return {
    ...first,
    id: first.id,
    fingerprint: `${groups.length} groups`,
    message,
    title: message,
    culprit: null,
    count: groups.reduce((n, g) => n + Number(g.count), 0),
  };
}

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

/**
 * Evaluates the project's enabled rules for the groups behind `fingerprints` and sends what fires.
 * The same verb serves POST /api/notifications/dispatch and the pg-boss job the ingest enqueues.
 * A send is claimed in SQL before it goes out, so two instances evaluating the same groups at
 * once send it once; every attempt is written to the delivery log.
 */
export async function dispatchAlerts(deps: AlertDeps, projectId: string, fingerprints: string[]): Promise<DispatchResult> {
  const { sql } = deps;
  const rules = await listEnabledRules(sql, projectId);
  if (rules.length === 0) return { sent: 0, failed: 0 };
  const groups = (await groupsByFingerprint(sql, projectId, [...new Set(fingerprints)])).filter((g) => g.status !== "ignored");
  if (groups.length === 0) return { sent: 0, failed: 0 };

  const counts = new Map<number, Map<string, number>>();
  for (const r of rules) {
    if (r.trigger === "frequency" && r.window_minutes && !counts.has(r.window_minutes)) {
      counts.set(r.window_minutes, await windowCounts(sql, projectId, groups.map((g) => g.id), r.window_minutes));
    }
  }

  const fired: { rule: RuleRow; group: AlertGroup; windowCount?: number }[] = [];
  for (const rule of rules) {
    const window = rule.window_minutes ? counts.get(rule.window_minutes) : undefined;
    const candidates = groups.filter((g) => matchesFilters(rule, g) && triggerHolds(rule, g, window?.get(g.id)));
    const claimed = await claimAlerts(
      sql,
      projectId,
      rule,
      candidates.map((g) => ({ groupId: g.id, mark: rule.trigger === "regression" ? g.regressed_at : null })),
    );
    for (const g of candidates) if (claimed.has(g.id)) fired.push({ rule, group: g, windowCount: window?.get(g.id) });
    if (rule.trigger === "regression") {
      const missed = candidates.filter((g) => !claimed.has(g.id)).map((g) => ({ groupId: g.id, mark: g.regressed_at! }));
      await markRegressionsSeen(sql, projectId, rule.id, missed);
    }
  }
  if (fired.length === 0) return { sent: 0, failed: 0 };

  const channels = new Map((await listChannels(sql, projectId)).filter((c) => c.enabled).map((c) => [c.id, c]));
  const stacks = await latestStackTraces(sql, projectId, [...new Set(fired.map((f) => f.group.id))]);
  const project = { id: projectId, name: (await projectName(sql, projectId)) ?? "project" };

  const perRule = new Map<string, typeof fired>();
  for (const f of fired) perRule.set(f.rule.id, [...(perRule.get(f.rule.id) ?? []), f]);
  const alerts: Outgoing[] = [];
  for (const list of perRule.values()) {
    const rule = list[0].rule;
    alerts.push(
      ...(await withinBudget(
        sql,
        rule.id,
        list,
        (f) => ({ rule, groupId: f.group.id, alert: toAlert(rule.trigger as AlertKind, project, rule, f.group, stacks.get(f.group.id) ?? null, f.windowCount, groupUrl(deps, projectId, f.group.id)) }),
        (rest) => ({ rule, groupId: null, alert: toAlert(rule.trigger as AlertKind, project, rule, summaryGroup(rest.map((r) => r.group)), null) }),
      )),
    );
  }
  return sendAll(deps, projectId, channels, alerts);
}

/** One message to send: the rule it fires for, and the group or economy subject it is about. */
export type Outgoing = { rule: RuleRow; groupId?: string | null; subject?: string | null; alert: Alert | EconomyAlert | HealthAlert };

/**
 * A burst (a bad deploy, a dupe spreading through a server) must not become a flood of pings: per
 * rule and pass, at most PER_RULE messages (the last one a summary of the rest), and per rule at most
 * RULE_BUDGET messages a minute across passes and instances (a shared fixed-window counter). Past the
 * budget the subjects stay claimed and are only counted in the server log.
 */
export async function withinBudget<T>(sql: Sql, ruleId: string, list: T[], one: (t: T) => Outgoing, summary: (rest: T[]) => Outgoing): Promise<Outgoing[]> {
  const out: Outgoing[] = [];
  const slots = Math.min(list.length, PER_RULE);
  for (let i = 0; i < slots; i++) {
    if ((await hit(sql, `alerts:rule:${ruleId}`, 60)).count > RULE_BUDGET) {
      log.warn(`[alerts] rule ${ruleId}: over ${RULE_BUDGET} messages this minute; ${list.length - i} subject(s) not alerted`);
      break;
    }
    out.push(i === PER_RULE - 1 && list.length > PER_RULE ? summary(list.slice(i)) : one(list[i]));
  }
  return out;
}

/** Sends each message through each enabled channel of its rule, and writes every attempt to the delivery log. */
export async function sendAll(deps: AlertDeps, projectId: string, channels: Map<string, ChannelRow>, alerts: Outgoing[]): Promise<DispatchResult> {
  const jobs = alerts.flatMap((a) => a.rule.channel_ids.filter((id) => channels.has(id)).map((id) => ({ ...a, channel: channels.get(id)! })));
  const log: NewDelivery[] = await pool(jobs, 8, async (j) => {
    const r = await deliver(deps, j.channel, j.alert);
    countAlertDelivery(j.channel.kind, r.ok);
    return {
      projectId,
      ruleId: j.rule.id,
      channelId: j.channel.id,
      groupId: j.groupId ?? null,
      subject: j.subject ?? null,
      trigger: j.rule.trigger,
      status: r.ok ? "sent" : "failed",
      responseCode: r.status,
      error: r.error,
      attempts: r.attempts,
    };
  });
  await insertDeliveries(deps.sql, log);
  const sent = log.filter((d) => d.status === "sent").length;
  return { sent, failed: log.length - sent };
}

/** A synthetic alert through one channel, logged like any other delivery. */
export async function sendTestAlert(deps: AlertDeps, channel: ChannelRow): Promise<SendResult> {
  const project = { id: channel.project_id, name: (await projectName(deps.sql, channel.project_id)) ?? "project" };
  const now = new Date();
  const alert = toAlert("test", project, null, {
    id: "00000000-0000-0000-0000-000000000000",
    fingerprint: "test",
    message: "Test alert: if you can read this, the channel works.",
    level: "info",
    status: "open",
    environment: "test",
    culprit: null,
    count: 1,
    user_count: 0,
    client_only: false,
    first_seen: now,
    last_seen: now,
    created_at: now,
    regressed_at: null,
    assignee: null,
  }, null);
  const r = await deliver(deps, channel, alert);
  countAlertDelivery(channel.kind, r.ok);
  await insertDeliveries(deps.sql, [
    {
      projectId: channel.project_id,
      ruleId: null,
      channelId: channel.id,
      groupId: null,
      trigger: "test",
      status: r.ok ? "sent" : "failed",
      responseCode: r.status,
      error: r.error,
      attempts: r.attempts,
    },
  ]);
  return r;
}
