import { json } from "~/http.server";
import { revokeKey } from "~/team/keys.server";
import { teamRoute } from "~/team/api.server";

/** DELETE: revokes the key at once on every instance. Owner/admin. */
const route = teamRoute({
  DELETE: async ({ services, user, params }) => {
    await revokeKey(services.sql, user, params.projectId, params.keyId);
    return json({ revoked: true });
  },
});
export const loader = route;
export const action = route;
