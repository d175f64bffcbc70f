import { json } from "~/http.server";
import { getThresholdsFor } from "~/economy/threshold-settings.server";
import { teamRoute } from "~/team/api.server";

/**
 * GET: every currency's anomaly threshold, `{currencies: [{key, name, learned, override, effective}]}`
 * (every member). Overrides are set per currency at …/economy-thresholds/:currency.
 */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await getThresholdsFor(services.sql, services.config, user, params.projectId)),
});
export const loader = route;
export const action = route;
