import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getGroup } from "../../db/errors.js";
import { deleteGroup as dbDelete, setGroupStatus } from "../../db/groups.js";
import { asUuid } from "~/errors/params.server";
import { notFound } from "~/http.server";
import { parseOr400 } from "~/accounts/users.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

export const STATUSES = ["open", "resolved", "ignored"] as const;
export const statusSchema = z.enum(STATUSES, { error: "must be open, resolved or ignored" });
const StatusInput = z.object({ status: statusSchema });
const BulkInput = z.object({
  ids: z.array(z.uuid({ error: "must be a group id" }), { error: "is required" }).min(1, "must hold at least one id").max(100, "holds at most 100 ids"),
  status: statusSchema,
});

const noGroup = () => notFound("No error group with that id in this project.");

/** Triage is every member's job: open, resolved (stamps resolved_at) or ignored. */
export async function updateGroupStatus(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { status } = parseOr400(StatusInput, input);
  return setStatusOf(sql, projectId, groupIdParam, status);
}

/** Shared with editor share links: the status change of one group, then the group as it now is. */
export async function setStatusOf(sql: Sql, projectId: string, groupIdParam: string | undefined, status: (typeof STATUSES)[number]) {
  const groupId = asUuid(groupIdParam);
  if (!groupId || (await setGroupStatus(sql, projectId, [groupId], status)).length === 0) throw noGroup();
  const group = await getGroup(sql, projectId, groupId);
  if (!group) throw noGroup();
  return group;
}

/** Bulk triage; ids that are not groups of this project are skipped (the answer lists what changed). */
export async function bulkGroupStatus(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { ids, status } = parseOr400(BulkInput, input);
  const rows = await setGroupStatus(sql, projectId, [...new Set(ids.map((i) => i.toLowerCase()))], status);
  return { updated: rows.length, ids: rows.map((r) => r.id).sort(), status };
}

/** Owners and admins: the group and all its rows, in one transaction. */
export async function deleteGroup(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "delete error groups");
  const groupId = asUuid(groupIdParam);
  if (!groupId || !(await dbDelete(sql, projectId, groupId))) throw noGroup();
}
