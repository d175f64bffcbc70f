import { json } from "~/http.server";
import { teamRoute } from "~/team/api.server";
import { listProjectDeliveries } from "~/alerts/deliveries.server";
import { queryOf } from "~/errors/params.server";

/** GET ?limit=&before=: the alert delivery log, newest first. Owner/admin. */
const route = teamRoute({
  GET: async ({ services, user, params, request }) =>
    json(await listProjectDeliveries(services, user, params.projectId, queryOf(request))),
});
export const loader = route;
export const action = route;
