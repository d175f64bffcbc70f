import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { economyAccess, economyActor } from "~/economy/access.server";
import { deleteKey, keyStatus, putKey } from "~/economy/sync.server";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { MANAGERS } from "~/team/access.server";
import { queryOf } from "~/errors/params.server";

const access = { allowed: MANAGERS, internal: false, action: "manage the Open Cloud key" } as const;

/** GET ?project_id=: {configured, universe_id, datastore_name, key_last4, updated_at}; never the key. */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    const projectId = await economyAccess(services, request, () => queryOf(request).get("project_id"), access);
    return json(await keyStatus(services, projectId));
  });

/** PUT {project_id, api_key, universe_id, datastore_name, scope?, key_prefix?}; DELETE ?project_id=. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    if (request.method === "PUT") {
      let body: unknown;
      const { projectId, actorId } = await economyActor(services, request, async () => {
        body = await readJson(request, services.config.maxBodyBytes, services.bodies);
        return (body as { project_id?: unknown } | null)?.project_id;
      }, access);
      return json(await putKey(services, projectId, body, actorId));
    }
    if (request.method === "DELETE") {
      const { projectId, actorId } = await economyActor(services, request, () => queryOf(request).get("project_id"), access);
      return json(await deleteKey(services, projectId, actorId));
    }
    throw methodNotAllowed(["GET", "PUT", "DELETE"]);
  });
