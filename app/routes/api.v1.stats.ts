import type { LoaderFunctionArgs } from "@remix-run/node";
import { windowStats } from "../../db/stats.js";
import { parseTimeframe, queryOf } from "~/errors/params.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { withTitle } from "~/errors/title.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const timeframe = parseTimeframe(queryOf(request));
      const stats = await windowStats(sql, projectId, timeframe);
      return json({ ...stats, top_errors: stats.top_errors.map(withTitle) });
    });
  });

export const action = getOnly;
