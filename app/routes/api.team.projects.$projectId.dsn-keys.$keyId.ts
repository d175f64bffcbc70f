import { json } from "~/http.server";
import { revokeDsnKeyFor } from "~/team/dsn-keys.server";
import { teamRoute } from "~/team/api.server";

/** DELETE: revokes the DSN key at once on every instance. Owner/admin. */
const route = teamRoute({
  DELETE: async ({ services, user, params }) => {
    await revokeDsnKeyFor(services.sql, user, params.projectId, params.keyId);
    return json({ revoked: true });
  },
});
export const loader = route;
export const action = route;
