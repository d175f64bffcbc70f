import type { ActionFunctionArgs } from "@remix-run/node";
import { handle, json, methodNotAllowed } from "~/http.server";
import { assertJsonMutation } from "~/accounts/csrf.server";
import { authenticator } from "~/accounts/login.server";
import { startSession } from "~/accounts/sessions.server";
import { toPublicUser } from "~/accounts/users.server";

/** POST {email, password}: sets the session cookie and answers {user}. 401 wrong, 429 too many failures. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["POST"]);
    const { services, clientAddress } = context;
    // a forged cross-site login would sign the victim into the attacker's account
    assertJsonMutation(request, services.config.publicUrl);
    const user = await authenticator(services, clientAddress).authenticate("json", request);
    const cookie = await startSession(services, request, user.id);
    return json({ user: toPublicUser(user) }, { headers: { "Set-Cookie": cookie } });
  });

export const loader = () => handle(async () => { throw methodNotAllowed(["POST"]); });
