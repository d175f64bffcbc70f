import type { LoaderFunctionArgs } from "@remix-run/node";
import { readSdkHealth, SDK_HEALTH_MAX_DAYS } from "../../db/client-reports.js";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { integer, queryOf } from "~/errors/params.server";

/** GET ?days=1..90 (default 14): what the project's SDKs dropped, per day and in total, and their last warning. */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const q = queryOf(request);
    const days = integer(q, "days", 14, 1, SDK_HEALTH_MAX_DAYS);
    return reading(context.services, request, async (sql) => json(await readSdkHealth(sql, projectId, days)));
  });

export const action = getOnly;
