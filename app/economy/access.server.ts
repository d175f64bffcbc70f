import type { Role } from "../../db/members.js";
import { assertJsonMutation, isMutation } from "~/accounts/csrf.server";
import { requireApiUser } from "~/accounts/sessions.server";
import { asUuid } from "~/input.server";
import { internalKeyMatches } from "~/auth/internal-key.server";
import { notFound, unauthorized } from "~/http.server";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import { authorize } from "~/team/access.server";
import { requireProject } from "./sync.server";

/**
 * Who may manage a project's scan or key: a signed-in member with one of `allowed` roles (through
 * the Team gate, with its CSRF rule for mutations), or, where `internal` is set, a caller presenting
 * `x-internal-key` (cron). Returns the normalized project id.
 */
export async function economyAccess(...args: Parameters<typeof economyActor>): Promise<string> {
  return (await economyActor(...args)).projectId;
}

/** economyAccess, also naming the signed-in user who acts (null for an x-internal-key caller), for the audit log. */
export async function economyActor(
  deps: { sql: Sql; config: Pick<Config, "notificationSecret" | "publicUrl"> },
  request: Request,
  /** read after the credentials are checked, so an anonymous caller gets 401 before any body error */
  projectIdOf: () => unknown,
  opts: { allowed: readonly Role[]; internal: boolean; action: string },
): Promise<{ projectId: string; actorId: string | null }> {
  const read = async () => {
    const v = await projectIdOf();
    return typeof v === "string" ? v : undefined;
  };
  const internal = request.headers.get("x-internal-key");
  if (opts.internal && internal !== null) {
    if (!internalKeyMatches(internal, deps.config.notificationSecret)) throw unauthorized("The x-internal-key is not valid.");
    const projectId = asUuid(await read());
    if (!projectId) throw notFound("No project with that id.");
    await requireProject(deps, projectId);
    return { projectId, actorId: null };
  }
  const user = await requireApiUser(deps, request);
  if (isMutation(request)) assertJsonMutation(request, deps.config.publicUrl);
  return { projectId: (await authorize(deps.sql, user, await read(), opts.allowed, opts.action)).projectId, actorId: user.id };
}
