import type { ActionFunctionArgs } from "@remix-run/node";
import { pushBalances } from "~/economy/ingest.server";
import { idempotencyKey } from "~/ingest/idempotency.server";
import { contentCoding, handle, json, methodNotAllowed, readJson } from "~/http.server";
import { withinDatabaseDeadline } from "~/db-deadline.server";

/** Game servers push balances here from Players.PlayerRemoving (seed: POST /api/economy/ingest). */
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
    const body = await readJson(request, services.config.economyMaxBodyBytes, services.bodies);
    return json(await pushBalances(services, projectId, body, key));
  });
