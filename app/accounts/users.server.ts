import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { findUserByEmail, getPasswordHash, hasUsers, insertFirstUser, insertUser, updatePasswordHash, type User } from "../../db/users.js";
import { recordAudit } from "../../db/audit.js";
import { deleteOtherSessions } from "../../db/sessions.js";
import { hasPassword } from "../../db/sign-in-identities.js";
import { conflict, invalidPayload, notFound, ApiError } from "~/http.server";
import { parseOr400 } from "~/input.server";
import { hashPassword, verifyPassword } from "./passwords.server";
import { passwordProblem } from "./password-rule.server";

export const emailSchema = z
  .string({ error: "is required" })
  .trim()
  .toLowerCase()
  .max(320, "must be at most 320 characters")
  .regex(/^[^\s@]+@[^\s@]+$/, "must be an email address");
/** A password someone chooses: a string here, judged by `assertPasswordAllowed` once the account's email is known. */
const chosenPassword = z.string({ error: "is required" });

export const NewUser = z.object({ email: emailSchema, password: chosenPassword });

/** 400 naming the field and saying why, when the one password rule (password-rule.server.ts) refuses it. */
export function assertPasswordAllowed(password: string, email: string, field = "password"): void {
  const why = passwordProblem(password, { email });
  if (why) throw invalidPayload(`The request body is invalid: ${field} ${why}.`, [{ path: field, message: why }]);
}

export const toPublicUser = (u: User) => ({ id: u.id, email: u.email, created_at: u.created_at, must_change_password: u.must_change_password });

/** A new account (the CLI); 409 when the email is taken. */
export async function createUser(sql: Sql, input: unknown): Promise<User> {
  const { email, password } = parseOr400(NewUser, input);
  assertPasswordAllowed(password, email);
  const user = await insertUser(sql, email, await hashPassword(password));
  if (!user) throw conflict(`An account with the email ${email} already exists.`);
  await recordAudit(sql, { projectId: null, actorId: null, action: "account.created", target: user.email, details: { via: "cli" } });
  return user;
}

export const setupNeeded = async (sql: Sql) => !(await hasUsers(sql));

/** The first account, from the setup page; 409 once any account exists. */
export async function createFirstUser(sql: Sql, input: unknown): Promise<User> {
  const { email, password } = parseOr400(NewUser, input);
  assertPasswordAllowed(password, email);
  if (!(await setupNeeded(sql))) throw conflict("Setup is already done; sign in instead.");
  const user = await insertFirstUser(sql, email, await hashPassword(password));
  if (!user) throw conflict("Setup is already done; sign in instead.");
  return user;
}

export const NO_PASSWORD =
  "This account has no password of its own: it signs in through its provider. An operator can give it a temporary password (CLI user:password).";

export const PasswordChange = z.object({ current_password: z.string({ error: "is required" }).max(1024), new_password: chosenPassword });

/**
 * Changes the user's password after checking the current one; every other session is signed out.
 * The new one must differ from the current one, so a temporary password cannot be "changed" to itself.
 * An account without a password of its own (made by a first sign-in through a provider) has no
 * current password to prove, and a session alone is not enough to add one (409): it signs in through
 * its provider, or an operator gives it a temporary password (CLI `user:password`) to change here.
 */
export async function changePassword(sql: Sql, user: Pick<User, "id" | "email">, keepSession: Buffer | null, input: unknown): Promise<void> {
  const { current_password, new_password } = parseOr400(PasswordChange, input);
  const userId = user.id;
  if (!(await hasPassword(sql, userId))) throw conflict(NO_PASSWORD);
  assertPasswordAllowed(new_password, user.email, "new_password");
  const stored = await getPasswordHash(sql, userId);
  if (!stored || !(await verifyPassword(current_password, stored))) {
    throw new ApiError(403, "forbidden", "The current password is wrong.");
  }
  if (new_password === current_password) {
    throw invalidPayload("The request body is invalid: new_password must differ from the current password.", [
      { path: "new_password", message: "must differ from the current password" },
    ]);
  }
  await updatePasswordHash(sql, userId, await hashPassword(new_password));
  await deleteOtherSessions(sql, userId, keepSession);
  await recordAudit(sql, { projectId: null, actorId: userId, action: "account.password_changed", target: user.email });
}

/**
 * An operator's reset (CLI): a new temporary password, which the user must change at the next
 * sign-in; every session of the user is signed out. Generated unless given.
 */
export async function resetPassword(sql: Sql, email: string, password?: string): Promise<{ user: User; temporaryPassword: string }> {
  const user = await findUserByEmail(sql, email);
  if (!user) throw notFound(`No account with the email ${email.trim().toLowerCase()}.`);
  if (password !== undefined) assertPasswordAllowed(password, user.email);
  const temporaryPassword = password ?? generatedPassword();
  await updatePasswordHash(sql, user.id, await hashPassword(temporaryPassword), true);
  await deleteOtherSessions(sql, user.id, null);
  await recordAudit(sql, { projectId: null, actorId: null, action: "account.password_reset", target: user.email, details: { via: "cli" } });
  return { user: { id: user.id, email: user.email, created_at: user.created_at, must_change_password: true }, temporaryPassword };
}

/** 96 random bits in base64url: what a teammate or a reset receives, to be changed at first sign-in. */
export const generatedPassword = () => randomBytes(12).toString("base64url");

export { findUserByEmail };
