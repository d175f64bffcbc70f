import type { Sql } from "./client.js";
import type { User } from "./users.js";

/** An OIDC identity linked to an account: the provider's (issuer, subject) pair. */
export type SignInIdentity = {
  id: string;
  user_id: string;
  provider: string;
  issuer: string;
  subject: string;
  username: string | null;
  email: string | null;
  created_at: Date;
  last_sign_in_at: Date | null;
};

const COLUMNS = "id, user_id, provider, issuer, subject, username, email, created_at, last_sign_in_at";

export async function findIdentity(sql: Sql, issuer: string, subject: string): Promise<SignInIdentity | undefined> {
  const [r] = await sql<SignInIdentity[]>`select ${sql.unsafe(COLUMNS)} from user_identities where issuer = ${issuer} and subject = ${subject}`;
  return r;
}

export async function listIdentities(sql: Sql, userId: string): Promise<SignInIdentity[]> {
  return sql<SignInIdentity[]>`select ${sql.unsafe(COLUMNS)} from user_identities where user_id = ${userId} order by created_at, id`;
}

/** Links an identity to an account; undefined when the identity is already linked (to anyone). */
export async function insertIdentity(
  sql: Sql,
  i: { userId: string; provider: string; issuer: string; subject: string; username: string | null; email: string | null },
): Promise<SignInIdentity | undefined> {
  const [r] = await sql<SignInIdentity[]>`
    insert into user_identities (user_id, provider, issuer, subject, username, email, last_sign_in_at)
    values (${i.userId}, ${i.provider}, ${i.issuer}, ${i.subject}, ${i.username}, ${i.email}, now())
    on conflict (issuer, subject) do nothing
    returning ${sql.unsafe(COLUMNS)}`;
  return r;
}

/** A sign-in through the identity: what the provider calls the person now, and when. */
export async function touchIdentity(sql: Sql, id: string, username: string | null, email: string | null): Promise<void> {
  await sql`update user_identities set username = ${username}, email = ${email}, last_sign_in_at = now() where id = ${id}`;
}

/**
 * Unlinks one of the user's identities, only while the account keeps another way to sign in (a
 * password of its own or another identity); the check and the delete are one statement.
 */
export async function deleteIdentity(sql: Sql, userId: string, id: string): Promise<"deleted" | "not_found" | "last_way_in"> {
  return sql.begin(async (tx) => {
    const [u] = await tx<{ has_password: boolean }[]>`select has_password from users where id = ${userId} for update`;
    const rows = await tx<{ id: string }[]>`select id from user_identities where user_id = ${userId}`;
    if (!u || !rows.some((r) => r.id === id)) return "not_found";
    if (!u.has_password && rows.length === 1) return "last_way_in";
    await tx`delete from user_identities where id = ${id} and user_id = ${userId}`;
    return "deleted";
  });
}

export async function hasPassword(sql: Sql, userId: string): Promise<boolean> {
  const [u] = await sql<{ has_password: boolean }[]>`select has_password from users where id = ${userId}`;
  return u?.has_password ?? false;
}

/**
 * A new account for a first OIDC sign-in, with its identity, in one transaction; undefined when the
 * email is taken. The stored hash is of a password nobody knows (`has_password` false).
 */
export async function insertUserWithIdentity(
  sql: Sql,
  email: string,
  unusableHash: string,
  i: { provider: string; issuer: string; subject: string; username: string | null },
): Promise<User | undefined> {
  return sql.begin(async (tx) => {
    const [u] = await tx<User[]>`
      insert into users (email, password_hash, has_password) values (${email.trim().toLowerCase()}, ${unusableHash}, false)
      on conflict (lower(email)) do nothing
      returning id, email, created_at, must_change_password`;
    if (!u) return undefined;
    await tx`
      insert into user_identities (user_id, provider, issuer, subject, username, email, last_sign_in_at)
      values (${u.id}, ${i.provider}, ${i.issuer}, ${i.subject}, ${i.username}, ${u.email}, now())`;
    return u;
  });
}

/**
 * An invited teammate (an account still on the temporary password someone else chose) accepts
 * through the provider: the identity is linked and the temporary password stops working.
 */
export async function acceptInvitation(
  sql: Sql,
  userId: string,
  unusableHash: string,
  i: { provider: string; issuer: string; subject: string; username: string | null; email: string },
): Promise<User | undefined> {
  return sql.begin(async (tx) => {
    const [u] = await tx<User[]>`
      update users set password_hash = ${unusableHash}, has_password = false, must_change_password = false
      where id = ${userId} and must_change_password
      returning id, email, created_at, must_change_password`;
    if (!u) return undefined;
    const [linked] = await tx`
      insert into user_identities (user_id, provider, issuer, subject, username, email, last_sign_in_at)
      values (${u.id}, ${i.provider}, ${i.issuer}, ${i.subject}, ${i.username}, ${i.email}, now())
      on conflict (issuer, subject) do nothing returning id`;
    if (!linked) throw new Error("identity linked concurrently");
    return u;
  });
}

export type OidcFlow = { provider: string; intent: "login" | "link"; user_id: string | null; nonce: string; next: string };

export async function insertFlow(sql: Sql, stateHash: Buffer, f: OidcFlow, ttlSeconds: number): Promise<void> {
  await sql`
    insert into oidc_flows (state_hash, provider, intent, user_id, nonce, next, expires_at)
    values (${stateHash}, ${f.provider}, ${f.intent}, ${f.user_id}, ${f.nonce}, ${f.next}, now() + make_interval(secs => ${ttlSeconds}))`;
  if (Math.random() < 0.05) sql`delete from oidc_flows where expires_at < now()`.catch(() => {});
}

/** Takes a flow once: a second callback with the same state (a replay) finds nothing. */
export async function takeFlow(sql: Sql, stateHash: Buffer): Promise<OidcFlow | undefined> {
  const [f] = await sql<(OidcFlow & { live: boolean })[]>`
    delete from oidc_flows where state_hash = ${stateHash}
    returning provider, intent, user_id, nonce, next, expires_at > now() as live`;
  return f?.live ? { provider: f.provider, intent: f.intent, user_id: f.user_id, nonce: f.nonce, next: f.next } : undefined;
}
