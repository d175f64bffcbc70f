import type { LoaderFunctionArgs } from "@remix-run/node";
import { listUnexplained } from "../../db/economy-flows.js";
import { parseUnexplainedParams } from "~/economy/flows-read.server";
import { loadMap } from "~/economy/map.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** Gains the game's flows did not explain, newest first, paged like the anomalies. */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { projectId } = await context.services.apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const f = parseUnexplainedParams(queryOf(request), (await loadMap(sql, projectId)).map);
      const { data, total } = await listUnexplained(sql, projectId, f);
      return json({ data, total, currency: f.currency ?? "all", min_amount: f.minAmount, days: f.days, limit: f.limit, offset: f.offset });
    });
  });

export const action = getOnly;
