import type { Sql, TxSql } from "./client.js";

/**
 * The audit log (docs/audit.md): one row per change an owner, admin or operator made, per project
 * (`projectId`) or for the instance (`projectId` null).
 *
 * What a row never holds is a secret. Callers name keys by id, prefix and name, alert channels by
 * kind and name, accounts by email; they never pass key material, webhook URLs, passwords or share
 * tokens. As a second line, `details` members whose name says they carry one (url, secret,
 * password, token, api_key, key material) are dropped here before the row is written.
 *
 * Pass the change's transaction where the change has one, so the row commits with it; otherwise the
 * row is written right after the change.
 */
export type AuditEntry = {
  projectId: string | null;
  actorId: string | null;
  action: string;
  target: string | null;
  details?: Record<string, unknown>;
};

const SECRET_NAME = /url|secret|password|token|api_?key|public_?key|key_material|dsn$/i;

/** `details` without the members whose name says they carry a secret, nested objects included. */
export function withoutSecrets(details: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(details)) {
    if (SECRET_NAME.test(k) || v === undefined) continue;
    out[k] = v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof Date) ? withoutSecrets(v as Record<string, unknown>) : v;
  }
  return out;
}

export async function recordAudit(sql: Sql | TxSql, e: AuditEntry): Promise<void> {
  const details = withoutSecrets(e.details ?? {});
  await sql`
    insert into audit_log (project_id, actor_id, actor_email, action, target, details)
    values (
      ${e.projectId}, ${e.actorId}, (select email from users where id = ${e.actorId}),
      ${e.action}, ${e.target === null ? null : e.target.slice(0, 500)}, ${sql.json(details as never)}
    )`;
}

export type AuditRow = {
  id: number;
  at: Date;
  project_id: string | null;
  actor_id: string | null;
  actor_email: string | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
};

export type AuditFilter = {
  /** an action name, or a family (`member` matches `member.added`, `member.role_changed`…) */
  action?: string;
  /** an actor's user id or email */
  actorId?: string;
  actorEmail?: string;
  from?: Date;
  to?: Date;
  /** rows older than this id (the previous page's last) */
  before?: number;
};

/** The project's rows (or the instance's, `projectId` null), newest first. */
export function listAudit(sql: Sql, projectId: string | null, f: AuditFilter, limit: number) {
  const family = f.action && !f.action.includes(".") ? f.action + ".%" : null;
  return sql<AuditRow[]>`
    select id, at, project_id, actor_id, actor_email, action, target, details
    from audit_log
    where ${projectId === null ? sql`project_id is null` : sql`project_id = ${projectId}`}
      ${f.action ? (family ? sql`and (action = ${f.action} or action like ${family})` : sql`and action = ${f.action}`) : sql``}
      ${f.actorId ? sql`and actor_id = ${f.actorId}` : sql``}
      ${f.actorEmail ? sql`and lower(actor_email) = ${f.actorEmail.toLowerCase()}` : sql``}
      ${f.from ? sql`and at >= ${f.from}` : sql``}
      ${f.to ? sql`and at < ${f.to}` : sql``}
      ${f.before ? sql`and id < ${f.before}` : sql``}
    order by id desc
    limit ${limit}`;
}

/** Rows older than the audit retention go, in bounded batches; returns how many. */
export async function pruneAudit(sql: Sql, retentionDays: number, batchSize = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const { count } = await sql`
      delete from audit_log where id in (
        select id from audit_log where at < now() - make_interval(days => ${retentionDays}) limit ${batchSize})`;
    total += count;
    if (count < batchSize) return total;
  }
}

export async function isInstanceAdmin(sql: Sql, userId: string): Promise<boolean> {
  const [r] = await sql<{ instance_admin: boolean }[]>`select instance_admin from users where id = ${userId}`;
  return r?.instance_admin ?? false;
}

/** Grants or takes back the instance admin flag; returns the account's id, or undefined for an unknown email. */
export async function setInstanceAdmin(sql: Sql, email: string, admin: boolean): Promise<string | undefined> {
  const [r] = await sql<{ id: string }[]>`
    update users set instance_admin = ${admin} where lower(email) = ${email.trim().toLowerCase()} returning id`;
  return r?.id;
}
