import type { LoaderFunctionArgs } from "@remix-run/node";
import { listAnomalies } from "../../db/economy.js";
import { loadMap } from "~/economy/map.server";
import { parseAnomalyParams } from "~/economy/params.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys, config } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const filter = parseAnomalyParams(
        queryOf(request),
        { factor: config.economyAnomalyFactor, minAmount: config.economyAnomalyMinAmount },
        (await loadMap(sql, projectId)).map,
      );
      const { data, total } = await listAnomalies(sql, projectId, filter);
      return json({
        data,
        total,
        currency: filter.currency,
        factor: filter.factor,
        min_amount: filter.minAmount,
        days: filter.days,
        limit: filter.limit,
        offset: filter.offset,
      });
    });
  });

export const action = getOnly;
