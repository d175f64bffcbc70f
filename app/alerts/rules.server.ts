import { z } from "zod";
import { countChannels, deleteRule, getRule, insertRule, listChannels, listRules, replaceRule, type RuleFields, type RuleRow } from "../../db/alerts.js";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";
import { recordAudit } from "../../db/audit.js";
import type { Sql } from "../../db/client.js";
import type { AlertEnqueuer } from "./enqueue.server";
import type { EconomyAlertEnqueuer } from "./economy-enqueue.server";
import { parseOr400, asUuid } from "~/input.server";
import { invalidPayload, notFound } from "~/http.server";
import { loadMap } from "~/economy/map.server";
import { HEALTH_TRIGGER_LIST, isEconomyTrigger, isHealthTrigger } from "./triggers";

/** Rules: when to alert. Owner/admin only; a change is seen by this instance's ingest trigger at once. */

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID").transform((s) => s.toLowerCase());

/** An amount as the economy keeps them: a decimal string (or a plain number), at least 0, exact. */
const Amount = z
  .union([z.string().trim(), z.number().finite()], { error: "must be a decimal string or a number" })
  .transform((v) => (typeof v === "number" ? (Number.isInteger(v) ? BigInt(v).toString() : String(v)) : v))
  .refine((v) => /^\d{1,30}(\.\d{1,20})?$/.test(v), "must be a decimal amount of at least 0, e.g. \"100000\"");

const positive = (max: number) => z.number({ error: "must be a number" }).gt(0, "must be greater than 0").max(max, `must be at most ${max}`);
const percent = z.number({ error: "must be a number" }).gt(0, "must be greater than 0").max(100, "must be at most 100 (a percentage)");

const Fields = {
  name: z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters"),
  trigger: z.enum(["new_group", "regression", "frequency", "economy_anomaly", "supply_growth", ...HEALTH_TRIGGER_LIST], {
    error: `must be new_group, regression, frequency, economy_anomaly, supply_growth, ${HEALTH_TRIGGER_LIST.join(", ")}`,
  }),
  threshold_count: z.number().int().min(1).max(100_000_000).nullable(),
  window_minutes: z.number().int().min(1).max(1440).nullable(),
  levels: z.array(z.enum(["error", "warn", "info"], { error: "must be error, warn or info" })).max(3),
  environments: z.array(z.string().trim().min(1).max(100)).max(50),
  message_contains: z.string().trim().max(500).nullable().transform((s) => (s ? s : null)),
  channel_ids: z.array(uuid).min(1, "must name at least one channel").max(20),
  cooldown_minutes: z.number().int().min(0).max(10_080),
  enabled: z.boolean(),
  server_only: z.boolean(),
  min_players: z.number().int().min(0).max(1_000_000),
  currency: z.string().trim().min(1, "must not be empty").max(100).nullable(),
  min_amount: Amount.nullable(),
  growth_pct: z.number({ error: "must be a number" }).gt(0, "must be greater than 0").max(1_000_000).nullable(),
  // health triggers (migration 119)
  errors_per_1000: positive(1_000_000).nullable(),
  min_player_minutes: z.number({ error: "must be a whole number" }).int("must be a whole number").min(0).max(1_000_000_000).nullable(),
  error_free_pct: percent.nullable(),
  min_sessions: z.number({ error: "must be a whole number" }).int("must be a whole number").min(1, "must be at least 1").max(1_000_000_000).nullable(),
  memory_mb: positive(10_000_000).nullable(),
  heartbeat_ms: positive(10_000_000).nullable(),
  drop_pct: percent.nullable(),
  min_servers: z.number({ error: "must be a whole number" }).int("must be a whole number").min(1, "must be at least 1").max(1_000_000).nullable(),
};

/** What each health trigger needs (a 400 names the field when it is missing), and the defaults of the rest. */
const HEALTH_NEEDS: Record<string, { required: (keyof typeof Fields)[]; defaults: Partial<Record<keyof typeof Fields, number>>; uses: (keyof typeof Fields)[] }> = {
  error_rate: { required: ["errors_per_1000"], defaults: { window_minutes: 60, min_player_minutes: 100 }, uses: ["errors_per_1000", "window_minutes", "min_player_minutes"] },
  error_free_sessions: { required: ["error_free_pct"], defaults: { min_sessions: 50 }, uses: ["error_free_pct", "min_sessions"] },
  server_memory: { required: ["memory_mb"], defaults: { window_minutes: 5 }, uses: ["memory_mb", "window_minutes"] },
  server_heartbeat: { required: ["heartbeat_ms"], defaults: { window_minutes: 5 }, uses: ["heartbeat_ms", "window_minutes"] },
  out_of_memory: { required: [], defaults: { threshold_count: 1, window_minutes: 60 }, uses: ["threshold_count", "window_minutes"] },
  servers_drop: { required: ["drop_pct"], defaults: { min_servers: 3 }, uses: ["drop_pct", "min_servers"] },
};
const HEALTH_FIELDS = ["errors_per_1000", "min_player_minutes", "error_free_pct", "min_sessions", "memory_mb", "heartbeat_ms", "drop_pct", "min_servers"] as const;

const FullRule = z
  .object(Fields)
  .refine((r) => r.trigger !== "frequency" || (r.threshold_count !== null && r.window_minutes !== null), {
    message: "a frequency rule needs threshold_count and window_minutes",
    path: ["threshold_count"],
  })
  .refine((r) => r.trigger !== "supply_growth" || r.growth_pct !== null, {
    message: "a supply_growth rule needs growth_pct (a percentage greater than 0)",
    path: ["growth_pct"],
  })
  .superRefine((r, ctx) => {
    for (const f of HEALTH_NEEDS[r.trigger]?.required ?? []) {
      if (r[f] === null) ctx.addIssue({ code: "custom", path: [f], message: `a ${r.trigger} rule needs ${f}` });
    }
  });

export const RuleInput = z.object({
  name: Fields.name,
  trigger: Fields.trigger,
  threshold_count: Fields.threshold_count.optional(),
  window_minutes: Fields.window_minutes.optional(),
  levels: Fields.levels.optional(),
  environments: Fields.environments.optional(),
  message_contains: Fields.message_contains.optional(),
  channel_ids: Fields.channel_ids,
  cooldown_minutes: Fields.cooldown_minutes.optional(),
  enabled: Fields.enabled.optional(),
  server_only: Fields.server_only.optional(),
  min_players: Fields.min_players.optional(),
  currency: Fields.currency.optional(),
  min_amount: Fields.min_amount.optional(),
  growth_pct: Fields.growth_pct.optional(),
  errors_per_1000: Fields.errors_per_1000.optional(),
  min_player_minutes: Fields.min_player_minutes.optional(),
  error_free_pct: Fields.error_free_pct.optional(),
  min_sessions: Fields.min_sessions.optional(),
  memory_mb: Fields.memory_mb.optional(),
  heartbeat_ms: Fields.heartbeat_ms.optional(),
  drop_pct: Fields.drop_pct.optional(),
  min_servers: Fields.min_servers.optional(),
});
export const RulePatch = z.object(Fields).partial().strict();

/**
 * What a rule does now, derived from its own switch and its channels': `active` (enabled, and at
 * least one of its channels is enabled), `no_active_channel` (enabled, but every channel it sends to
 * is disabled or deleted: nothing goes out), or `disabled`.
 */
export type RuleState = "active" | "no_active_channel" | "disabled";
export const ruleState = (r: Pick<RuleRow, "enabled" | "channel_ids">, activeChannels: ReadonlySet<string>): RuleState =>
  !r.enabled ? "disabled" : r.channel_ids.some((id) => activeChannels.has(id)) ? "active" : "no_active_channel";

/** The project's enabled channels, which a rule's state is derived from. */
const activeChannelIds = async (sql: Sql, projectId: string) => new Set((await listChannels(sql, projectId)).filter((c) => c.enabled).map((c) => c.id));

/** The API's rule: min_amount stays a decimal string (amounts are exact), growth_pct is a number; `state` is derived. */
export const publicRule = ({ project_id: _p, ...r }: RuleRow, activeChannels: ReadonlySet<string>) => ({
  ...r,
  growth_pct: r.growth_pct === null ? null : Number(r.growth_pct),
  state: ruleState(r, activeChannels),
});

/** A stored rule as input again (what a patch is merged into). */
const fieldsOf = (r: RuleRow) => ({
  name: r.name,
  trigger: r.trigger,
  threshold_count: r.threshold_count,
  window_minutes: r.window_minutes,
  levels: r.levels,
  environments: r.environments,
  message_contains: r.message_contains,
  channel_ids: r.channel_ids,
  cooldown_minutes: r.cooldown_minutes,
  enabled: r.enabled,
  server_only: r.server_only,
  min_players: r.min_players,
  currency: r.currency,
  min_amount: r.min_amount,
  growth_pct: r.growth_pct === null ? null : Number(r.growth_pct),
  errors_per_1000: r.errors_per_1000,
  min_player_minutes: r.min_player_minutes,
  error_free_pct: r.error_free_pct,
  min_sessions: r.min_sessions,
  memory_mb: r.memory_mb,
  heartbeat_ms: r.heartbeat_ms,
  drop_pct: r.drop_pct,
  min_servers: r.min_servers,
});

/**
 * What changing a project's rules or channels needs: the database, and the ingest's alert trigger,
 * which caches per project whether to look at its groups at all and must look again.
 */
export type AlertSetupDeps = { sql: Sql; alerts: Pick<AlertEnqueuer, "forget">; economyAlerts?: Pick<EconomyAlertEnqueuer, "forget"> };

/** A health rule's unset thresholds take their trigger's defaults (before validation: a default is valid). */
function withHealthDefaults(merged: Record<string, unknown>): Record<string, unknown> {
  const needs = typeof merged.trigger === "string" ? HEALTH_NEEDS[merged.trigger] : undefined;
  if (!needs) return merged;
  const out = { ...merged };
  for (const [k, v] of Object.entries(needs.defaults)) if (out[k] === null || out[k] === undefined) out[k] = v;
  return out;
}

const noHealth = Object.fromEntries(HEALTH_FIELDS.map((f) => [f, null])) as { [K in (typeof HEALTH_FIELDS)[number]]: null };

async function validated(deps: { sql: Sql }, projectId: string, merged: Record<string, unknown>): Promise<RuleFields> {
  const r = parseOr400(FullRule, withHealthDefaults(merged));
  const ids = [...new Set(r.channel_ids)];
  if ((await countChannels(deps.sql, projectId, ids)) !== ids.length) {
    throw invalidPayload("channel_ids names a channel that is not in this project.", [{ path: "channel_ids", message: "unknown channel id" }]);
  }
  const base = { ...r, channel_ids: ids, growth_pct: r.growth_pct === null ? null : String(r.growth_pct) };
  if (isHealthTrigger(r.trigger)) {
    // only the trigger's own thresholds are kept, and of the error filters only the environments
    // (every health figure has one); each subject fires once and recovers once, and the cooldown is
    // how long after a recovery the same subject may fire again
    const uses = new Set<string>(HEALTH_NEEDS[r.trigger].uses);
    const keep = <K extends keyof typeof r>(k: K) => (uses.has(k as string) ? r[k] : null);
    return {
      ...base,
      ...noHealth,
      errors_per_1000: keep("errors_per_1000"),
      min_player_minutes: keep("min_player_minutes"),
      error_free_pct: keep("error_free_pct"),
      min_sessions: keep("min_sessions"),
      memory_mb: keep("memory_mb"),
      heartbeat_ms: keep("heartbeat_ms"),
      drop_pct: keep("drop_pct"),
      min_servers: keep("min_servers"),
      threshold_count: keep("threshold_count"),
      window_minutes: keep("window_minutes"),
      levels: [],
      message_contains: null,
      server_only: false,
      min_players: 0,
      currency: null,
      min_amount: null,
      growth_pct: null,
    };
  }
  if (!isEconomyTrigger(r.trigger)) {
    // thresholds only mean something for frequency rules, economy fields only for economy rules
    const frequency = r.trigger === "frequency";
    return {
      ...base,
      ...noHealth,
      threshold_count: frequency ? r.threshold_count : null,
      window_minutes: frequency ? r.window_minutes : null,
      currency: null,
      min_amount: null,
      growth_pct: null,
    };
  }
  // The error filters and thresholds do not apply to the economy: they are stored as their "no
  // filter" values, so a rule switched to an economy trigger keeps no filter that silently does
  // nothing. Each economy subject alerts once per rule, so there is no cooldown either.
  const growth = r.trigger === "supply_growth";
  return {
    ...base,
    ...noHealth,
    currency: r.currency === null ? null : await mapKey(deps, projectId, r.currency),
    min_amount: growth ? null : r.min_amount,
    growth_pct: growth ? base.growth_pct : null,
    threshold_count: null,
    window_minutes: null,
    levels: [],
    environments: [],
    message_contains: null,
    server_only: false,
    min_players: 0,
    cooldown_minutes: 0,
  };
}

/** The map's key for `currency` (case-insensitive); a 400 naming the valid keys otherwise. */
async function mapKey(deps: { sql: Sql }, projectId: string, currency: string): Promise<string> {
  const { map } = await loadMap(deps.sql, projectId);
  const key = map.currencies.find((c) => c.key.toLowerCase() === currency.toLowerCase())?.key;
  if (key) return key;
  const valid = map.currencies.map((c) => c.key);
  throw invalidPayload(`currency "${currency}" is not a currency of this project's map; use one of: ${valid.join(", ")} (or null for any).`, [
    { path: "currency", message: `must be one of ${valid.join(", ")}, or null` },
  ]);
}

const forget = (deps: AlertSetupDeps, projectId: string) => {
  deps.alerts.forget(projectId);
  deps.economyAlerts?.forget(projectId);
};

export async function listProjectRules(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see alert rules");
  const active = await activeChannelIds(deps.sql, projectId);
  return (await listRules(deps.sql, projectId)).map((r) => publicRule(r, active));
}

export async function createRule(deps: AlertSetupDeps, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "create alert rules");
  const r = parseOr400(RuleInput, input);
  const fields = await validated(deps, projectId, {
    threshold_count: null,
    window_minutes: null,
    levels: [],
    environments: [],
    message_contains: null,
    cooldown_minutes: 30,
    enabled: true,
    server_only: false,
    min_players: 0,
    currency: null,
    min_amount: null,
    growth_pct: null,
    ...noHealth,
    ...r,
  });
  const row = await insertRule(deps.sql, projectId, fields);
  forget(deps, projectId);
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "alert_rule.created", target: row.id, details: { name: row.name, trigger: row.trigger, enabled: row.enabled } });
  return { rule: publicRule(row, await activeChannelIds(deps.sql, projectId)) };
}

async function ruleIn(deps: { sql: Sql }, projectId: string, idParam: string | undefined): Promise<RuleRow> {
  const id = asUuid(idParam);
  const r = id ? await getRule(deps.sql, projectId, id) : undefined;
  if (!r) throw notFound("No alert rule with that id in this project.");
  return r;
}

export async function editRule(deps: AlertSetupDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "edit alert rules");
  const current = await ruleIn(deps, projectId, idParam);
  const patch = parseOr400(RulePatch, input);
  const fields = await validated(deps, projectId, { ...fieldsOf(current), ...patch });
  const row = await replaceRule(deps.sql, projectId, current.id, fields);
  if (!row) throw notFound("No alert rule with that id in this project.");
  forget(deps, projectId);
  await recordRuleChange(deps.sql, actor, current, row);
  return { rule: publicRule(row, await activeChannelIds(deps.sql, projectId)) };
}

export async function removeRule(deps: AlertSetupDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "delete alert rules");
  const id = asUuid(idParam);
  const current = id ? await getRule(deps.sql, projectId, id) : undefined;
  if (!id || !(await deleteRule(deps.sql, projectId, id))) throw notFound("No alert rule with that id in this project.");
  forget(deps, projectId);
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "alert_rule.deleted", target: id, details: { name: current?.name ?? null, trigger: current?.trigger ?? null } });
}

/** `alert_rule.enabled`/`disabled` when only that changed, else `alert_rule.changed` naming the fields that did. */
async function recordRuleChange(sql: Sql, actor: Actor, before: RuleRow, after: RuleRow) {
  const a = fieldsOf(before) as Record<string, unknown>;
  const b = fieldsOf(after) as Record<string, unknown>;
  const fields = Object.keys(b).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
  if (fields.length === 0) return;
  const action = fields.length === 1 && fields[0] === "enabled" ? (after.enabled ? "alert_rule.enabled" : "alert_rule.disabled") : "alert_rule.changed";
  await recordAudit(sql, { projectId: after.project_id, actorId: actor.id, action, target: after.id, details: { name: after.name, trigger: after.trigger, fields } });
}
