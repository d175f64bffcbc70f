import type { LoaderFunctionArgs } from "@remix-run/node";
import { releasesWithHealth } from "~/health/releases.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/**
 * GET ?window=24h|7d|30d&environment&limit&offset: game versions, newest first, with occurrences, new
 * issues and regressions, and each version's release health over the window.
 */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await releasesWithHealth(sql, projectId, queryOf(request))));
  });

export const action = getOnly;
