import type { Sql } from "../../db/client.js";
import { getRole, type Role } from "../../db/members.js";
import { asUuid } from "~/input.server";
import { forbidden, notFound } from "~/http.server";

export type Actor = { id: string; email: string };

export const MANAGERS: readonly Role[] = ["owner", "admin"];
export const EVERYONE: readonly Role[] = ["owner", "admin", "member"];

/**
 * The one gate for project-scoped work: a project the user is not a member of does not exist for
 * them (404, same as a project that does not exist); a member whose role is not enough gets 403.
 * Returns the normalized project id and the user's role.
 */
export async function authorize(
  sql: Sql,
  actor: Actor,
  projectIdParam: string | undefined,
  allowed: readonly Role[],
  action = "do this",
): Promise<{ projectId: string; role: Role }> {
  const projectId = asUuid(projectIdParam);
  const role = projectId ? await getRole(sql, projectId, actor.id) : undefined;
  if (!projectId || !role) throw notFound("No project with that id among your projects.");
  if (!allowed.includes(role)) {
    throw forbidden(`Your role in this project (${role}) cannot ${action}; ask an owner${allowed.includes("admin") ? " or admin" : ""}.`);
  }
  return { projectId, role };
}
