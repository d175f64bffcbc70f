import { json } from "~/http.server";
import { signInMethods } from "~/accounts/oidc.server";
import { teamRoute } from "~/team/api.server";

/**
 * GET: the signed-in user's sign-in methods: the OIDC identities linked to the account, whether it
 * has a password of its own, and the providers configured here. Linking happens in a browser
 * (Account page → the provider), never through the API.
 */
const route = teamRoute({
  GET: async ({ services, user }) => json(await signInMethods(services, user.id)),
});
export const loader = route;
export const action = route;
