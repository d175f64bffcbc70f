import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { economyAccess } from "~/economy/access.server";
import { startSync, syncStatus } from "~/economy/sync.server";
import { handle, json, methodNotAllowed, readJson } from "~/http.server";
import { EVERYONE, MANAGERS } from "~/team/access.server";
import { queryOf } from "~/errors/params.server";

/** GET ?project_id=: the scan's progress (any member, or x-internal-key). */
export const loader = ({ request, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { services } = context;
    const projectId = await economyAccess(services, request, () => queryOf(request).get("project_id"), {
      allowed: EVERYONE,
      internal: true,
      action: "see the scan",
    });
    return json(await syncStatus(services, projectId));
  });

/** POST {project_id, restart?}: start (or resume) the Open Cloud scan; owner/admin session or x-internal-key. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  handle(async () => {
    if (request.method !== "POST") throw methodNotAllowed(["GET", "POST"]);
    const { services } = context;
    let body: unknown;
    const projectId = await economyAccess(services, request, async () => {
      body = await readJson(request, services.config.maxBodyBytes, services.bodies);
      return (body as { project_id?: unknown } | null)?.project_id;
    }, {
      allowed: MANAGERS,
      internal: true,
      action: "start a scan",
    });
    return json(await startSync(services, projectId, body), 202);
  });
