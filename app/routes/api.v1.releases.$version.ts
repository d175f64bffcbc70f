import type { LoaderFunctionArgs } from "@remix-run/node";
import { releaseDetail } from "~/health/releases.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** GET /api/v1/releases/:version?window&environment: one version's health with its hourly series. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await releaseDetail(sql, projectId, params.version, queryOf(request))));
  });

export const action = getOnly;
