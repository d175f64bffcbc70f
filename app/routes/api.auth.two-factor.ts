import { json } from "~/http.server";
import { twoFactorStatus } from "~/accounts/two-factor.server";
import { teamRoute } from "~/team/api.server";

/** GET: whether the signed-in user has two-factor on (or an enrollment pending) and how many recovery codes are left. */
const route = teamRoute({
  GET: async ({ services, user }) => json(await twoFactorStatus(services.sql, user.id)),
});
export const loader = route;
export const action = route;
