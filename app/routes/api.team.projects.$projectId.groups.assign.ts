import { json } from "~/http.server";
import { bulkAssign } from "~/team/collaboration.server";
import { teamRoute } from "~/team/api.server";

/** POST {ids (1..100), assignee_id (a member's user id, or null)}: bulk assignment; answers {updated, ids, assignee_id}. */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await bulkAssign(services.sql, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
