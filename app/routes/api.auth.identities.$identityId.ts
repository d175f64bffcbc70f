import { json } from "~/http.server";
import { unlinkIdentity } from "~/accounts/oidc.server";
import { teamRoute } from "~/team/api.server";

/** DELETE: unlinks one of the user's own identities (404 for anyone else's; 409 for the last way in). */
const route = teamRoute({
  DELETE: async ({ services, user, params }) => {
    await unlinkIdentity(services, user.id, params.identityId ?? "");
    return json({ unlinked: true });
  },
});
export const loader = route;
export const action = route;
