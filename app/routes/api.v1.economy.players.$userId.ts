import type { LoaderFunctionArgs } from "@remix-run/node";
import { getPlayer, playerHistory } from "../../db/economy.js";
import { parseUserId } from "~/economy/profile.server";
import { getOnly, handle, json, notFound } from "~/http.server";

export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const userId = parseUserId(params.userId);
    const player = userId && (await getPlayer(sql, projectId, userId));
    if (!userId || !player) throw notFound("No economy snapshot for that user id in this project.");
    return json({ player, history: await playerHistory(sql, projectId, userId) });
  });

export const action = getOnly;
