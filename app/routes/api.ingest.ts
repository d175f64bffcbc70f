import type { ActionFunctionArgs } from "@remix-run/node";
import { ingestEvents } from "~/ingest/ingest.server";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";

/** Health check: no key needed. */
export const loader = () => json({ status: "ok" });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services } = context;
    const { projectId } = await services.apiKeys.projectFor(request);
    const body = await readJson(request, services.config.maxBodyBytes);
    return json(await ingestEvents(services, projectId, body));
  });
