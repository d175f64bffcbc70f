import { json, readJson } from "~/http.server";
import { createKey, listKeys } from "~/team/keys.server";
import { teamRoute } from "~/team/api.server";

/** GET: keys (prefix, created, last used, revoked); POST {name?}: a new key, shown once. Owner/admin. */
const route = teamRoute({
  GET: async ({ services, user, params }) => json({ data: await listKeys(services.sql, user, params.projectId) }),
  POST: async ({ services, user, params, request }) => {
    // the body is optional here: an empty POST makes an unnamed key
    const hasBody = Number(request.headers.get("content-length") ?? "0") > 0 || request.headers.has("transfer-encoding");
    const input = hasBody ? await readJson(request, services.config.maxBodyBytes, services.bodies) : undefined;
    return json(await createKey(services.sql, user, params.projectId, input), 201);
  },
});
export const loader = route;
export const action = route;
