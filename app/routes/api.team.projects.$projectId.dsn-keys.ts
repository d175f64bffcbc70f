import { json, readJson } from "~/http.server";
import { createDsnKey, listDsnKeysFor } from "~/team/dsn-keys.server";
import { baseUrl, teamRoute } from "~/team/api.server";

/** GET: DSN keys with their copy-ready DSN (every member); POST {name?, rate_limit_per_minute?}: a new DSN key (owner/admin). */
const route = teamRoute({
  GET: async ({ services, user, params, request }) =>
    json({ data: await listDsnKeysFor(services.sql, user, params.projectId, baseUrl(services, request)) }),
  POST: async ({ services, user, params, request }) => {
    // the body is optional here: an empty POST makes an unnamed key
    const hasBody = Number(request.headers.get("content-length") ?? "0") > 0 || request.headers.has("transfer-encoding");
    const input = hasBody ? await readJson(request, services.config.maxBodyBytes, services.bodies) : undefined;
    return json(await createDsnKey(services.sql, user, params.projectId, input, baseUrl(services, request)), 201);
  },
});
export const loader = route;
export const action = route;
