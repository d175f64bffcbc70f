import type { Sql } from "./client.js";
import { recordAudit } from "./audit.js";

export type User = {
  id: string;
  email: string;
  created_at: Date;
  /** signed in with a temporary password: must choose a new one before anything else */
  must_change_password: boolean;
};

const normalize = (email: string) => email.trim().toLowerCase();

/** A new account; `temporary` marks a password someone else chose, to be changed at first sign-in. */
export async function insertUser(sql: Sql, email: string, passwordHash: string, temporary = false): Promise<User | undefined> {
  const [u] = await sql<User[]>`
    insert into users (email, password_hash, must_change_password) values (${normalize(email)}, ${passwordHash}, ${temporary})
    on conflict (lower(email)) do nothing
    returning id, email, created_at, must_change_password`;
  return u;
}

/**
 * Creates the first account (an instance admin), and only while none exists: the lock serializes concurrent set-up
 * requests so two browsers racing through the setup page cannot both become the first user.
 */
export async function insertFirstUser(sql: Sql, email: string, passwordHash: string): Promise<User | undefined> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(727275)`;
    // the first account is the instance's admin: it reads the instance's audit log
    const [u] = await tx<User[]>`
      insert into users (email, password_hash, instance_admin)
      select ${normalize(email)}, ${passwordHash}, true where not exists (select 1 from users)
      returning id, email, created_at, must_change_password`;
    if (u) await recordAudit(tx, { projectId: null, actorId: u.id, action: "account.created", target: u.email, details: { via: "setup", instance_admin: true } });
    return u;
  });
}

export async function hasUsers(sql: Sql): Promise<boolean> {
  const [r] = await sql<{ any: boolean }[]>`select exists (select 1 from users) as any`;
  return r.any;
}

export async function findUserByEmail(sql: Sql, email: string): Promise<(User & { password_hash: string }) | undefined> {
  const [u] = await sql<(User & { password_hash: string })[]>`
    select id, email, created_at, must_change_password, password_hash from users where lower(email) = ${normalize(email)}`;
  return u;
}

/** An account by its id (it may have been deleted since the id was handed out). */
export async function findUserById(sql: Sql, userId: string): Promise<User | undefined> {
  const [u] = await sql<User[]>`select id, email, created_at, must_change_password from users where id = ${userId}`;
  return u;
}

export async function getPasswordHash(sql: Sql, userId: string): Promise<string | undefined> {
  const [u] = await sql<{ password_hash: string }[]>`select password_hash from users where id = ${userId}`;
  return u?.password_hash;
}

/**
 * Sets a password; `temporary` when someone else chose it (an operator reset), cleared when the user chose it.
 * The account has a password from now on, also one a provider's sign-in made without one.
 */
export async function updatePasswordHash(sql: Sql, userId: string, passwordHash: string, temporary = false): Promise<void> {
  await sql`update users set password_hash = ${passwordHash}, must_change_password = ${temporary}, has_password = true where id = ${userId}`;
}
