import { json } from "~/http.server";
import { addMember, listMembers } from "~/team/members.server";
import { teamRoute } from "~/team/api.server";

/** GET: members (any member). POST {email, role}: add a teammate (owner/admin; only owners grant owner). */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await listMembers(services.sql, user, params.projectId) }),
  POST: async ({ services, user, params, body }) => json(await addMember(services.sql, user, params.projectId, await body()), 201),
});
export const loader = route;
export const action = route;
