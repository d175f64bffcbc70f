import { json } from "~/http.server";
import { bulkGroupStatusByFilter } from "~/team/groups.server";
import { teamRoute } from "~/team/api.server";

/**
 * POST {filter, status, snooze?, dry_run?, as_of?}: triage of every issue matching the filter.
 * A dry run answers {matched, as_of}; the change answers {updated, as_of, status}.
 */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await bulkGroupStatusByFilter(services.sql, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
