import { z } from "zod";
import { countChannels, deleteRule, getRule, insertRule, listRules, replaceRule, type RuleFields, type RuleRow } from "../../db/alerts.js";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";
import type { Sql } from "../../db/client.js";
import type { AlertEnqueuer } from "./enqueue.server";
import { parseOr400, asUuid } from "~/input.server";
import { invalidPayload, notFound } from "~/http.server";

/** Rules: when to alert. Owner/admin only; a change is seen by this instance's ingest trigger at once. */

const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID").transform((s) => s.toLowerCase());

const Fields = {
  name: z.string().trim().min(1, "must not be empty").max(100, "must be at most 100 characters"),
  trigger: z.enum(["new_group", "regression", "frequency"], { error: "must be new_group, regression or frequency" }),
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
};

const FullRule = z
  .object(Fields)
  .refine((r) => r.trigger !== "frequency" || (r.threshold_count !== null && r.window_minutes !== null), {
    message: "a frequency rule needs threshold_count and window_minutes",
    path: ["threshold_count"],
  });

const RuleInput = z.object({
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
});
const RulePatch = z.object(Fields).partial().strict();

export const publicRule = ({ project_id: _p, ...r }: RuleRow) => r;

const fieldsOf = (r: RuleRow): RuleFields => ({
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
});

/**
 * What changing a project's rules or channels needs: the database, and the ingest's alert trigger,
 * which caches per project whether to look at its groups at all and must look again.
 */
export type AlertSetupDeps = { sql: Sql; alerts: Pick<AlertEnqueuer, "forget"> };

async function validated(deps: { sql: Sql }, projectId: string, merged: unknown): Promise<RuleFields> {
  const r = parseOr400(FullRule, merged);
  const ids = [...new Set(r.channel_ids)];
  if ((await countChannels(deps.sql, projectId, ids)) !== ids.length) {
    throw invalidPayload("channel_ids names a channel that is not in this project.", [{ path: "channel_ids", message: "unknown channel id" }]);
  }
  // thresholds only mean something for frequency rules
  const frequency = r.trigger === "frequency";
  return { ...r, channel_ids: ids, threshold_count: frequency ? r.threshold_count : null, window_minutes: frequency ? r.window_minutes : null };
}

export async function listProjectRules(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see alert rules");
  return (await listRules(deps.sql, projectId)).map(publicRule);
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
    ...r,
  });
  const row = await insertRule(deps.sql, projectId, fields);
  deps.alerts.forget(projectId);
  return { rule: publicRule(row) };
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
  deps.alerts.forget(projectId);
  return { rule: publicRule(row) };
}

export async function removeRule(deps: AlertSetupDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "delete alert rules");
  const id = asUuid(idParam);
  if (!id || !(await deleteRule(deps.sql, projectId, id))) throw notFound("No alert rule with that id in this project.");
  deps.alerts.forget(projectId);
}
