import type { ActionFunctionArgs } from "@remix-run/node";
import { ingestEvents } from "~/ingest/ingest.server";
import { idempotencyKey } from "~/ingest/idempotency.server";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { withinDatabaseDeadline } from "~/db-deadline.server";

/** Health check: no key needed. */
export const loader = () => json({ status: "ok" });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services } = context;
    const { projectId } = await withinDatabaseDeadline(services.sql, services.apiKeys.projectFor(request));
    const key = idempotencyKey(request);
    const body = await readJson(request, services.config.maxBodyBytes);
    // the writer bounds the write itself (DB_TIMEOUT_MS, rolled back past it); this waits longer only for a
    // commit already sent when the database stalled, whose outcome is then unknown
    return json(await withinDatabaseDeadline(services.sql, ingestEvents(services, projectId, body, key), services.config.dbTimeoutMs + 5_000));
  });
