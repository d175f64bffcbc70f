import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getGroup, type GroupRow } from "../../db/errors.js";
import { assignGroups } from "../../db/assignment.js";
import { deleteComment, getComment, insertComment, listComments, updateComment } from "../../db/comments.js";
import { timelineOf } from "../../db/activity.js";
import { parseOr400, asUuid } from "~/input.server";
import { conflict, forbidden, invalidPayload, invalidQuery, notFound } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

/**
 * Assignment, comments and the activity timeline of an issue. Any member may assign and comment
 * (triage is every member's job); a comment is edited by its author only, and deleted by its author
 * or an owner or admin (moderation: a comment that should not be there can go without its author).
 */

/** The longest comment, in characters. */
export const COMMENT_MAX = 5000;

/** An assignee in a body: a member's user id, or null for nobody. */
export const assigneeSchema = z.uuid({ error: "must be a user id or null" }).transform((s) => s.toLowerCase()).nullable();

export const BulkAssignInput = z.object({
  ids: z.array(z.uuid({ error: "must be a group id" }), { error: "is required" }).min(1, "must hold at least one id").max(100, "holds at most 100 ids"),
  assignee_id: assigneeSchema.optional(),
}).refine((v) => v.assignee_id !== undefined, { message: "is required (a member's user id, or null to unassign)", path: ["assignee_id"] });

export const CommentInput = z.object({
  body: z
    .string({ error: "must be a string" })
    .transform((s) => s.trim())
    .pipe(z.string().min(1, "must not be empty").max(COMMENT_MAX, `must be at most ${COMMENT_MAX} characters`)),
});

const noGroup = () => notFound("No error group with that id in this project.");
const notMember = () => invalidPayload("The request body is invalid: assignee_id must be a member of this project.", [{ path: "assignee_id", message: "must be a member of this project" }]);

/**
 * Assigns groups (ids already checked) to a member or nobody, by the actor. A user who is not a
 * member of the project cannot be the assignee: 400, nothing changes.
 */
export async function assign(sql: Sql, actor: Actor, projectId: string, ids: string[], assigneeId: string | null) {
  const r = await assignGroups(sql, projectId, [...new Set(ids.map((i) => i.toLowerCase()))], assigneeId, { actorId: actor.id });
  if (!r.ok) throw notMember();
  return r.changed;
}

/** One issue's assignee (PATCH …/groups/:groupId {assignee_id}); a merged-away group has none of its own: 409. */
export async function assignIssue(sql: Sql, actor: Actor, projectId: string, groupIdParam: string | undefined, assigneeId: string | null) {
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!groupId || !group) throw noGroup();
  if (group.merged_into) {
    throw conflict(`This issue is merged into issue ${group.merged_into}: assign that issue, or unmerge this one from it first.`);
  }
  await assign(sql, actor, projectId, [groupId], assigneeId);
}

/** POST …/groups/assign {ids, assignee_id}: answers {updated, ids, assignee_id} (ids that changed; merged-away and unknown ids are skipped). */
export async function bulkAssign(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { ids, assignee_id } = parseOr400(BulkAssignInput, input);
  const changed = await assign(sql, actor, projectId, ids, assignee_id ?? null);
  return { updated: changed.length, ids: changed.map((c) => c.id).sort(), assignee_id: assignee_id ?? null };
}

/**
 * The assignee filter of a list: `me` (the signed-in user; `actor` null where there is none, as on
 * the API-key routes), `none`, or a user id. Undefined: no filter.
 */
export function assigneeFilter(raw: string | null | undefined, actor: Actor | null, param = "assignee"): string | null | undefined {
  const v = (raw ?? "").trim().toLowerCase();
  if (v === "") return undefined;
  if (v === "none") return null;
  if (v === "me") {
    if (!actor) throw invalidQuery(`${param} me needs a signed-in user; use a user id.`, [{ path: param, message: "me needs a signed-in user" }]);
    return actor.id;
  }
  const id = asUuid(v);
  if (!id) throw invalidQuery(`${param} must be me, none or a user id.`, [{ path: param, message: "must be me, none or a user id" }]);
  return id;
}

async function groupOf(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!groupId || !group) throw noGroup();
  return { projectId, groupId, role, group: group as unknown as GroupRow };
}

export async function issueComments(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId, groupId } = await groupOf(sql, actor, projectIdParam, groupIdParam);
  return listComments(sql, projectId, groupId);
}

export async function addComment(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, input: unknown) {
  const { projectId, groupId } = await groupOf(sql, actor, projectIdParam, groupIdParam);
  const { body } = parseOr400(CommentInput, input);
  const c = await insertComment(sql, projectId, groupId, actor.id, body);
  if (!c) throw noGroup();
  return c;
}

const noComment = () => notFound("No comment with that id on this issue.");

/** Only the author edits a comment: anyone else gets 403 (the comment exists for every member). */
export async function editComment(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, commentIdParam: string | undefined, input: unknown) {
  const { projectId, groupId } = await groupOf(sql, actor, projectIdParam, groupIdParam);
  const commentId = asUuid(commentIdParam);
  const current = commentId ? await getComment(sql, projectId, groupId, commentId) : undefined;
  if (!commentId || !current) throw noComment();
  if (current.author_id !== actor.id) throw forbidden("Only its author can edit a comment.");
  const { body } = parseOr400(CommentInput, input);
  const c = await updateComment(sql, projectId, groupId, commentId, actor.id, body);
  if (!c) throw noComment();
  return c;
}

/** The author deletes their comment; owners and admins delete anyone's; a member someone else's: 403. */
export async function removeComment(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, commentIdParam: string | undefined) {
  const { projectId, groupId, role } = await groupOf(sql, actor, projectIdParam, groupIdParam);
  const commentId = asUuid(commentIdParam);
  const current = commentId ? await getComment(sql, projectId, groupId, commentId) : undefined;
  if (!commentId || !current) throw noComment();
  const manager = MANAGERS.includes(role);
  if (!manager && current.author_id !== actor.id) throw forbidden("Only its author, an owner or an admin can delete a comment.");
  if (!(await deleteComment(sql, projectId, groupId, commentId, manager ? null : actor.id))) throw noComment();
}

/** GET …/groups/:groupId/activity: the issue's timeline, oldest first. */
export async function issueTimeline(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId, group } = await groupOf(sql, actor, projectIdParam, groupIdParam);
  return timelineOf(sql, projectId, group);
}
