import type { Sql } from "../../db/client.js";
import { listMembers } from "../../db/members.js";
import { getGroup } from "../../db/errors.js";
import { addComment, editComment, issueTimeline, removeComment, bulkAssign } from "~/team/collaboration.server";
import { updateGroupStatus } from "~/team/groups.server";
import { readMyNotices } from "~/team/notices.server";
import { authorize, EVERYONE, type Actor } from "~/team/access.server";
import { asUuid } from "~/input.server";
import { notFound } from "~/http.server";
import { plural } from "~/components/format";

/** What the issue page shows of assignment and activity: the assignee, who can be assigned, the timeline. */
export async function issueCollaboration(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  // a malformed id is never sent with the reads beside it (it would fail their connection's pipeline)
  if (!groupId) throw notFound("No error group with that id in this project.");
  const [timeline, members, group] = await Promise.all([
    issueTimeline(sql, actor, projectId, groupId),
    listMembers(sql, projectId),
    getGroup(sql, projectId, groupId),
  ]);
  return {
    me: actor.id,
    assigneeId: group?.assignee_id ?? null,
    teammates: members.map((m) => ({ id: m.user_id, email: m.email })),
    timeline,
  };
}

/** Opening an issue reads its "Assigned to you" notices (on the primary: the page itself may read a replica). */
export const readIssueNotices = (sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) => {
  const projectId = asUuid(projectIdParam);
  const groupId = asUuid(groupIdParam);
  return projectId && groupId ? readMyNotices(sql, actor, { projectId, groupId }) : Promise.resolve(0);
};

const assigneeOf = (v: unknown) => (typeof v === "string" && v !== "" && v !== "none" ? v : null);

/**
 * The issue page's collaboration forms (intents assign, comment, comment-edit, comment-delete),
 * through the Team API's verbs; undefined for any other intent.
 */
export async function issueCollaborationAct(sql: Sql, actor: Actor, projectId: string | undefined, groupId: string | undefined, intent: string, form: Record<string, unknown>) {
  switch (intent) {
    case "assign": {
      const to = assigneeOf(form.assignee_id);
      await updateGroupStatus(sql, actor, projectId, groupId, { assignee_id: to });
      return { ok: true as const, intent, message: to ? "Assigned." : "Unassigned." };
    }
    case "comment":
      await addComment(sql, actor, projectId, groupId, { body: form.body });
      return { ok: true as const, intent, message: "Comment added." };
    case "comment-edit":
      await editComment(sql, actor, projectId, groupId, String(form.comment_id ?? ""), { body: form.body });
      return { ok: true as const, intent, message: "Comment saved." };
    case "comment-delete":
      await removeComment(sql, actor, projectId, groupId, String(form.comment_id ?? ""));
      return { ok: true as const, intent, message: "Comment deleted." };
    default:
      return undefined;
  }
}

/** The issues list's "Assign ticked" form. */
export async function listAssignAct(sql: Sql, actor: Actor, projectId: string | undefined, form: Record<string, unknown>) {
  const to = assigneeOf(form.assignee_id);
  const r = await bulkAssign(sql, actor, projectId, { ids: form.ids, assignee_id: to });
  return { ok: true as const, intent: "bulk", message: `${to ? "Assigned" : "Unassigned"} ${plural(r.updated, "issue")}.` };
}
