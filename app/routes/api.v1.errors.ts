import type { LoaderFunctionArgs } from "@remix-run/node";
import { issueSearchScope, listEvents, listGroups } from "../../db/errors.js";
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
      // a grouped search reads the newest events' messages and players (ISSUE_SEARCH_WINDOW), as a filtered raw search does
      const [result, scope] = await Promise.all([
        params.grouped ? listGroups(sql, projectId, params.filter) : listEvents(sql, projectId, params.filter),
        params.grouped && params.filter.search ? issueSearchScope(sql, projectId) : undefined,
      ]);
      const { total } = result;
      // an issue's title (its message in the grouping's form) beside its message
      const data = params.grouped ? result.data.map(withTitle) : result.data;
      // a raw search with other filters reads the newest events only (see RAW_SEARCH_WINDOW); say so when older ones were left out
      const windowFull = "searchWindowFull" in result || scope?.windowFull ? { search_window_full: true } : {};
      return json({ data, total, limit: params.filter.limit, offset: params.filter.offset, grouped: params.grouped, ...windowFull });
    });
  });

export const action = getOnly;
