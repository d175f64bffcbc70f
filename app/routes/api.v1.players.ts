import type { LoaderFunctionArgs } from "@remix-run/node";
import { players } from "~/errors/triage.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** GET ?search=<user id or name>: players who ran into errors. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await players(sql, projectId, queryOf(request))));
  });

export const action = getOnly;
