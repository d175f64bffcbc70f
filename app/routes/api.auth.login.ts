import type { ActionFunctionArgs } from "@remix-run/node";
import { handle, json, methodNotAllowed } from "~/http.server";
import { assertJsonMutation } from "~/accounts/csrf.server";
import { authenticator } from "~/accounts/login.server";
import { startSession } from "~/accounts/sessions.server";
import { toPublicUser } from "~/accounts/users.server";

/**
 * POST {email, password}: sets the session cookie and the device cookie (which keeps this client
 * out of lockouts others cause) and answers {user}. 401 wrong, 429 too many failures. For an account
 * with two-factor on, a right password answers 401 `second_factor_required` with a `challenge`; the
 * client then posts {challenge, code} (a code from the authenticator app, or a recovery code).
 */
export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["POST"]);
    const { services, clientAddress } = context;
    // a forged cross-site login would sign the victim into the attacker's account
    assertJsonMutation(request, services.config.publicUrl);
    const signIn = await authenticator(services, clientAddress).authenticate("json", request);
    if ("secondFactor" in signIn) {
      const { challenge, expiresAt } = signIn.secondFactor;
      return json(
        {
          error: "second_factor_required",
          message: "The password is right; send {challenge, code} with a code from your authenticator app or a recovery code.",
          challenge,
          expires_at: expiresAt.toISOString(),
        },
        { status: 401 },
      );
    }
    const { user, deviceCookie } = signIn;
    const headers = new Headers();
    headers.append("Set-Cookie", await startSession(services, request, user.id));
    headers.append("Set-Cookie", deviceCookie);
    return json({ user: toPublicUser(user) }, { headers });
  });

export const loader = () => handle(async () => { throw methodNotAllowed(["POST"]); });
