import type { Sql } from "../../db/client.js";
import { listMembers } from "../../db/members.js";
import { timelineOf, type TimelineGroup } from "../../db/activity.js";
import { addComment, editComment, removeComment, bulkAssign } from "~/team/collaboration.server";
import { updateGroupStatus } from "~/team/groups.server";
import { readMyNotices } from "~/team/notices.server";
import type { Actor } from "~/team/access.server";
import { asUuid } from "~/input.server";
import { plural } from "~/components/format";

/**
 * What the issue page shows of assignment and activity: the assignee, who can be assigned, the
 * timeline; of a group the page has already read, with the project's access checked (issueData).
 */
export async function issueCollaboration(sql: Sql, actor: Actor, projectId: string, group: TimelineGroup & { assignee_id: string | null }) {
  const [timeline, members] = await Promise.all([timelineOf(sql, projectId, group), listMembers(sql, projectId)]);
  return {
    me: actor.id,
    assigneeId: group.assignee_id,
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
