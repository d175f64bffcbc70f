import type { LoaderFunctionArgs } from "@remix-run/node";
import { windowStats } from "../../db/stats.js";
import { parseTimeframe, queryOf } from "~/errors/params.server";
import { getOnly, handle, json } from "~/http.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const timeframe = parseTimeframe(queryOf(request));
    return json(await windowStats(sql, projectId, timeframe));
  });

export const action = getOnly;
