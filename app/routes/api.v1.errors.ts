import type { LoaderFunctionArgs } from "@remix-run/node";
import { listEvents, listGroups } from "../../db/errors.js";
import { parseListParams, queryOf } from "~/errors/params.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { withTitle } from "~/errors/title.server";

export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const params = parseListParams(queryOf(request));
      const result = params.grouped ? await listGroups(sql, projectId, params.filter) : await listEvents(sql, projectId, params.filter);
      // exact up to 10,000 matches, then 10,000 and not exact (TOTAL_CAP, docs/api.md)
      const { total, totalExact } = result;
      // an issue's title (its message in the grouping's form) beside its message
      const data = params.grouped ? result.data.map(withTitle) : result.data;
      // a raw search with other filters reads the newest events only (see RAW_SEARCH_WINDOW); say so when older ones were left out
      const windowFull = "searchWindowFull" in result ? { search_window_full: true } : {};
      return json({ data, total, total_exact: totalExact, limit: params.filter.limit, offset: params.filter.offset, grouped: params.grouped, ...windowFull });
    });
  });

export const action = getOnly;
