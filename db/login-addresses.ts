import type { Sql } from "./client.js";

/** Whether the account with this email signed in from this address within the last `days`. */
export async function isKnownAddress(sql: Sql, email: string, address: string, days: number): Promise<boolean> {
  const [r] = await sql<{ known: boolean }[]>`
    select exists (
      select 1 from login_known_addresses k join users u on u.id = k.user_id
      where lower(u.email) = ${email.trim().toLowerCase()} and k.address = ${address}
        and k.last_success_at > now() - make_interval(days => ${days})
    ) as known`;
  return r.known;
}

/** Records a successful sign-in from an address. */
export async function rememberAddress(sql: Sql, userId: string, address: string): Promise<void> {
  await sql`
    insert into login_known_addresses (user_id, address) values (${userId}, ${address})
    on conflict (user_id, address) do update set last_success_at = now()`;
}

/** Forgets addresses not used for a sign-in within the last `days`. */
export async function pruneKnownAddresses(sql: Sql, days: number): Promise<number> {
  const r = await sql`delete from login_known_addresses where last_success_at < now() - make_interval(days => ${days})`;
  return r.count;
}
