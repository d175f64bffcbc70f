import type { LoaderFunctionArgs } from "@remix-run/node";
import { player } from "~/errors/triage.server";
import { reading } from "~/services.server";
import { getOnly, handle, json } from "~/http.server";

/** GET: a player with their issues and latest events. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => json(await player(sql, projectId, params.userId)));
  });

export const action = getOnly;
