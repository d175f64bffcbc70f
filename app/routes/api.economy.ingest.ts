import type { ActionFunctionArgs } from "@remix-run/node";
import { pushBalances } from "~/economy/ingest.server";
import { keyedIngestPost } from "~/ingest/idempotency.server";
import { handle, json, methodNotAllowed } from "~/http.server";

/** Game servers push balances here from Players.PlayerRemoving (seed: POST /api/economy/ingest). */
export const loader = () =>
  handle(async () => {
    throw methodNotAllowed(["POST"]);
  });

export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    const { projectId, key, body } = await keyedIngestPost(services, request, services.config.economyMaxBodyBytes);
    return json(await pushBalances(services, projectId, body, key));
  });
