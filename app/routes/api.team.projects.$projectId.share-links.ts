import { json } from "~/http.server";
import { createShareLink, listShareLinks } from "~/team/share-links.server";
import { baseUrl, teamRoute } from "~/team/api.server";
import { queryOf } from "~/errors/params.server";

/** GET [?group_id=]: the project's links. POST {group_id, role, expires_in_days?}: {id, token, url}, the token shown once. */
const route = teamRoute({
  GET: async ({ services, user, params, request }) =>
    json({ data: await listShareLinks(services.sql, user, params.projectId, queryOf(request).get("group_id")) }),
  POST: async ({ services, user, params, request, body }) =>
    json(await createShareLink(services.sql, user, params.projectId, await body(), baseUrl(services, request)), 201),
});
export const loader = route;
export const action = route;
