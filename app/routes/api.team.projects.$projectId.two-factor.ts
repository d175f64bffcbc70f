import { json } from "~/http.server";
import { getRequirementFor, setRequirementFor } from "~/team/two-factor.server";
import { teamRoute } from "~/team/api.server";

/** GET (any member), PUT {two_factor_required: off | owners_admins | everyone} (owner/admin): the project's two-factor requirement. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await getRequirementFor(services.sql, user, params.projectId)),
  PUT: async ({ services, user, params, body }) => json(await setRequirementFor(services.sql, user, params.projectId, await body())),
});
export const loader = route;
export const action = route;
