import type { LoaderFunctionArgs } from "@remix-run/node";
import { parseDays } from "~/economy/params.server";
import { economySummary } from "~/economy/summary.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const days = parseDays(queryOf(request));
    return json(await economySummary(sql, projectId, days));
  });

export const action = getOnly;
