import { json } from "~/http.server";
import { endSession } from "~/accounts/sessions.server";
import { teamRoute } from "~/team/api.server";

/** POST: deletes the session server-side and clears the cookie. */
const route = teamRoute({
  POST: async ({ services, request }) => json({ signed_out: true }, { headers: { "Set-Cookie": await endSession(services, request) } }),
}, { beforePasswordChange: true });
export const action = route;
export const loader = route;
