import { json } from "~/http.server";
import { bulkGroupStatus } from "~/team/groups.server";
import { teamRoute } from "~/team/api.server";

/** POST {ids (1..100), status}: bulk triage; answers {updated, ids, status}. */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await bulkGroupStatus(services.sql, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
