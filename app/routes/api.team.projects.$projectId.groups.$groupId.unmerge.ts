import { json } from "~/http.server";
import { unmergeIssues } from "~/team/merge.server";
import { teamRoute } from "~/team/api.server";

/** POST {ids}: splits those merged issues back out; answers {group, unmerged}. */
const route = teamRoute({
  POST: async ({ services, user, params, body }) =>
    json(await unmergeIssues(services.sql, user, params.projectId, params.groupId, await body())),
});
export const loader = route;
export const action = route;
