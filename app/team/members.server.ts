import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { changeMember, insertMember, listMembers as dbList, type Role } from "../../db/members.js";
import { findUserByEmail, insertUser } from "../../db/users.js";
import { recordAudit } from "../../db/audit.js";
import { parseOr400, asUuid } from "~/input.server";
import { conflict, forbidden, notFound } from "~/http.server";
import { hashPassword } from "~/accounts/passwords.server";
import { emailSchema, generatedPassword } from "~/accounts/users.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

const role = z.enum(["owner", "admin", "member"], { error: "must be owner, admin or member" });
export const AddInput = z.object({ email: emailSchema, role: role.default("member") });
export const RoleInput = z.object({ role });

export async function listMembers(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  return dbList(sql, projectId);
}

const onlyOwnersTouchOwners = (actorRole: Role, ...roles: (Role | undefined)[]) => {
  if (actorRole !== "owner" && roles.includes("owner")) throw forbidden("Only an owner can grant, change or remove the owner role.");
};

/**
 * Adds a teammate by email. When nobody has an account with that email yet, one is created with a
 * random temporary password, returned in this answer only: the owner hands it over, the teammate
 * signs in and must change it before anything else (there is no outgoing email in a self-hosted install).
 */
export async function addMember(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId, role: actorRole } = await authorize(sql, actor, projectIdParam, MANAGERS, "add members");
  const { email, role } = parseOr400(AddInput, input);
  onlyOwnersTouchOwners(actorRole, role);
  let temporaryPassword: string | undefined;
  let user = await findUserByEmail(sql, email);
  if (!user) {
    temporaryPassword = generatedPassword();
    const created = await insertUser(sql, email, await hashPassword(temporaryPassword), true);
    // a concurrent request created it first: theirs stands, with their password
    if (!created) temporaryPassword = undefined;
    user = await findUserByEmail(sql, email);
    if (!user) throw conflict("That account changed while it was being added; try again.");
    if (created) {
      await recordAudit(sql, { projectId: null, actorId: actor.id, action: "account.created", target: user.email, details: { via: "member_added", project_id: projectId, temporary: true } });
    }
  }
  const member = await insertMember(sql, projectId, user.id, role);
  if (!member) throw conflict(`${email} is already a member of this project; change their role instead.`);
  await recordAudit(sql, { projectId, actorId: actor.id, action: "member.added", target: member.email, details: { user_id: member.user_id, role, new_account: temporaryPassword !== undefined } });
  return { member, ...(temporaryPassword ? { temporary_password: temporaryPassword } : {}) };
}

/** Role change (`input` holds the new role) or removal (`input` null), keeping at least one owner. */
async function change(sql: Sql, actor: Actor, projectIdParam: string | undefined, userIdParam: string | undefined, input: unknown | null) {
  const removing = input === null;
  const userId = asUuid(userIdParam);
  const self = userId === actor.id;
  // anyone may leave a project; managing others needs owner or admin
  const { projectId, role: actorRole } = await authorize(
    sql, actor, projectIdParam, removing && self ? EVERYONE : MANAGERS, removing ? "remove members" : "change roles",
  );
  const newRole = removing ? null : parseOr400(RoleInput, input).role;
  const current = userId ? (await dbList(sql, projectId)).find((m) => m.user_id === userId) : undefined;
  if (!userId || !current) throw notFound("No member with that user id in this project.");
  if (!(removing && self)) onlyOwnersTouchOwners(actorRole, current.role, newRole ?? undefined);
  const r = await changeMember(sql, projectId, userId, newRole, actor.id);
  if (!r.ok && r.reason === "last_owner") throw conflict("A project keeps at least one owner; make someone else owner first.");
  if (!r.ok) throw notFound("No member with that user id in this project.");
  return r.member;
}

export async function changeRole(sql: Sql, actor: Actor, projectIdParam: string | undefined, userIdParam: string | undefined, input: unknown) {
  return (await change(sql, actor, projectIdParam, userIdParam, input ?? {}))!;
}

export async function removeMember(sql: Sql, actor: Actor, projectIdParam: string | undefined, userIdParam: string | undefined) {
  await change(sql, actor, projectIdParam, userIdParam, null);
}
