import type { ActionFunctionArgs } from "@remix-run/node";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { checkInternalKey, dispatchFromRequest } from "~/alerts/internal.server";

/** Internal: evaluates the project's rules for the fingerprints and sends; {sent, failed}. x-internal-key. */
export const loader = () => handle(async () => { throw methodNotAllowed(["POST"]); });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["POST"]);
    const { services } = context;
    checkInternalKey(services, request.headers.get("x-internal-key"));
    return json(await dispatchFromRequest(services, await readJson(request, services.config.maxBodyBytes, services.bodies)));
  });
