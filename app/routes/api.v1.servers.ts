import type { LoaderFunctionArgs } from "@remix-run/node";
import { servers } from "~/health/servers.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** GET ?state=live|ended|abnormal&version&limit&offset: game servers, live first. */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await servers(sql, projectId, queryOf(request))));
  });

export const action = getOnly;
