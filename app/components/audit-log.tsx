import { Form, Link } from "@remix-run/react";
import { At } from "~/components/time";
import { actionLabel } from "~/team/audit-actions";

export type AuditEntryView = {
  id: string;
  at: string;
  actor: { id: string | null; email: string | null } | null;
  action: string;
  target: string | null;
  details: Record<string, unknown>;
};

export type AuditFilters = { action: string; actor: string; from: string; to: string };

/** `from → to` for a change, a list joined, anything else as JSON. */
function detailValue(v: unknown): string {
  if (v === null) return "none";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return v.map(detailValue).join(", ");
  if (typeof v === "object" && v !== null && "from" in v && "to" in v) {
    const c = v as { from: unknown; to: unknown };
    return `${detailValue(c.from)} → ${detailValue(c.to)}`;
  }
  return JSON.stringify(v);
}

const cut = (s: string, n = 120) => (s.length > n ? `${s.slice(0, n)}…` : s);

/**
 * An audit log, newest first: the filter form (action or action family, actor, from, to), the CSV
 * export of what the filters select, one entry per change, and a link to older entries.
 */
export function AuditLog({
  rows,
  nextBefore,
  filters,
  csvHref,
  error,
  actions,
}: {
  rows: AuditEntryView[];
  nextBefore: string | null;
  filters: AuditFilters;
  csvHref: string;
  error: string | null;
  actions: Record<string, string>;
}) {
  const families = [...new Set(Object.keys(actions).map((a) => a.split(".")[0]))];
  const older = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ""));
  if (nextBefore) older.set("before", nextBefore);
  return (
    <>
      <Form key={JSON.stringify(filters)} method="get" className="filters panel" role="search" data-testid="audit-filters">
        <div>
          <label htmlFor="audit-action">Action</label>
          <select id="audit-action" name="action" defaultValue={filters.action}>
            <option value="">Any</option>
            {families.map((f) => (
              <optgroup key={f} label={f.replaceAll("_", " ")}>
                <option value={f}>Any {f.replaceAll("_", " ")} action</option>
                {Object.entries(actions)
                  .filter(([a]) => a.startsWith(f + "."))
                  .map(([a, label]) => <option key={a} value={a}>{label}</option>)}
              </optgroup>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="audit-actor">Who (email)</label>
          <input id="audit-actor" name="actor" type="search" defaultValue={filters.actor} autoComplete="off" />
        </div>
        <div>
          <label htmlFor="audit-from">From (UTC)</label>
          <input id="audit-from" name="from" type="date" defaultValue={filters.from} />
        </div>
        <div>
          <label htmlFor="audit-to">Before (UTC)</label>
          <input id="audit-to" name="to" type="date" defaultValue={filters.to} />
        </div>
        <div className="row tight">
          <button type="submit">Filter</button>
          <a href={csvHref} download data-testid="audit-csv">Export CSV</a>
        </div>
      </Form>
      {error ? <p className="alert error" role="alert">{error}</p> : null}
      <section className="panel">
        {rows.length === 0 ? <p className="muted" data-testid="audit-empty">No changes recorded{filters.action || filters.actor || filters.from || filters.to ? " that match these filters" : " yet"}.</p> : null}
        <ol className="audit-list">
          {rows.map((r) => (
            <li key={r.id} data-testid="audit-entry" data-action={r.action}>
              <div className="audit-head">
                <strong>{actionLabel(r.action)}</strong>
                {r.target ? <span className="audit-target" title={r.target}>{cut(r.target, 80)}</span> : null}
              </div>
              <div className="small muted">
                {r.actor?.email ?? (r.actor ? "a removed account" : r.action.startsWith("account.sign_in_") ? "a sign-in attempt" : "the command line")} · <At d={r.at} seconds /> · <code>{r.action}</code>
              </div>
              {Object.keys(r.details).length > 0 ? (
                <ul className="audit-details small">
                  {"from" in r.details && "to" in r.details ? (
                    <li><span className="muted">changed:</span> {cut(detailValue({ from: r.details.from, to: r.details.to }))}</li>
                  ) : null}
                  {Object.entries(r.details).filter(([k]) => !(k === "from" || k === "to") || !("from" in r.details && "to" in r.details)).map(([k, v]) => (
                    <li key={k}><span className="muted">{k.replaceAll("_", " ")}:</span> {cut(detailValue(v))}</li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
        {nextBefore ? <p><Link to={`?${older}`}>Older entries</Link></p> : null}
      </section>
    </>
  );
}
