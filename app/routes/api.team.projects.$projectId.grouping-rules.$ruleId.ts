import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { editGroupingRule, getGroupingRule, removeGroupingRule } from "~/team/grouping-rules.server";

/** GET (every member); PATCH {name?, match?, action?, position?} and DELETE (owner/admin). */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await getGroupingRule(services, user, params.projectId, params.ruleId)),
  PATCH: async ({ services, user, params, body }) => json(await editGroupingRule(services, user, params.projectId, params.ruleId, await body())),
  DELETE: async ({ services, user, params }) => {
    await removeGroupingRule(services, user, params.projectId, params.ruleId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
