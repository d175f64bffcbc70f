import { json } from "~/http.server";
import { getMapFor, resetMapFor, saveMapFor } from "~/economy/map.server";
import { teamRoute } from "~/team/api.server";

/**
 * GET: the project's currency map, `{map, is_default, updated_at, warnings}` (every member; `warnings`:
 * whether the map would skip every profile, against the last pushed one). PUT (body: the map)
 * saves it, a 400 naming each bad field and nothing written otherwise; DELETE goes back to the seed's
 * map. Owner/admin. A change applies to the next push or scan: stored balances keep the map they were read with.
 */
const route = teamRoute({
  GET: async ({ services, user, params }) => json(await getMapFor(services.sql, user, params.projectId)),
  PUT: async ({ services, user, params, body }) => {
    const { saved: _, ...answer } = await saveMapFor(services.sql, user, params.projectId, await body());
    return json(answer);
  },
  DELETE: async ({ services, user, params }) => json(await resetMapFor(services.sql, user, params.projectId)),
});
export const loader = route;
export const action = route;
