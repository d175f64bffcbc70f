import type { ActionFunctionArgs } from "@remix-run/node";
import { CLIENT_REPORT_MAX_BYTES, ingestClientReport } from "~/ingest/client-report.server";
import { bodyHash, keyedIngestPost } from "~/ingest/idempotency.server";
import { handle, json, methodNotAllowed } from "~/http.server";
import { clipNesting, tooDeep } from "~/text.server";

/** What an SDK dropped before sending, on its own (docs/api.md, "Client reports"); ingest keys. */
export const loader = () =>
  handle(async () => {
    throw methodNotAllowed(["POST"]);
  });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    const { projectId, key, body } = await keyedIngestPost(context.services, request, CLIENT_REPORT_MAX_BYTES);
    // the body is hashed for its key: serializing recurses once per level
    const { cut } = clipNesting(body);
    if (cut) throw tooDeep(cut);
    return json(await ingestClientReport(context.services, projectId, body, key === null ? null : { via: "report", key, bodyHash: bodyHash(body) }));
  });
