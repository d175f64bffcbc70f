import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { applyGroupingRule } from "~/team/grouping-rules.server";

/** POST: applies the saved rule to the issues its matches are in (group: merge; ignore: set ignored). Owner/admin. */
const route = teamRoute({
  POST: async ({ services, user, params }) => json(await applyGroupingRule(services, user, params.projectId, params.ruleId)),
});
export const loader = route;
export const action = route;
