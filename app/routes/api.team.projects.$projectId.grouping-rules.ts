import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { createGroupingRule, listGroupingRules, reorderGroupingRules } from "~/team/grouping-rules.server";

/**
 * GET: the project's grouping rules in order (every member); POST {name?, match, action, position?}
 * (owner/admin; 409 past 100 rules); PUT {order: [rule ids]} puts them in that order (owner/admin).
 */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await listGroupingRules(services, user, params.projectId)),
  POST: async ({ services, user, params, body }) => json(await createGroupingRule(services, user, params.projectId, await body()), 201),
  PUT: async ({ services, user, params, body }) => json(await reorderGroupingRules(services, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
