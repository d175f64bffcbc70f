import type { LoaderFunctionArgs } from "@remix-run/node";
import { traces } from "~/errors/triage.server";
import { getOnly, handle, json } from "~/http.server";
import { queryOf } from "~/errors/params.server";

/** GET ?limit&offset: the project's traces, newest first. */
export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { sql, apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return json(await traces(sql, projectId, queryOf(request)));
  });

export const action = getOnly;
