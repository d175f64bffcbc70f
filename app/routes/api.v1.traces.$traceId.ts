import type { LoaderFunctionArgs } from "@remix-run/node";
import { getTrace } from "../../db/traces.js";
import { asUuid } from "~/input.server";
import { reading } from "~/services.server";
import { getOnly, handle, json, notFound } from "~/http.server";

export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const traceId = asUuid(params.traceId);
      const found = traceId && (await getTrace(sql, projectId, traceId));
      if (!found) throw notFound("No trace with that id in this project.");
      return json(found);
    });
  });

export const action = getOnly;
