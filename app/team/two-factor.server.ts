import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getTwoFactorRequirement, setTwoFactorRequirement, type TwoFactorRequirement } from "../../db/two-factor.js";
import type { Role } from "../../db/members.js";
import { recordAudit } from "../../db/audit.js";
import { hasSecondFactor } from "~/accounts/two-factor.server";
import { conflict, notFound } from "~/http.server";
import { parseOr400 } from "~/input.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

/**
 * A project's two-factor requirement: `off`, `owners_admins` or `everyone`. A member whose role it
 * covers and who has no second factor on is refused everything in the project (403
 * `second_factor_required`; pages send them to enroll) until they turn one on; nothing else changes
 * for them, and other projects are not affected.
 */
export const REQUIREMENTS = ["off", "owners_admins", "everyone"] as const satisfies readonly TwoFactorRequirement[];

export const Input = z.object({
  two_factor_required: z.enum(REQUIREMENTS, { error: `must be one of ${REQUIREMENTS.join(", ")}` }),
});

export const requirementCovers = (value: TwoFactorRequirement, role: Role) =>
  value === "everyone" || (value === "owners_admins" && role !== "member");

export async function getRequirementFor(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const value = await getTwoFactorRequirement(sql, projectId);
  if (!value) throw notFound("No project with that id among your projects.");
  return { two_factor_required: value };
}

/**
 * Owners and admins set it. One that would cover the caller's own role is refused (409) while the
 * caller has no second factor: they would lock themselves out of the page they are on.
 */
export async function setRequirementFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, MANAGERS, "change the two-factor requirement");
  const { two_factor_required } = parseOr400(Input, input);
  if (requirementCovers(two_factor_required, role) && !(await hasSecondFactor(sql, actor.id))) {
    throw conflict("Turn on two-factor authentication for your own account first: this requirement would cover your role.");
  }
  const before = await getTwoFactorRequirement(sql, projectId);
  if (!(await setTwoFactorRequirement(sql, projectId, two_factor_required))) throw notFound("No project with that id among your projects.");
  if (before !== two_factor_required) {
    await recordAudit(sql, { projectId, actorId: actor.id, action: "project.two_factor_requirement_changed", target: projectId, details: { from: before, to: two_factor_required } });
  }
  return { two_factor_required };
}
