import type { ActionFunctionArgs } from "@remix-run/node";
import { ingestNative } from "~/ingest/native.server";
import { keyedIngestPost } from "~/ingest/idempotency.server";
import { handle, json } from "~/http.server";
import { countingRefusals } from "../../db/metrics.js";

/** Health check: no key needed. */
export const loader = () => json({ status: "ok" });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(countingRefusals("native", async () => {
    const { services } = context;
    const { projectId, key, body } = await keyedIngestPost(services, request, services.config.maxBodyBytes, ["GET", "POST"]);
    return json(await ingestNative(services, projectId, body, key));
  }));
