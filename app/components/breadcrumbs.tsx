type Crumb = { timestamp?: unknown; category?: unknown; level?: unknown; message?: unknown; type?: unknown; data?: unknown };

const text = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** Epoch seconds or RFC 3339, as an ISO string (empty when unusable). */
function isoOf(v: unknown): string {
  const ms = typeof v === "number" ? v * 1000 : typeof v === "string" ? Date.parse(/^\d+(\.\d+)?$/.test(v) ? String(Number(v) * 1000) : v) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : "";
}

/** The badge colour of a breadcrumb level (Sentry's names; the event levels' colours). */
const LEVEL_CLASS: Record<string, string> = { fatal: "error", error: "error", warning: "warn", warn: "warn" };

/**
 * An event's breadcrumbs, oldest first: its `breadcrumbs` field, or for events stored before that
 * field existed the `breadcrumbs` a Sentry SDK sent, which were kept in the context. A compact list
 * (time, level, category, message) whose lines wrap instead of scrolling sideways on a phone.
 */
export function Breadcrumbs({ breadcrumbs, context }: { breadcrumbs?: unknown; context?: unknown }) {
  const crumbs = Array.isArray(breadcrumbs) ? breadcrumbs : (context as { breadcrumbs?: unknown } | null)?.breadcrumbs;
  if (!Array.isArray(crumbs) || crumbs.length === 0) return null;
  return (
    <>
      <strong className="small">Breadcrumbs</strong>
      <ol className="small breadcrumbs" data-testid="breadcrumbs">
        {(crumbs as Crumb[]).map((c, i) => {
          const at = isoOf(c.timestamp);
          const level = text(c.level) || "info";
          const data = c.data && typeof c.data === "object" ? JSON.stringify(c.data) : "";
          return (
            <li key={i}>
              <time className="muted" dateTime={at || undefined} title={at ? `${at.slice(0, 10)} UTC` : undefined}>{at ? at.slice(11, 23) : "—"}</time>
              <span className={`badge level-${LEVEL_CLASS[level] ?? "info"}`}>{level}</span>
              <span className="crumb-category">{text(c.category) || text(c.type)}</span>
              <span className="crumb-message">
                {text(c.message)}
                {data ? <span className="muted"> {data.length > 300 ? `${data.slice(0, 300)}…` : data}</span> : null}
              </span>
            </li>
          );
        })}
      </ol>
    </>
  );
}

/** The context to show as JSON beside the breadcrumbs: without the breadcrumbs, or null when nothing else is left. */
export function contextWithoutBreadcrumbs(context: unknown): unknown {
  if (context === null || typeof context !== "object" || !Array.isArray((context as { breadcrumbs?: unknown }).breadcrumbs)) return context;
  const { breadcrumbs: _b, ...rest } = context as Record<string, unknown>;
  return Object.keys(rest).length ? rest : null;
}
