import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { previewGroupingRule } from "~/team/grouping-rules.server";

/** POST {name?, match, action}: what the (unsaved) rule matches among the latest 1,000 stored events. Every member. */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await previewGroupingRule(services, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
