import { json } from "~/http.server";
import { previewMapFor } from "~/economy/map.server";
import { teamRoute } from "~/team/api.server";

/**
 * POST {map?, profile?}: reads a profile (pasted, else the project's last pushed one) through a map
 * (posted, else the saved one) without saving either; every member, a few times a minute (429). 400
 * when neither a profile is posted nor one has been pushed yet.
 */
const route = teamRoute({
  POST: async ({ services, user, params, body }) => json(await previewMapFor(services, user, params.projectId, body)),
});
export const loader = route;
export const action = route;
