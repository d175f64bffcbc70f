import { json } from "~/http.server";
import { deleteThresholdFor, putThresholdFor } from "~/economy/threshold-settings.server";
import { teamRoute } from "~/team/api.server";

/**
 * PUT {factor?, min_amount?, off?}: the currency's override (a null or absent figure keeps the
 * learned one; a 400 naming each bad field and nothing written otherwise; 404 for a currency the map
 * lacks). DELETE: back to the learned threshold. Owner/admin; the answer is the currency's thresholds.
 */
const route = teamRoute({
  PUT: async ({ services, user, params, body }) =>
    json(await putThresholdFor(services.sql, services.config, user, params.projectId, params.currency, await body())),
  DELETE: async ({ services, user, params }) => json(await deleteThresholdFor(services.sql, services.config, user, params.projectId, params.currency)),
});
export const loader = route;
export const action = route;
