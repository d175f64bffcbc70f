import { json } from "~/http.server";
import { mergeIssues } from "~/team/merge.server";
import { teamRoute } from "~/team/api.server";

/** POST {ids (1..100), target_id?}: merges the issues into one; answers {group, merged}. */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await mergeIssues(services.sql, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
