import type { Sql, TxSql } from "./client.js";

/** The sealed TOTP secret of an account, and whether it is on (confirmed with a code). */
export type TwoFactorRow = {
  secret_ciphertext: Buffer;
  secret_iv: Buffer;
  secret_tag: Buffer;
  enabled_at: Date | null;
  last_used_step: string | null;
};

export async function getTwoFactor(sql: Sql, userId: string): Promise<TwoFactorRow | undefined> {
  const [r] = await sql<TwoFactorRow[]>`
    select secret_ciphertext, secret_iv, secret_tag, enabled_at, last_used_step::text as last_used_step
    from user_two_factor where user_id = ${userId}`;
  return r;
}

/** A new (pending) enrollment, replacing an earlier pending one; undefined when two-factor is already on. */
export async function upsertPendingTwoFactor(sql: Sql, userId: string, sealed: { ciphertext: Buffer; iv: Buffer; tag: Buffer }): Promise<boolean> {
  const rows = await sql`
    insert into user_two_factor (user_id, secret_ciphertext, secret_iv, secret_tag)
    values (${userId}, ${sealed.ciphertext}, ${sealed.iv}, ${sealed.tag})
    on conflict (user_id) do update set
      secret_ciphertext = excluded.secret_ciphertext, secret_iv = excluded.secret_iv, secret_tag = excluded.secret_tag,
      last_used_step = null, created_at = now()
    where user_two_factor.enabled_at is null
    returning 1`;
  return rows.length > 0;
}

/**
 * Accepts a code's time step: only when it is later than the last accepted one (one statement, so two
 * requests racing with the same code cannot both pass). With `enable`, also turns a pending
 * enrollment on and stores its recovery codes in the same transaction.
 */
export async function acceptStep(sql: Sql, userId: string, step: number, opts: { enable?: { recoveryHashes: Buffer[] } } = {}): Promise<boolean> {
  return sql.begin(async (tx) => {
    const rows = await tx`
      update user_two_factor set last_used_step = ${step},
        enabled_at = case when ${Boolean(opts.enable)}::boolean then coalesce(enabled_at, now()) else enabled_at end
      where user_id = ${userId} and (last_used_step is null or last_used_step < ${step})
        and (enabled_at is not null) = ${!opts.enable}::boolean
      returning 1`;
    if (rows.length === 0) return false;
    if (opts.enable) await replaceCodes(tx as unknown as Sql, userId, opts.enable.recoveryHashes);
    return true;
  });
}

async function replaceCodes(sql: Sql, userId: string, hashes: Buffer[]) {
  await sql`delete from user_recovery_codes where user_id = ${userId}`;
  if (hashes.length) await sql`insert into user_recovery_codes ${sql(hashes.map((h) => ({ user_id: userId, code_hash: h })))}`;
}

/** A fresh set of recovery codes: the old ones, used or not, stop working. */
export async function replaceRecoveryCodes(sql: Sql, userId: string, hashes: Buffer[]): Promise<void> {
  await sql.begin((tx) => replaceCodes(tx as unknown as Sql, userId, hashes));
}

/** Spends a recovery code: true once, for an unused code of this user (a conditional update, so never twice). */
export async function useRecoveryCode(sql: Sql, userId: string, hash: Buffer): Promise<boolean> {
  const rows = await sql`
    update user_recovery_codes set used_at = now()
    where user_id = ${userId} and code_hash = ${hash} and used_at is null
    returning 1`;
  return rows.length > 0;
}

export async function unusedRecoveryCodes(sql: Sql, userId: string): Promise<number> {
  const [r] = await sql<{ n: number }[]>`select count(*)::int as n from user_recovery_codes where user_id = ${userId} and used_at is null`;
  return r.n;
}

/** Turns two-factor off: the secret and the recovery codes go. */
export async function deleteTwoFactor(sql: Sql, userId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`delete from user_recovery_codes where user_id = ${userId}`;
    await tx`delete from user_two_factor where user_id = ${userId}`;
  });
}

export type TwoFactorRequirement = "off" | "owners_admins" | "everyone";

export async function getTwoFactorRequirement(sql: Sql, projectId: string): Promise<TwoFactorRequirement | undefined> {
  const [r] = await sql<{ two_factor_required: TwoFactorRequirement }[]>`select two_factor_required from projects where id = ${projectId}`;
  return r?.two_factor_required;
}

/**
 * Sets a project's requirement and answers what it replaced, in one statement: the row is locked
 * before its old value is read, so two changes racing each see the other's result (off → everyone,
 * then everyone → owners_admins), never both the same old value; the audit row, written in the same
 * transaction, names what was really replaced. With `requireActorFactor`, the change happens only
 * while that account has a second factor on (a requirement covering the caller's own role must not
 * lock them out), decided by the same statement.
 * Returns the old value, or why nothing changed: `no_project`, or `no_factor`.
 */
export async function setTwoFactorRequirement(
  sql: Sql,
  projectId: string,
  value: TwoFactorRequirement,
  opts: { requireActorFactor?: string; audit: (before: TwoFactorRequirement, tx: TxSql) => Promise<void> },
): Promise<{ before: TwoFactorRequirement } | "no_project" | "no_factor"> {
  return sql.begin(async (tx) => {
    const actor = opts.requireActorFactor ?? null;
    const [r] = await tx<{ before: TwoFactorRequirement | null; changed: boolean }[]>`
      with old as (select id, two_factor_required from projects where id = ${projectId} for update),
      changed as (
        update projects p set two_factor_required = ${value}
        from old
        where p.id = old.id
          and (${actor}::uuid is null or exists (select 1 from user_two_factor t where t.user_id = ${actor}::uuid and t.enabled_at is not null))
        returning old.two_factor_required as before
      )
      select (select two_factor_required from old) as before, exists (select 1 from changed) as changed`;
    if (r.before === null) return "no_project";
    if (!r.changed) return "no_factor";
    if (r.before !== value) await opts.audit(r.before, tx);
    return { before: r.before };
  });
}

/**
 * The user's role in the project, and whether the project's requirement covers that role while the
 * user has no second factor turned on: one read, made by every project-scoped request. An account
 * without a password (it signs in only through an OpenID Connect provider) meets the requirement
 * there: its second factor is the provider's (docs/two-factor.md).
 */
export async function getRoleAndTwoFactor(
  sql: Sql,
  projectId: string,
  userId: string,
): Promise<{ role: "owner" | "admin" | "member"; missingTwoFactor: boolean } | undefined> {
  const [r] = await sql<{ role: "owner" | "admin" | "member"; missing: boolean }[]>`
    select m.role,
      (p.two_factor_required = 'everyone' or (p.two_factor_required = 'owners_admins' and m.role in ('owner', 'admin')))
        and u.has_password
        and not exists (select 1 from user_two_factor t where t.user_id = m.user_id and t.enabled_at is not null) as missing
    from project_members m join projects p on p.id = m.project_id join users u on u.id = m.user_id
    where m.project_id = ${projectId} and m.user_id = ${userId}`;
  return r && { role: r.role, missingTwoFactor: r.missing };
}
