import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getTwoFactorRequirement, setTwoFactorRequirement, type TwoFactorRequirement } from "../../db/two-factor.js";
import type { Role } from "../../db/members.js";
import { recordAudit } from "../../db/audit.js";
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
 * caller has no second factor: they would lock themselves out of the page they are on. The change,
 * its audit row and the caller's-factor check are one locked statement (db/two-factor.ts), so
 * concurrent changes are applied one after the other and each row names what it replaced.
 */
export async function setRequirementFor(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, MANAGERS, "change the two-factor requirement");
  const { two_factor_required } = parseOr400(Input, input);
  const r = await setTwoFactorRequirement(sql, projectId, two_factor_required, {
    requireActorFactor: requirementCovers(two_factor_required, role) ? actor.id : undefined,
    audit: (before, tx) =>
      recordAudit(tx, { projectId, actorId: actor.id, action: "project.two_factor_requirement_changed", target: projectId, details: { from: before, to: two_factor_required } }),
  });
  if (r === "no_project") throw notFound("No project with that id among your projects.");
  if (r === "no_factor") throw conflict("Turn on two-factor authentication for your own account first: this requirement would cover your role.");
  return { two_factor_required };
}
