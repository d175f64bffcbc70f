import type { LoaderFunctionArgs } from "@remix-run/node";
import { groupEvents } from "~/errors/triage.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** GET ?before=|after=<event id>&limit=: a page of the group's stored events, newest first, with the ids to page on. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await groupEvents(sql, projectId, params.groupId, queryOf(request))));
  });

export const action = getOnly;
