import { json } from "~/http.server";
import { revokeDsnKeyFor, updateDsnKeyFor } from "~/team/dsn-keys.server";
import { baseUrl, teamRoute } from "~/team/api.server";

/**
 * PATCH {name?, rate_limit_per_minute?}: renames the key or changes its events-per-minute limit
 * (null: none), at once on every instance. DELETE: revokes it at once on every instance. Owner/admin.
 */
const route = teamRoute({
  PATCH: async ({ services, user, params, request, body }) =>
    json(await updateDsnKeyFor(services.sql, user, params.projectId, params.keyId, await body(), baseUrl(services, request))),
  DELETE: async ({ services, user, params }) => {
    await revokeDsnKeyFor(services.sql, user, params.projectId, params.keyId);
    return json({ revoked: true });
  },
});
export const loader = route;
export const action = route;
