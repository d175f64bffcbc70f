import type { ActionFunctionArgs } from "@remix-run/node";
import { ingestNative } from "~/ingest/native.server";
import { idempotencyKey } from "~/ingest/idempotency.server";
import { contentCoding, handle, json, methodNotAllowed, readJson } from "~/http.server";
import { withinDatabaseDeadline } from "~/db-deadline.server";

/** Health check: no key needed. */
export const loader = () => json({ status: "ok" });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services } = context;
    // stacked or unknown codings are refused on the header, before the key is looked up
    contentCoding(request);
    const { projectId } = await withinDatabaseDeadline(services.sql, services.apiKeys.projectFor(request));
    const key = idempotencyKey(request);
    const body = await readJson(request, services.config.maxBodyBytes, services.bodies);
    return json(await ingestNative(services, projectId, body, key));
  });
