type Crumb = { timestamp?: unknown; category?: unknown; level?: unknown; message?: unknown; type?: unknown; data?: unknown };

const text = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** Epoch seconds or RFC 3339, as `HH:MM:SS` UTC. */
function clock(v: unknown): string {
  const ms = typeof v === "number" ? v * 1000 : typeof v === "string" ? Date.parse(/^\d+(\.\d+)?$/.test(v) ? String(Number(v) * 1000) : v) : NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(11, 19) : "";
}

/** The breadcrumbs a Sentry SDK sent with an event (kept in its context), oldest first. */
export function Breadcrumbs({ context }: { context: unknown }) {
  const crumbs = (context as { breadcrumbs?: unknown } | null)?.breadcrumbs;
  if (!Array.isArray(crumbs) || crumbs.length === 0) return null;
  return (
    <>
      <strong className="small">Breadcrumbs</strong>
      <table className="small breadcrumbs" data-testid="breadcrumbs">
        <thead><tr><th>Time (UTC)</th><th>Category</th><th>Level</th><th>Message</th></tr></thead>
        <tbody>
          {(crumbs as Crumb[]).map((c, i) => (
            <tr key={i}>
              <td>{clock(c.timestamp)}</td>
              <td>{text(c.category) || text(c.type)}</td>
              <td>{text(c.level)}</td>
              <td>{text(c.message) || (c.data ? JSON.stringify(c.data).slice(0, 300) : "")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** The context to show as JSON beside the breadcrumbs table: without the breadcrumbs, or null when nothing else is left. */
export function contextWithoutBreadcrumbs(context: unknown): unknown {
  if (context === null || typeof context !== "object" || !Array.isArray((context as { breadcrumbs?: unknown }).breadcrumbs)) return context;
  const { breadcrumbs: _b, ...rest } = context as Record<string, unknown>;
  return Object.keys(rest).length ? rest : null;
}
