import { json } from "~/http.server";
import { changeRole, removeMember } from "~/team/members.server";
import { teamRoute } from "~/team/api.server";

/** PATCH {role} (owner/admin), DELETE (owner/admin, or yourself to leave); the last owner stays. */
const route = teamRoute({
  PATCH: async ({ services, user, params, body }) =>
    json({ member: await changeRole(services.sql, user, params.projectId, params.userId, await body()) }),
  DELETE: async ({ services, user, params }) => {
    await removeMember(services.sql, user, params.projectId, params.userId);
    return json({ removed: true });
  },
});
export const loader = route;
export const action = route;
