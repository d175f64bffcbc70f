import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { recordAudit } from "../../db/audit.js";
import { getGroup } from "../../db/errors.js";
import { countGroups, type GroupMatch } from "../../db/errors.js";
import { deleteGroup as dbDelete, setGroupStatus, setStatusWhere, type Snooze } from "../../db/groups.js";
import { parseOr400, asUuid } from "~/input.server";
import { conflict, notFound } from "~/http.server";
import { isoDateTime } from "~/text.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";
import { assigneeSchema, assignIssue } from "./collaboration.server";
import type { By } from "../../db/activity.js";

export const STATUSES = ["open", "resolved", "ignored"] as const;
export const statusSchema = z.enum(STATUSES, { error: "must be open, resolved or ignored" });
const count = (max: number) =>
  z.number({ error: "must be a whole number" }).int("must be a whole number").min(1, "must be at least 1").max(max, `must be at most ${max}`);
/** An ignore that ends by itself; any of the three ends it, whichever comes first. */
export const snoozeSchema = z
  .object({
    until: isoDateTime().optional(),
    minutes: count(525_600).optional(),
    occurrences: count(1_000_000_000).optional(),
    users: count(1_000_000_000).optional(),
  }, { error: "must be an object" })
  .strict()
  .refine((s) => s.until || s.minutes || s.occurrences || s.users, "needs until, minutes, occurrences or users")
  .refine((s) => !(s.until && s.minutes), "takes until or minutes, not both")
  .refine((s) => !s.until || Date.parse(s.until) > Date.now(), { message: "must end in the future", path: ["until"] });
const StatusBase = z.object({ status: statusSchema, snooze: snoozeSchema.optional() });
const snoozeOnlyIgnored = (v: { status: string; snooze?: unknown }) => !v.snooze || v.status === "ignored";
const SNOOZE_RULE = { message: "only goes with status ignored", path: ["snooze"] };
/** PATCH of one group: its status, its assignee, or both. */
export const GroupInput = z
  .object({ status: statusSchema.optional(), snooze: snoozeSchema.optional(), assignee_id: assigneeSchema.optional() })
  .refine((v) => v.status !== undefined || v.assignee_id !== undefined, { message: "is required (or assignee_id)", path: ["status"] })
  .refine((v) => !v.snooze || v.status === "ignored", SNOOZE_RULE);
export const BulkInput = StatusBase.extend({
  ids: z.array(z.uuid({ error: "must be a group id" }), { error: "is required" }).min(1, "must hold at least one id").max(100, "holds at most 100 ids"),
}).refine(snoozeOnlyIgnored, SNOOZE_RULE);
/** The issues-list filter, as the Team API takes it. */
export const filterSchema = z
  .object({
    status: statusSchema.optional(),
    level: z.enum(["error", "warn", "info"], { error: "must be error, warn or info" }).optional(),
    search: z.string({ error: "must be a string" }).max(200, "must be at most 200 characters").optional(),
    environment: z.string({ error: "must be a string" }).max(256, "must be at most 256 characters").optional(),
    regressed: z.boolean({ error: "must be true or false" }).optional(),
    new_in_version: z.string({ error: "must be a string" }).max(256, "must be at most 256 characters").optional(),
    /** "me", "none" or a member's user id */
    assignee: z.union([z.enum(["me", "none"]), z.uuid()], { error: "must be me, none or a user id" }).optional(),
    origin: z.enum(["client", "server"], { error: "must be client or server" }).optional(),
  }, { error: "must be an object" })
  .strict();
export const FilterBulkInput = StatusBase.extend({
  filter: filterSchema,
  /** answer the number matching without changing anything */
  dry_run: z.boolean({ error: "must be true or false" }).optional(),
  /** act only on groups that existed at this time (the time of the count the user confirmed) */
  as_of: isoDateTime().optional(),
}).refine(snoozeOnlyIgnored, SNOOZE_RULE);

export type FilterInput = z.input<typeof filterSchema>;

export const toMatch = (f: z.output<typeof filterSchema>, actor: Actor): GroupMatch => ({
  status: f.status,
  level: f.level,
  search: f.search || undefined,
  environment: f.environment || undefined,
  regressed: f.regressed || undefined,
  newInVersion: f.new_in_version || undefined,
  assignee: f.assignee === undefined ? undefined : f.assignee === "none" ? null : f.assignee === "me" ? actor.id : f.assignee.toLowerCase(),
  origin: f.origin,
});

export function snoozeOf(s: z.output<typeof snoozeSchema> | undefined): Snooze | undefined {
  if (!s) return undefined;
  const until = s.until ? new Date(s.until) : s.minutes ? new Date(Date.now() + s.minutes * 60_000) : undefined;
  return { until, occurrences: s.occurrences, users: s.users };
}

const noGroup = () => notFound("No error group with that id in this project.");

/**
 * Triage is every member's job: open, resolved (stamps resolved_at) or ignored, and who it is
 * assigned to (a member, or null). Both in one body change the assignee first.
 */
export async function updateGroupStatus(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { status, snooze, assignee_id } = parseOr400(GroupInput, input);
  if (assignee_id !== undefined) await assignIssue(sql, actor, projectId, groupIdParam, assignee_id);
  if (status === undefined) {
    const group = await getGroup(sql, projectId, asUuid(groupIdParam)!);
    if (!group) throw noGroup();
    return group;
  }
  return setStatusOf(sql, projectId, groupIdParam, status, snoozeOf(snooze), { actorId: actor.id });
}

/**
 * Shared with editor share links: the status change of one group, then the group as it now is. A group
 * merged into another has no status of its own (the issue it is in has the live one): 409, naming it.
 */
export async function setStatusOf(sql: Sql, projectId: string, groupIdParam: string | undefined, status: (typeof STATUSES)[number], snooze: Snooze | undefined, by: By) {
  const groupId = asUuid(groupIdParam);
  if (!groupId) throw noGroup();
  const changed = (await setGroupStatus(sql, projectId, [groupId], status, snooze, by)).length > 0;
  const group = await getGroup(sql, projectId, groupId);
  if (!group) throw noGroup();
  if (!changed && group.merged_into) {
    throw conflict(`This issue is merged into issue ${group.merged_into}: change that issue's status, or unmerge this one from it first.`);
  }
  return group;
}

/** Bulk triage; ids that are not visible groups of this project (merged into another) are skipped (the answer lists what changed). */
export async function bulkGroupStatus(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { ids, status, snooze } = parseOr400(BulkInput, input);
  const rows = await setGroupStatus(sql, projectId, [...new Set(ids.map((i) => i.toLowerCase()))], status, snoozeOf(snooze), { actorId: actor.id });
  return { updated: rows.length, ids: rows.map((r) => r.id).sort(), status };
}

/**
 * Triage of every group matching a filter, not only a page of them. A dry run answers how many match
 * and the time of that count; sending that time back as `as_of` limits the change to groups that
 * existed then, so the number confirmed is the number changed (minus any that left the filter since).
 */
export async function bulkGroupStatusByFilter(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { filter, status, snooze, dry_run, as_of } = parseOr400(FilterBulkInput, input);
  const asOf = as_of ? new Date(as_of) : new Date();
  const match = { ...toMatch(filter, actor), createdBefore: asOf };
  if (dry_run) return { matched: await countGroups(sql, projectId, match), as_of: asOf.toISOString(), status };
  const rows = await setStatusWhere(sql, projectId, match, status, snoozeOf(snooze), { actorId: actor.id });
  return { updated: rows.length, as_of: asOf.toISOString(), status };
}

/** Owners and admins: the group and all its rows, in one transaction. */
export async function deleteGroup(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "delete error groups");
  const groupId = asUuid(groupIdParam);
  if (!groupId || !(await dbDelete(sql, projectId, groupId))) throw noGroup();
  await recordAudit(sql, { projectId, actorId: actor.id, action: "issue.deleted", target: groupId });
}
