import type { LoaderFunctionArgs } from "@remix-run/node";
import { listPlayers } from "../../db/economy.js";
import { loadMap } from "~/economy/map.server";
import { parsePlayerParams } from "~/economy/params.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const filter = parsePlayerParams(queryOf(request), (await loadMap(sql, projectId)).map);
      const { data, total } = await listPlayers(sql, projectId, filter);
      return json({ data, total, limit: filter.limit, offset: filter.offset, sort: filter.sort, order: filter.order });
    });
  });

export const action = getOnly;
