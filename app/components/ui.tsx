import { Link, useActionData, useNavigation } from "@remix-run/react";
import { useEffect, useRef } from "react";
import { num, plural } from "./format";
import { Ago, At } from "./time";
import { Breadcrumbs, contextWithoutBreadcrumbs } from "./breadcrumbs";
import { UserId } from "./issue-text";

export function LevelBadge({ level }: { level: string }) {
  return <span className={`badge level-${level}`}>{level}</span>;
}

/** A snooze's ends as an issue row holds them (the counts are targets on the issue's own counters). */
export type SnoozeFields = {
  snooze_until: Date | string | null;
  snooze_count: number | string | null;
  snooze_users: number | string | null;
  count: number | string;
  user_count: number | string;
};

/**
 * An issue's status. Given the snooze fields, an ignored issue that reopens by itself reads
 * "snoozed" (in its own colours, not ignored's grey), and with `until` also says when it reopens.
 */
export function StatusBadge({ status, snooze, until = false }: { status: string; snooze?: SnoozeFields; until?: boolean }) {
  if (status === "ignored" && snooze && (snooze.snooze_until || snooze.snooze_count || snooze.snooze_users)) {
    return (
      <span className="snoozed" data-testid="snoozed">
        <span className="badge status-snoozed" title="Ignored for now: it reopens by itself">snoozed</span>
        {until ? <> <span className="small muted">until <SnoozeEnds snooze={snooze} /></span></> : null}
      </span>
    );
  }
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** "2026-11-26 14:05 UTC or 40 more occurrences or 3 more players", whichever comes first. */
function SnoozeEnds({ snooze: s }: { snooze: SnoozeFields }) {
  const more = (target: number | string, now: number | string) => num(Math.max(0, Number(target) - Number(now)));
  const ends = [
    s.snooze_until ? <At d={s.snooze_until} /> : null,
    s.snooze_count ? <>{more(s.snooze_count, s.count)} more occurrences</> : null,
    s.snooze_users ? <>{more(s.snooze_users, s.user_count)} more players</> : null,
  ].filter(Boolean);
  return <>{ends.map((x, i) => <span key={i}>{i > 0 ? " or " : ""}{x}</span>)}</>;
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
  /** absent on share views */
  breadcrumbs?: unknown;
  count?: number;
  timestamp: Date | string;
  event_id?: string | null;
};

/** Latest events, each expandable to its context, tags, player and stack trace. */
export function EventList({
  events,
  now,
  traceHref,
  playerHref,
}: {
  events: EventView[];
  now: Date | string;
  traceHref?: (traceId: string) => string;
  playerHref?: (userId: string) => string;
}) {
  if (events.length === 0) return <p className="muted">No stored events (older ones may have been removed by retention).</p>;
  return (
    <div>
      {events.map((e, i) => (
        <details className="event" key={String(e.id)} open={i === 0}>
          <summary>
            <LevelBadge level={e.level} />
            <At d={e.timestamp} seconds />
            <span className="muted small"><Ago d={e.timestamp} now={now} /></span>
            {e.player_name || e.user_id ? (
              <span className="small">
                Player: {playerHref && e.user_id ? <a href={playerHref(String(e.user_id))}><strong>{e.player_name ?? "unknown"}</strong></a> : <strong>{e.player_name ?? "unknown"}</strong>}
                {e.user_id ? <>{" "}<span className="muted keep-together">(<UserId id={e.user_id} />)</span></> : null}
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
              {e.event_id ? (<><dt>Event id</dt><dd><code>{e.event_id}</code></dd></>) : null}
              {e.tags?.length ? (
                <>
                  <dt>Tags</dt>
                  <dd>{e.tags.map((t) => <span className="tag" key={t}>{t}</span>)}</dd>
                </>
              ) : null}
            </dl>
            <Breadcrumbs breadcrumbs={e.breadcrumbs} context={e.context} />
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

/** A submit button that says it is working while its form is on the way (disabled meanwhile). */
export function Submit({
  children,
  pending,
  name,
  value,
  className,
  form,
  confirm: question,
  when,
}: {
  children: React.ReactNode;
  pending?: string;
  name?: string;
  value?: string;
  className?: string;
  form?: string;
  confirm?: string;
  /** a field of the form that tells this button's form from its neighbours' (e.g. the row's id) */
  when?: [string, string];
}) {
  const nav = useNavigation();
  // the button whose form is being submitted: the one named in the form data, or the only one
  const mine =
    nav.state === "submitting" &&
    nav.formData !== undefined &&
    (name === undefined || nav.formData.get(name) === value) &&
    (when === undefined || nav.formData.get(when[0]) === when[1]);
  return (
    <button
      type="submit"
      name={name}
      value={value}
      className={className}
      form={form}
      disabled={mine}
      aria-busy={mine || undefined}
      onClick={question ? (e) => { if (!window.confirm(question)) e.preventDefault(); } : undefined}
    >
      {mine ? pending ?? "Working…" : children}
    </button>
  );
}

export function RegressedBadge() {
  return <span className="badge regressed" title="Came back after it was resolved">regressed</span>;
}

/** Page links, or a clear note when the page asked for is past the last one. */
/**
 * Previous / next links and "Page N of M". A total that is not exact (more than 10,000 matches, only
 * 10,000 counted) reads "of M+": then a page past M is shown while it holds `rows`, and the next page
 * is offered while this one is full.
 */
export function Pager({ page, total, pageSize, href, noun, exact = true, rows = 0 }: { page: number; total: number; pageSize: number; href: (p: number) => string; noun: string; exact?: boolean; rows?: number }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (page > pages && (exact || rows === 0)) {
    return (
      <div className="panel" role="status" data-testid="no-such-page">
        <p style={{ margin: 0 }}>
          There is no page {num(page)}: {total === 0 ? `no ${noun}s match.` : exact ? `${plural(total, noun)} fit on ${plural(pages, "page")}.` : `no ${noun}s are left this far.`}{" "}
          <Link to={href(total === 0 || !exact ? 1 : pages)}>{total === 0 || !exact ? "Go to the first page" : "Go to the last page"}</Link>
        </p>
      </div>
    );
  }
  const more = exact ? page < pages : rows >= pageSize;
  return (
    <nav className="pager" aria-label="Pages">
      {page > 1 ? <Link to={href(page - 1)}>← Previous</Link> : null}
      <span className="muted small">Page {num(page)} of {num(Math.max(page, pages))}{exact ? "" : "+"}</span>
      {more ? <Link to={href(page + 1)}>Next →</Link> : null}
    </nav>
  );
}

/** A ref for a form that starts empty again after its intent succeeded, so the next entry inherits nothing. */
export function useResetOnSuccess(intent: string) {
  const ref = useRef<HTMLFormElement>(null);
  const result = useActionData() as { ok?: boolean; intent?: string } | undefined;
  useEffect(() => {
    if (result?.ok && result.intent === intent) ref.current?.reset();
  }, [result, intent]);
  return ref;
}
