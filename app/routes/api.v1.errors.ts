import type { LoaderFunctionArgs } from "@remix-run/node";
import { listEvents, listGroups } from "../../db/errors.js";
import { parseListParams } from "~/errors/params.server";
import { getOnly, handle, json } from "~/http.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    const params = parseListParams(new URL(request.url).searchParams);
    const { data, total } = params.grouped
      ? await listGroups(sql, projectId, params.filter)
      : await listEvents(sql, projectId, params.filter);
    return json({ data, total, limit: params.filter.limit, offset: params.filter.offset, grouped: params.grouped });
  });

export const action = getOnly;
