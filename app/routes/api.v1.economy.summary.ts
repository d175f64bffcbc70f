import type { LoaderFunctionArgs } from "@remix-run/node";
import { parseDays } from "~/economy/params.server";
import { economySummary } from "~/economy/summary.server";
import { getOnly, handle, json } from "~/http.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const days = parseDays(new URL(request.url).searchParams);
    return json(await economySummary(sql, projectId, days));
  });

export const action = getOnly;
