import type { ActionFunctionArgs } from "@remix-run/node";
import { postHealth } from "~/health/report.server";
import { keyedIngestPost } from "~/ingest/idempotency.server";
import { handle, json, methodNotAllowed } from "~/http.server";

/** Game servers report their state, player sessions and health samples here (docs/health.md). */
export const loader = () =>
  handle(async () => {
    throw methodNotAllowed(["POST"]);
  });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    const { projectId, key, body } = await keyedIngestPost(services, request, services.config.maxBodyBytes);
    return json(await postHealth(services, projectId, body, key));
  });
