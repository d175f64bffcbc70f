import type { ActionFunctionArgs } from "@remix-run/node";
import { postFlows } from "~/economy/flows.server";
import { keyedIngestPost } from "~/ingest/idempotency.server";
import { handle, json, methodNotAllowed } from "~/http.server";

/** Game servers send what moved their players' balances here (Monitor.economy.flow in the SDK). */
export const loader = () =>
  handle(async () => {
    throw methodNotAllowed(["POST"]);
  });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    const { projectId, key, body } = await keyedIngestPost(services, request, services.config.economyMaxBodyBytes);
    return json(await postFlows(services, projectId, body, key));
  });
