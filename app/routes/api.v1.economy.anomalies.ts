import type { LoaderFunctionArgs } from "@remix-run/node";
import { readAnomalies } from "~/economy/anomalies.server";
import { loadMap } from "~/economy/map.server";
import { parseAnomalyParams } from "~/economy/params.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** Anomalies per currency, each under its own threshold (docs/economy.md, "Detection"). */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys, config } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const { map } = await loadMap(sql, projectId);
      const params = parseAnomalyParams(queryOf(request), map);
      return json(await readAnomalies(sql, projectId, map, config, params));
    });
  });

export const action = getOnly;
