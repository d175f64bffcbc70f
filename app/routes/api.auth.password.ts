import { json } from "~/http.server";
import { currentTokenHash } from "~/accounts/sessions.server";
import { changePassword } from "~/accounts/users.server";
import { teamRoute } from "~/team/api.server";

/** POST {current_password, new_password}: other sessions of the user are signed out. */
const route = teamRoute({
  POST: async ({ services, user, request, body }) => {
    await changePassword(services.sql, user, currentTokenHash(request), await body());
    return json({ changed: true });
  },
}, { beforePasswordChange: true });
export const action = route;
export const loader = route;
