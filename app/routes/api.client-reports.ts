import type { ActionFunctionArgs } from "@remix-run/node";
import { CLIENT_REPORT_MAX_BYTES, ingestClientReport } from "~/ingest/client-report.server";
import { bodyHash, idempotencyKey } from "~/ingest/idempotency.server";
import { contentCoding, handle, json, methodNotAllowed, readJson } from "~/http.server";
import { withinDatabaseDeadline } from "~/db-deadline.server";
import { clipNesting, tooDeep } from "~/text.server";

/** What an SDK dropped before sending, on its own (docs/api.md, "Client reports"); ingest keys. */
export const loader = () =>
  handle(async () => {
    throw methodNotAllowed(["POST"]);
  });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["POST"]);
    const { services } = context;
    // stacked or unknown codings are refused on the header, before the key is looked up
    contentCoding(request);
    const { projectId } = await withinDatabaseDeadline(services.sql, services.apiKeys.projectFor(request));
    const key = idempotencyKey(request);
    const body = await readJson(request, CLIENT_REPORT_MAX_BYTES, services.bodies);
    // the body is hashed for its key: serializing recurses once per level
    const { cut } = clipNesting(body);
    if (cut) throw tooDeep(cut);
    return json(await ingestClientReport(services, projectId, body, key === null ? null : { via: "report", key, bodyHash: bodyHash(body) }));
  });
