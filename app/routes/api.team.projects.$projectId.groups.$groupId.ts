import { json } from "~/http.server";
import { deleteGroup, updateGroupStatus } from "~/team/groups.server";
import { teamRoute } from "~/team/api.server";

/** PATCH {status} (any member), DELETE (owner/admin: the group and all its events and rollups). */
const route = teamRoute({
  PATCH: async ({ services, user, params, body }) =>
    json({ group: await updateGroupStatus(services.sql, user, params.projectId, params.groupId, await body()) }),
  DELETE: async ({ services, user, params }) => {
    await deleteGroup(services.sql, user, params.projectId, params.groupId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
