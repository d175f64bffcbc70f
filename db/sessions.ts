import type { Sql } from "./client.js";
import type { User } from "./users.js";

export async function insertSession(sql: Sql, tokenHash: Buffer, userId: string, expiresAt: Date): Promise<void> {
  await sql`insert into sessions (token_hash, user_id, expires_at) values (${tokenHash}, ${userId}, ${expiresAt})`;
}

/** The user behind a live session; expired sessions answer nothing. */
export async function findSessionUser(sql: Sql, tokenHash: Buffer): Promise<User | undefined> {
  const [u] = await sql<User[]>`
    select u.id, u.email, u.created_at, u.must_change_password from sessions s join users u on u.id = s.user_id
    where s.token_hash = ${tokenHash} and s.expires_at > now()`;
  return u;
}

export async function deleteSession(sql: Sql, tokenHash: Buffer): Promise<void> {
  await sql`delete from sessions where token_hash = ${tokenHash}`;
}

/** Every session of a user except the one given (after a password change). */
export async function deleteOtherSessions(sql: Sql, userId: string, keepTokenHash: Buffer | null): Promise<void> {
  await sql`delete from sessions where user_id = ${userId} and token_hash <> ${keepTokenHash ?? Buffer.alloc(0)}`;
}

export async function deleteExpiredSessions(sql: Sql): Promise<number> {
  const r = await sql`delete from sessions where expires_at <= now()`;
  return r.count;
}
