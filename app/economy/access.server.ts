import { createHash, timingSafeEqual } from "node:crypto";
import type { Role } from "../../db/members.js";
import { assertJsonMutation, isMutation } from "~/accounts/csrf.server";
import { requireApiUser } from "~/accounts/sessions.server";
import { asUuid } from "~/input.server";
import { notFound, unauthorized } from "~/http.server";
import type { Services } from "~/services.server";
import { authorize } from "~/team/access.server";
import { requireProject } from "./sync.server";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** Constant-time comparison (over digests, so lengths do not leak either). */
export const internalKeyMatches = (given: string, secret: string) => timingSafeEqual(digest(given), digest(secret));

/**
 * Who may manage a project's scan or key: a signed-in member with one of `allowed` roles (through
 * the Team gate, with its CSRF rule for mutations), or, where `internal` is set, a caller presenting
 * `x-internal-key` (cron). Returns the normalized project id.
 */
export async function economyAccess(
  services: Services,
  request: Request,
  /** read after the credentials are checked, so an anonymous caller gets 401 before any body error */
  projectIdOf: () => unknown,
  opts: { allowed: readonly Role[]; internal: boolean; action: string },
): Promise<string> {
  const read = async () => {
    const v = await projectIdOf();
    return typeof v === "string" ? v : undefined;
  };
  const internal = request.headers.get("x-internal-key");
  if (opts.internal && internal !== null) {
    if (!internalKeyMatches(internal, services.config.notificationSecret)) throw unauthorized("The x-internal-key is not valid.");
    const projectId = asUuid(await read());
    if (!projectId) throw notFound("No project with that id.");
    await requireProject(services, projectId);
    return projectId;
  }
  const user = await requireApiUser(services, request);
  if (isMutation(request)) assertJsonMutation(request, services.config.publicUrl);
  return (await authorize(services.sql, user, await read(), opts.allowed, opts.action)).projectId;
}
