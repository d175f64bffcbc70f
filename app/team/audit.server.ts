import type { Sql } from "../../db/client.js";
import { isInstanceAdmin, listAudit, type AuditFilter, type AuditRow } from "../../db/audit.js";
import { fail, integer, text } from "~/errors/params.server";
import { forbidden } from "~/http.server";
import { asUuid } from "~/input.server";
import { authorize, MANAGERS, type Actor } from "./access.server";

/** Rows one CSV export holds at most; the filters (from, to) narrow a longer log. */
export const CSV_MAX_ROWS = 100_000;
const CSV_PAGE = 1000;

const ACTION_RE = /^[a-z_]+(\.[a-z_]+)?$/;

function time(q: URLSearchParams, name: string): Date | undefined {
  const raw = text(q, name);
  if (raw === undefined) return undefined;
  const d = new Date(raw.trim());
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw.trim()) || Number.isNaN(d.getTime())) fail(name, "must be an ISO 8601 date or time");
  return d;
}

/** The filters of `?action=&actor=&from=&to=&before=`: a 400 naming the parameter for each bad one. */
export function auditFilter(q: URLSearchParams): AuditFilter {
  const action = text(q, "action")?.trim();
  if (action !== undefined && (action.length > 100 || !ACTION_RE.test(action))) {
    fail("action", "must be an action name such as api_key.created, or a family such as member");
  }
  const actor = text(q, "actor")?.trim();
  const actorId = actor ? asUuid(actor) : undefined;
  if (actor && !actorId && (actor.length > 320 || !actor.includes("@"))) fail("actor", "must be a user id or an email");
  const from = time(q, "from");
  const to = time(q, "to");
  if (from && to && from > to) fail("from", "must not be after to");
  return {
    action: action || undefined,
    actorId,
    actorEmail: actor && !actorId ? actor : undefined,
    from,
    to,
    before: integer(q, "before", 0, 0) || undefined,
  };
}

const view = (r: AuditRow) => ({
  id: String(r.id),
  at: r.at.toISOString(),
  actor: r.actor_id === null && r.actor_email === null ? null : { id: r.actor_id, email: r.actor_email },
  action: r.action,
  target: r.target,
  details: r.details,
});
export type AuditView = ReturnType<typeof view>;

async function page(sql: Sql, projectId: string | null, q: URLSearchParams) {
  const filter = auditFilter(q);
  const limit = integer(q, "limit", 50, 1, 200);
  const rows = await listAudit(sql, projectId, filter, limit);
  return { data: rows.map(view), next_before: rows.length === limit ? String(rows[rows.length - 1].id) : null };
}

async function all(sql: Sql, projectId: string | null, q: URLSearchParams): Promise<AuditRow[]> {
  const filter = auditFilter(q);
  const out: AuditRow[] = [];
  for (;;) {
    const rows = await listAudit(sql, projectId, filter, Math.min(CSV_PAGE, CSV_MAX_ROWS - out.length));
    out.push(...rows);
    if (rows.length === 0 || out.length >= CSV_MAX_ROWS) return out;
    filter.before = rows[rows.length - 1].id;
  }
}

/** Owners and admins read their project's audit log; members get 403, everyone else 404. */
export async function projectAudit(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "read the audit log");
  return page(sql, projectId, q);
}

export async function projectAuditCsv(sql: Sql, actor: Actor, projectIdParam: string | undefined, q: URLSearchParams) {
  const { projectId } = await authorize(sql, actor, projectIdParam, MANAGERS, "read the audit log");
  return auditCsv(await all(sql, projectId, q));
}

async function requireInstanceAdmin(sql: Sql, actor: Actor) {
  if (!(await isInstanceAdmin(sql, actor.id))) {
    throw forbidden("Only an instance admin can read the instance's audit log; an operator grants it with `npm run cli -- user:admin --email E`.");
  }
}

/** The instance's rows (accounts, instance admins, deleted projects), for instance admins only. */
export async function instanceAudit(sql: Sql, actor: Actor, q: URLSearchParams) {
  await requireInstanceAdmin(sql, actor);
  return page(sql, null, q);
}

export async function instanceAuditCsv(sql: Sql, actor: Actor, q: URLSearchParams) {
  await requireInstanceAdmin(sql, actor);
  return auditCsv(await all(sql, null, q));
}

/**
 * One CSV cell: quoted when it holds a comma, quote or line break (quotes doubled, RFC 4180); a cell
 * a spreadsheet would read as a formula (starting with = + - @, or a tab or carriage return) gets a
 * leading apostrophe first, so opening the export runs nothing.
 */
export function csvCell(v: string | null): string {
  if (v === null) return "";
  const safe = /^[=+\-@\t\r]/.test(v) ? "'" + v : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const CSV_HEAD = ["id", "at", "actor_id", "actor_email", "action", "target", "details"];

export function auditCsv(rows: AuditRow[]): string {
  const lines = [CSV_HEAD.join(",")];
  for (const r of rows) {
    lines.push(
      [String(r.id), r.at.toISOString(), r.actor_id, r.actor_email, r.action, r.target, JSON.stringify(r.details)].map(csvCell).join(","),
    );
  }
  return lines.join("\r\n") + "\r\n";
}

export const csvResponse = (body: string, filename: string) =>
  new Response(body, {
    headers: {
      "content-type": "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="${filename}"`,
      "cache-control": "no-store",
    },
  });
