import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import {
  aliasFingerprint,
  deleteRule,
  getRule,
  insertRule,
  issueOf,
  issueSummaries,
  latestEvents,
  listRules,
  reorderRules,
  titleRuleIssue,
  TooManyRules,
  updateRule,
  type RuleRow,
} from "../../db/grouping-rules.js";
import { recordAudit } from "../../db/audit.js";
import { mergeGroups, MergeRefused } from "../../db/merge.js";
import { setGroupStatus } from "../../db/groups.js";
import { asUuid, parseOr400 } from "~/input.server";
import { conflict, invalidPayload, notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";
import { issueTitle } from "~/errors/title.server";
import { compileRule, MAX_RULES, ProjectRules, ruleFingerprint, RuleInput, RulePatch, type CompiledRule, type GroupingRuleCache } from "~/ingest/rules.server";

/**
 * The Team API's grouping rules: list, create, edit (and move), delete, reorder, preview an unsaved
 * rule against the latest stored events, and apply a saved one to the issues it covers. Owners and
 * admins write; every member reads and previews. A change is seen by this instance's ingest at once
 * (the cache forgets the project) and by other instances within the cache's TTL.
 */

/** How many of the project's latest stored events a preview or an apply looks at. */
export const PREVIEW_EVENTS = 1000;

export type GroupingRuleDeps = { sql: Sql; groupingRules: Pick<GroupingRuleCache, "forget"> };

export const publicRule = (r: RuleRow) => ({
  id: r.id,
  position: r.position,
  name: r.name,
  match: r.match,
  action: r.action,
  hits: r.hits,
  hits_today: r.hits_today,
  last_hit_at: r.last_hit_at,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const noRule = () => notFound("No grouping rule with that id in this project.");

/** The rule's regex compiled (a 400 naming `match.message_regex` with RE2's reason otherwise). */
const checked = (r: { id: string; action: "group" | "ignore"; name: string | null; match: RuleRow["match"] }) => compileRule(r, "match.message_regex");

export async function listGroupingRules(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see grouping rules");
  return { data: (await listRules(deps.sql, projectId)).map(publicRule), max: MAX_RULES };
}

async function ruleIn(sql: Sql, projectId: string, idParam: string | undefined): Promise<RuleRow> {
  const id = asUuid(idParam);
  const r = id ? await getRule(sql, projectId, id) : undefined;
  if (!r) throw noRule();
  return r;
}

export async function getGroupingRule(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "see grouping rules");
  const rule = await ruleIn(deps.sql, projectId, idParam);
  const issueId = rule.action === "group" ? ((await issueOf(deps.sql, projectId, rule.fingerprint)) ?? null) : null;
  return { rule: { ...publicRule(rule), issue_id: issueId } };
}

const tooMany = () =>
  conflict(`A project holds at most ${MAX_RULES} grouping rules; delete or combine rules (one regex can cover several texts) before adding another.`);

export async function createGroupingRule(deps: GroupingRuleDeps, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "create grouping rules");
  const r = parseOr400(RuleInput, input);
  const id = randomUUID();
  const name = r.name ?? null;
  checked({ id, action: r.action, name, match: r.match });
  try {
    const row = await insertRule(deps.sql, projectId, { id, name, match: r.match, action: r.action, fingerprint: ruleFingerprint(id), position: r.position }, MAX_RULES);
    deps.groupingRules.forget(projectId);
    await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "grouping_rule.created", target: row.id, details: { name: row.name, action: row.action, match: row.match } });
    return { rule: publicRule(row) };
  } catch (err) {
    if (err instanceof TooManyRules) throw tooMany();
    throw err;
  }
}

export async function editGroupingRule(deps: GroupingRuleDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "edit grouping rules");
  const current = await ruleIn(deps.sql, projectId, idParam);
  const patch = parseOr400(RulePatch, input);
  const next = { name: patch.name === undefined ? current.name : patch.name, match: patch.match ?? current.match, action: patch.action ?? current.action };
  checked({ id: current.id, ...next });
  const row = await updateRule(deps.sql, projectId, current.id, { ...next, position: patch.position });
  if (!row) throw noRule();
  deps.groupingRules.forget(projectId);
  await recordAudit(deps.sql, {
    projectId, actorId: actor.id, action: "grouping_rule.changed", target: row.id,
    details: { name: row.name, action: row.action, match: row.match, ...(patch.position !== undefined ? { position: row.position } : {}) },
  });
  if (row.action === "group" && row.name !== current.name) await titleRuleIssue(deps.sql, projectId, row.fingerprint, row.name);
  return { rule: publicRule(row) };
}

export async function removeGroupingRule(deps: GroupingRuleDeps, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "delete grouping rules");
  const id = asUuid(idParam);
  const current = id ? await ruleIn(deps.sql, projectId, id) : undefined;
  if (!id || !(await deleteRule(deps.sql, projectId, id))) throw noRule();
  deps.groupingRules.forget(projectId);
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "grouping_rule.deleted", target: id, details: { name: current?.name ?? null, action: current?.action ?? null } });
}

export const OrderInput = z
  .object({ order: z.array(z.uuid({ error: "must be a rule id" }).transform((s) => s.toLowerCase()), { error: "must be an array of rule ids" }).max(MAX_RULES) })
  .strict();

/** PUT {order: [ids]}: the project's rules in this order; the list must name each rule once. */
export async function reorderGroupingRules(deps: GroupingRuleDeps, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "reorder grouping rules");
  const { order } = parseOr400(OrderInput, input);
  if (!(await reorderRules(deps.sql, projectId, order))) {
    throw invalidPayload("order must name every grouping rule of the project exactly once.", [{ path: "order", message: "must name every rule of the project exactly once" }]);
  }
  deps.groupingRules.forget(projectId);
  await recordAudit(deps.sql, { projectId, actorId: actor.id, action: "grouping_rule.reordered", target: null, details: { order } });
  return { data: (await listRules(deps.sql, projectId)).map(publicRule) };
}

/** Which of the latest stored events the rule matches, by the issue they are in (events per issue). */
async function coverage(sql: Sql, projectId: string, rule: CompiledRule) {
  const events = await latestEvents(sql, projectId, PREVIEW_EVENTS);
  const one = new ProjectRules([rule]);
  const perIssue = new Map<string, number>();
  let matched = 0;
  for (const e of events) {
    if (!one.match({ message: e.message, level: e.level, tags: e.tags, stackTrace: e.stack_trace, playerName: e.player_name })) continue;
    matched++;
    perIssue.set(e.group_id, (perIssue.get(e.group_id) ?? 0) + 1);
  }
  return { scanned: events.length, matched, perIssue };
}

const titleOf = (s: { title: string | null; message: string }) => s.title ?? issueTitle(s.message);

/**
 * An unsaved rule against the project's latest PREVIEW_EVENTS stored events: how many it matches, in
 * which issues, and what applying it would do (group: merge those issues into one; ignore: set them
 * ignored). The rule is looked at alone, as if it came first.
 */
export async function previewGroupingRule(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, EVERYONE, "preview grouping rules");
  const r = parseOr400(RuleInput, input);
  const rule = checked({ id: randomUUID(), action: r.action, name: r.name ?? null, match: r.match });
  const { scanned, matched, perIssue } = await coverage(deps.sql, projectId, rule);
  const issues = await issueSummaries(deps.sql, projectId, [...perIssue.keys()]);
  return {
    scanned,
    matched,
    action: r.action,
    issues: issues
      .map((s) => ({ id: s.id, title: titleOf(s), status: s.status, events: perIssue.get(s.id) ?? 0 }))
      .sort((a, b) => b.events - a.events || a.id.localeCompare(b.id)),
    // group: the oldest covered issue becomes the rule's and the others are merged into it
    would_merge: r.action === "group" ? Math.max(0, issues.length - 1) : 0,
    would_ignore: r.action === "ignore" ? issues.filter((s) => s.status !== "ignored").length : 0,
  };
}

/**
 * Applies a saved rule to the issues its matches among the latest stored events are in.
 * - group: merges them into the rule's issue (db/merge.ts, so counts stay exact and an unmerge gives
 *   each back); when the rule has no issue yet, the oldest covered issue becomes it and the rule's
 *   fingerprint is made an alias of it, so the rule's next events go there. An issue that already
 *   holds merged issues cannot be merged into another: it is left as it is and listed in `skipped`
 *   (unless it is the one that becomes the rule's issue).
 * - ignore: sets them ignored.
 */
export async function applyGroupingRule(deps: { sql: Sql }, actor: Actor, projectIdParam: string | undefined, idParam: string | undefined) {
  const { projectId } = await authorize(deps.sql, actor, projectIdParam, MANAGERS, "apply grouping rules");
  const row = await ruleIn(deps.sql, projectId, idParam);
  const rule = compileRule(row);
  const { scanned, matched, perIssue } = await coverage(deps.sql, projectId, rule);
  if (row.action === "ignore") {
    const changed = await setGroupStatus(deps.sql, projectId, [...perIssue.keys()], "ignored", undefined, { actorId: actor.id, via: "grouping_rule" });
    return { action: "ignore" as const, scanned, matched, ignored: (changed as { id: string }[]).map((g) => g.id).sort() };
  }
  const existing = await issueOf(deps.sql, projectId, row.fingerprint);
  const covered = await issueSummaries(deps.sql, projectId, [...new Set([...perIssue.keys(), ...(existing ? [existing] : [])])]);
  const target = existing ?? covered[0]?.id;
  if (!target) return { action: "group" as const, scanned, matched, issue: null, merged: [], skipped: [] };
  const sources = covered.filter((s) => s.id !== target);
  const skipped = sources.filter((s) => s.members > 0).map((s) => ({ id: s.id, reason: "holds merged issues; unmerge it first" }));
  const mergeable = sources.filter((s) => s.members === 0).map((s) => s.id);
  try {
    if (mergeable.length > 0) await mergeGroups(deps.sql, projectId, target, mergeable, { actorId: actor.id, via: "grouping_rule" });
  } catch (err) {
    if (err instanceof MergeRefused) throw conflict("The issues changed while the rule was applied (merged or deleted meanwhile); apply it again.");
    throw err;
  }
  if (!existing) await aliasFingerprint(deps.sql, projectId, row.fingerprint, target);
  if (row.name !== null) await titleRuleIssue(deps.sql, projectId, row.fingerprint, row.name);
  const [issue] = await issueSummaries(deps.sql, projectId, [target]);
  return {
    action: "group" as const,
    scanned,
    matched,
    issue: issue ? { id: issue.id, title: titleOf(issue), count: issue.count } : null,
    merged: mergeable.sort(),
    skipped,
  };
}
