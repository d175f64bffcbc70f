import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { editRule, removeRule } from "~/alerts/rules.server";

/** PATCH (any rule fields; the result is validated whole); DELETE. Owner/admin. */
const route = teamRoute({
  PATCH: async ({ services, user, params, body }) => json(await editRule(services, user, params.projectId, params.ruleId, await body())),
  DELETE: async ({ services, user, params }) => {
    await removeRule(services, user, params.projectId, params.ruleId);
    return json({ deleted: true });
  },
});
export const loader = route;
export const action = route;
