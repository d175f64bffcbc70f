import type { LoaderFunctionArgs } from "@remix-run/node";
import { getPlayer, playerHistory } from "../../db/economy.js";
import { playerFlows, playerUnexplained } from "../../db/economy-flows.js";
import { parseUserId } from "~/economy/profile.server";
import { reading } from "~/services.server";
import { getOnly, handle, json, notFound } from "~/http.server";

export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const userId = parseUserId(params.userId);
      const player = userId && (await getPlayer(sql, projectId, userId));
      if (!userId || !player) throw notFound("No economy snapshot for that user id in this project.");
      const [history, flows, unexplained] = await Promise.all([
        playerHistory(sql, projectId, userId),
        playerFlows(sql, projectId, userId),
        playerUnexplained(sql, projectId, userId),
      ]);
      return json({ player, history, flows, unexplained });
    });
  });

export const action = getOnly;
