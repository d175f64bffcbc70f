import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { updateShareStatus, viewShare } from "~/share/share.server";

/** `{"status": "..."}`, with room for whitespace: a share link is public, so its body stays small. */
const SHARE_STATUS_MAX_BODY_BYTES = 1024;

/** Public: the token is the credential. GET the shared issue; POST {status} with an editor token. */
export const loader = ({ params, context }: LoaderFunctionArgs) =>
  handle(async () => json(await viewShare(context.services, context.clientAddress, params.token)));

export const action = ({ request, params, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services, clientAddress } = context;
    return json({
      ...(await updateShareStatus(services, clientAddress, params.token, () => readJson(request, SHARE_STATUS_MAX_BODY_BYTES, services.bodies))),
    });
  });
