import type { LoaderFunctionArgs } from "@remix-run/node";
import { groupTags } from "~/errors/triage.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";

/** GET: top values of place, version, environment, server, tags and context keys over the group's latest events. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await groupTags(sql, projectId, params.groupId)));
  });

export const action = getOnly;
