import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { createRule, listProjectRules } from "~/alerts/rules.server";

/** GET: the project's alert rules; POST {name, trigger, channel_ids, ...}. Owner/admin. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await listProjectRules(services, user, params.projectId) }),
  POST: async ({ services, user, params, body }) => json(await createRule(services, user, params.projectId, await body()), 201),
});
export const loader = route;
export const action = route;
