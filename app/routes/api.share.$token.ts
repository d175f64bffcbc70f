import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { updateShareStatus, viewShare } from "~/share/share.server";

/** Public: the token is the credential. GET the shared issue; POST {status} with an editor token. */
export const loader = ({ params, context }: LoaderFunctionArgs) =>
  handle(async () => json(await viewShare(context.services, context.clientAddress, params.token)));

export const action = ({ request, params, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services, clientAddress } = context;
    return json({
      ...(await updateShareStatus(services, clientAddress, params.token, () => readJson(request, services.config.maxBodyBytes))),
    });
  });
