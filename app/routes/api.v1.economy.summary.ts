import type { LoaderFunctionArgs } from "@remix-run/node";
import { loadMap } from "~/economy/map.server";
import { parseCurrency, parseDays } from "~/economy/params.server";
import { economySummary } from "~/economy/summary.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const q = queryOf(request);
      const days = parseDays(q);
      const { map } = await loadMap(sql, projectId);
      return json(await economySummary(sql, projectId, days, map, parseCurrency(q, map)));
    });
  });

export const action = getOnly;
