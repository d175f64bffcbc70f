import type { LoaderFunctionArgs } from "@remix-run/node";
import { flowsView, parseFlowParams } from "~/economy/flows-read.server";
import { loadMap } from "~/economy/map.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** Sources and sinks by source over the last `days` days, of one currency or every currency. */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { projectId } = await context.services.apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const { map } = await loadMap(sql, projectId);
      return json(await flowsView(sql, projectId, map, parseFlowParams(queryOf(request), map)));
    });
  });

export const action = getOnly;
