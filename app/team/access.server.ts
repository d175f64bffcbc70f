import type { Sql } from "../../db/client.js";
import type { Role } from "../../db/members.js";
import { getRoleAndTwoFactor } from "../../db/two-factor.js";
import { asUuid } from "~/input.server";
import { ApiError, forbidden, notFound } from "~/http.server";

export type Actor = { id: string; email: string };

export const MANAGERS: readonly Role[] = ["owner", "admin"];
export const EVERYONE: readonly Role[] = ["owner", "admin", "member"];

/**
 * The one gate for project-scoped work: a project the user is not a member of does not exist for
 * them (404, same as a project that does not exist); a member whose role the project requires
 * two-factor authentication of, and who has none turned on, gets 403 `second_factor_required` for
 * everything in it; a member whose role is not enough gets 403. Returns the normalized project id
 * and the user's role.
 */
export async function authorize(
  sql: Sql,
  actor: Actor,
  projectIdParam: string | undefined,
  allowed: readonly Role[],
  action = "do this",
): Promise<{ projectId: string; role: Role }> {
  const projectId = asUuid(projectIdParam);
  const access = projectId ? await getRoleAndTwoFactor(sql, projectId, actor.id) : undefined;
  if (!projectId || !access) throw notFound("No project with that id among your projects.");
  const { role } = access;
  if (access.missingTwoFactor) throw secondFactorRequired(role);
  if (!allowed.includes(role)) {
    throw forbidden(`Your role in this project (${role}) cannot ${action}; ask an owner${allowed.includes("admin") ? " or admin" : ""}.`);
  }
  return { projectId, role };
}

/** Where a member is sent to turn two-factor authentication on. */
export const TWO_FACTOR_ENROLL_PAGE = "/account/two-factor";

export const secondFactorRequired = (role: Role) =>
  new ApiError(
    403,
    "second_factor_required",
    `This project requires two-factor authentication for its ${role === "member" ? "members" : `${role}s`}; turn it on first (Account page, or POST /api/auth/two-factor/setup).`,
  );
