import { ago, utc } from "./format";
import { Breadcrumbs, contextWithoutBreadcrumbs } from "./breadcrumbs";

export function LevelBadge({ level }: { level: string }) {
  return <span className={`badge level-${level}`}>{level}</span>;
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** The message an action answered with (errors in red), if any. */
export function ActionMessage({ data, intent }: { data: unknown; intent?: string }) {
  const d = data as { ok?: boolean; error?: string; message?: string; intent?: string } | undefined;
  if (!d || (intent && d.intent !== intent)) return null;
  if (d.ok === false && d.error) return <p className="alert error" role="alert">{d.error}</p>;
  if (d.message) return <p className="alert success" role="status">{d.message}</p>;
  return null;
}

export type EventView = {
  id: string | number;
  message: string;
  level: string;
  stack_trace?: string | null;
  user_id?: string | number | null;
  player_name?: string | null;
  trace_id?: string | null;
  job_id?: string | null;
  place_id?: string | number | null;
  game_version?: string | null;
  environment?: string | null;
  context?: unknown;
  tags?: string[] | null;
  count?: number;
  timestamp: Date | string;
};

/** Latest events, each expandable to its context, tags, player and stack trace. */
export function EventList({ events, now, traceHref }: { events: EventView[]; now: Date | string; traceHref?: (traceId: string) => string }) {
  if (events.length === 0) return <p className="muted">No stored events (older ones may have been removed by retention).</p>;
  return (
    <div>
      {events.map((e, i) => (
        <details className="event" key={String(e.id)} open={i === 0}>
          <summary>
            <LevelBadge level={e.level} />
            <span>{utc(e.timestamp, true)}</span>
            <span className="muted small">{ago(e.timestamp, now)}</span>
            {e.player_name || e.user_id ? (
              <span className="small">
                Player: <strong>{e.player_name ?? "unknown"}</strong>
                {e.user_id ? <span className="muted"> ({String(e.user_id)})</span> : null}
              </span>
            ) : null}
            {e.count && e.count > 1 ? <span className="small muted">×{e.count}</span> : null}
          </summary>
          <div>
            <dl className="facts small">
              <dt>Message</dt>
              <dd>{e.message}</dd>
              <dt>Environment</dt>
              <dd>{e.environment ?? "—"}</dd>
              {e.game_version ? (<><dt>Game version</dt><dd>{e.game_version}</dd></>) : null}
              {e.place_id ? (<><dt>Place</dt><dd>{String(e.place_id)}</dd></>) : null}
              {e.job_id ? (<><dt>Server (job)</dt><dd><code>{e.job_id}</code></dd></>) : null}
              {e.trace_id ? (
                <>
                  <dt>Trace</dt>
                  <dd>{traceHref ? <a href={traceHref(e.trace_id)}>{e.trace_id}</a> : <code>{e.trace_id}</code>}</dd>
                </>
              ) : null}
              {e.tags?.length ? (
                <>
                  <dt>Tags</dt>
                  <dd>{e.tags.map((t) => <span className="tag" key={t}>{t}</span>)}</dd>
                </>
              ) : null}
            </dl>
            <Breadcrumbs context={e.context} />
            {contextWithoutBreadcrumbs(e.context) != null ? (
              <>
                <strong className="small">Context</strong>
                <pre>{JSON.stringify(contextWithoutBreadcrumbs(e.context), null, 2)}</pre>
              </>
            ) : null}
            {e.stack_trace ? (
              <>
                <strong className="small">Stack trace</strong>
                <pre>{e.stack_trace}</pre>
              </>
            ) : null}
          </div>
        </details>
      ))}
    </div>
  );
}

/** x-axis label rule for hourly series: a label at each UTC midnight. */
export const dayLabels = (at: Date) => (at.getUTCHours() === 0 ? `${String(at.getUTCMonth() + 1).padStart(2, "0")}-${String(at.getUTCDate()).padStart(2, "0")}` : null);
