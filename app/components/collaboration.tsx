import { Form, Link } from "@remix-run/react";
import { Fragment } from "react";
import { ActionMessage, Submit, useResetOnSuccess } from "./ui";
import { Ago, At } from "./time";
import { plural } from "./format";

/**
 * Assignment, comments and the activity timeline of an issue: the issue page's panel, the issues
 * list's assignee tag, bulk assign and filter. Share pages render none of these.
 */

export type Teammate = { id: string; email: string };
type Person = { id: string; email: string | null } | null;
type When = Date | string;

/** A timeline entry as the page receives it (see db/activity.ts TimelineItem). */
export type TimelineView = { at: When; group_id: string; actor: Person; type: string } & Record<string, unknown>;

const TRIGGERS: Record<string, string> = { new_group: "new issue", regression: "regression", frequency: "frequency" };
const STATUS_VERB: Record<string, string> = { resolved: "resolved", ignored: "ignored", open: "reopened" };

/** Someone as the timeline names them: "you", their email, or "a former member". */
function who(p: Person, me: string) {
  if (!p) return "Roblox Monitor";
  if (p.id === me) return "You";
  return p.email ?? "A former member";
}

const URL_RE = /\bhttps?:\/\/[^\s<>"'`]+/g;

/**
 * Plain text with its http(s) URLs as links, and nothing else: no Markdown, no HTML (React escapes
 * the text; only the URL becomes an attribute, and only an http or https one). Trailing punctuation
 * stays text ("see https://x.test/a." links https://x.test/a).
 */
export function Linkified({ text }: { text: string }) {
  const parts: React.ReactNode[] = [];
  let last = 0;
  for (const m of text.matchAll(URL_RE)) {
    let url = m[0];
    const trail = /[.,;:!?)\]]+$/.exec(url);
    if (trail) url = url.slice(0, -trail[0].length);
    const at = m.index ?? 0;
    parts.push(text.slice(last, at));
    parts.push(<a key={at} href={url} rel="noopener noreferrer nofollow ugc" target="_blank">{url}</a>);
    last = at + url.length;
  }
  parts.push(text.slice(last));
  return <>{parts.map((p, i) => <Fragment key={i}>{p}</Fragment>)}</>;
}

/** The assignee picker of one issue (any member may assign). */
export function AssigneeForm({ teammates, assigneeId, me, disabled }: { teammates: Teammate[]; assigneeId: string | null; me: string; disabled?: boolean }) {
  // a merged-away issue has no assignee of its own: the issue it is in has it
  if (disabled) return null;
  return (
    <Form method="post" className="row assign-form" aria-label="Assign this issue">
      <input type="hidden" name="intent" value="assign" />
      <label htmlFor="assignee" style={{ margin: 0 }}>Assignee</label>
      <select id="assignee" name="assignee_id" defaultValue={assigneeId ?? "none"} key={assigneeId ?? "none"}>
        <option value="none">Unassigned</option>
        {teammates.map((t) => <option key={t.id} value={t.id}>{t.email}{t.id === me ? " (you)" : ""}</option>)}
      </select>
      <Submit pending="Saving…">Save</Submit>
      {assigneeId !== me ? (
        <Submit name="assignee_id" value={me} pending="Saving…">Assign to me</Submit>
      ) : null}
    </Form>
  );
}

/** The assignee of a list row, when there is one. */
export function AssigneeTag({ id, teammates, me }: { id: string | null | undefined; teammates: Teammate[]; me: string }) {
  if (!id) return null;
  const email = teammates.find((t) => t.id === id)?.email ?? "a former member";
  // the part before the @ keeps a narrow row readable; the whole address is on hover
  return <span className="tag assignee" title={`Assigned to ${email}`} data-testid="assignee-tag">→ {id === me ? "you" : email.split("@")[0]}</span>;
}

/** "Assign ticked to …": part of the issues list's bulk form (its ticked ids go with it). */
export function BulkAssign({ teammates, me }: { teammates: Teammate[]; me: string }) {
  return (
    <span className="row tight assign-bulk">
      <label htmlFor="bulk-assignee" className="small muted" style={{ margin: 0 }}>Assign to</label>
      <select id="bulk-assignee" name="assignee_id" defaultValue={me}>
        <option value="none">Nobody (unassign)</option>
        {teammates.map((t) => <option key={t.id} value={t.id}>{t.email}{t.id === me ? " (you)" : ""}</option>)}
      </select>
      <Submit name="intent" value="assign" pending="Assigning…">Assign</Submit>
    </span>
  );
}

/** The issues list's assignee filter: anyone, me, unassigned, or a member. */
export function AssignedFilter({ value, teammates, me }: { value: string; teammates: Teammate[]; me: string }) {
  return (
    <div>
      <label htmlFor="assigned">Assigned</label>
      <select id="assigned" name="assigned" defaultValue={value}>
        <option value="">Anyone</option>
        <option value="me">To me</option>
        <option value="none">Unassigned</option>
        {teammates.filter((t) => t.id !== me).map((t) => <option key={t.id} value={t.id}>{t.email}</option>)}
      </select>
    </div>
  );
}

/** What one timeline entry says. */
function Says({ item, me, issueId, base }: { item: TimelineView; me: string; issueId: string; base: string }) {
  const actor = who(item.actor, me);
  const v = (k: string) => (typeof item[k] === "string" ? (item[k] as string) : null);
  const version = v("version");
  const issueLink = (id: string | null, text: string) => (id ? <Link to={`${base}/issues/${id}`}>{text}</Link> : <>{text}</>);
  switch (item.type) {
    case "created":
      return <>First seen{version ? <> in version <strong>{version}</strong></> : null}</>;
    case "regressed":
      return <>Regressed: occurred again after it was resolved{version ? <>, in version <strong>{version}</strong></> : null}</>;
    case "status": {
      const to = v("to") ?? "";
      const snooze = item.snooze as { until?: string; occurrences?: number; users?: number } | null;
      const via = v("via");
      const by = via === "snooze_ended" ? "The snooze ended:" : via === "share_link" ? "Someone with an editor share link" : actor;
      return (
        <>
          {by} {STATUS_VERB[to] ?? to} this issue
          {to === "resolved" && version ? <> in version <strong>{version}</strong></> : null}
          {snooze ? <> until {[snooze.until ? <At key="u" d={snooze.until} /> : null, snooze.occurrences ? `${plural(snooze.occurrences, "more occurrence")}` : null, snooze.users ? `${plural(snooze.users, "more player")}` : null].filter(Boolean).map((x, i) => <Fragment key={i}>{i > 0 ? " or " : ""}{x}</Fragment>)}</> : null}
          {via === "grouping_rule" ? " (by a grouping rule)" : null}
        </>
      );
    }
    case "assigned": {
      const to = item.to as Person;
      const from = item.from as Person;
      if (v("via") === "member_removed") return <>{who(from, me)} left the project: unassigned{item.actor ? <> by {actor}</> : null}</>;
      if (v("via") === "merge") return <>Took over {who(to, me) === "You" ? "you" : who(to, me)} as assignee from a merged issue</>;
      if (!to) return <>{actor} unassigned {from ? (from.id === me ? "you" : from.email ?? "a former member") : "it"}</>;
      return <>{actor} assigned this issue to {to.id === item.actor?.id ? "themselves" : to.id === me ? "you" : to.email ?? "a former member"}</>;
    }
    case "merged": {
      const ids = (item.ids as string[]) ?? [];
      const into = v("into");
      const how = v("via") === "learned_template" ? " (a learned template)" : v("via") === "grouping_rule" ? " (a grouping rule)" : "";
      if (into) return <>{actor} merged this into {issueLink(into, "another issue")}{how}</>;
      return <>{actor} merged {plural(ids.length, "issue")} into this one{how}</>;
    }
    case "unmerged": {
      const from = v("from");
      if (from) return <>{actor} split this out of {issueLink(from, "the issue it was merged into")}</>;
      return <>{actor} split {plural(((item.ids as string[]) ?? []).length, "issue")} out of this one</>;
    }
    case "share_created":
      return <>{actor} created a {v("role")} share link</>;
    case "share_revoked":
      return <>{item.actor ? actor : "Its creator left the project:"} revoked a {v("role")} share link</>;
    case "alert_sent":
      return <>Alert sent ({TRIGGERS[v("trigger") ?? ""] ?? v("trigger")}){v("rule") ? <> by rule “{v("rule")}”</> : null}{v("channel") ? <> to {v("channel")}</> : null}</>;
    default:
      return <>{issueId ? null : null}</>;
  }
}

/**
 * The issue's timeline (oldest first, newest last beside the comment box) with its comments: each
 * comment's author edits it, its author or an owner or admin deletes it.
 */
export function Timeline({ items, me, manager, issueId, base, now, result }: { items: TimelineView[]; me: string; manager: boolean; issueId: string; base: string; now: When; result: unknown }) {
  const commentForm = useResetOnSuccess("comment");
  return (
    <section className="panel timeline" aria-labelledby="activity-title" data-testid="timeline">
      <h2 id="activity-title" style={{ marginTop: 0 }}>Activity</h2>
      <ol className="timeline-list">
        {items.map((item, i) => {
          const mine = item.actor?.id === me;
          const elsewhere = item.group_id !== issueId;
          return (
            <li key={`${item.type}-${i}`} className={`timeline-item ${item.type === "comment" ? "comment" : "event"}`} data-kind={item.type}>
              <div className="timeline-head small">
                {item.type === "comment" ? <strong>{who(item.actor, me)}</strong> : <span><Says item={item} me={me} issueId={issueId} base={base} /></span>}
                <span className="muted" title={new Date(item.at).toISOString()}>
                  {item.type === "comment" ? " commented " : " · "}<Ago d={item.at} now={now} />
                  {item.type === "comment" && item.edited_at ? " (edited)" : null}
                  {elsewhere ? <> · on a <Link to={`${base}/issues/${item.group_id}`}>merged issue</Link></> : null}
                </span>
              </div>
              {item.type === "comment" ? (
                <>
                  <p className="comment-body" data-testid="comment-body"><Linkified text={String(item.body)} /></p>
                  {!elsewhere && (mine || manager) ? (
                    <div className="row tight small">
                      {mine ? (
                        <details className="comment-edit">
                          <summary>Edit</summary>
                          <Form method="post" className="stack">
                            <input type="hidden" name="intent" value="comment-edit" />
                            <input type="hidden" name="comment_id" value={String(item.id)} />
                            <label htmlFor={`edit-${String(item.id)}`} className="visually-hidden">Edit comment</label>
                            <textarea id={`edit-${String(item.id)}`} name="body" rows={3} maxLength={5000} defaultValue={String(item.body)} required />
                            <Submit pending="Saving…">Save</Submit>
                          </Form>
                        </details>
                      ) : null}
                      <Form method="post" className="inline">
                        <input type="hidden" name="intent" value="comment-delete" />
                        <Submit className="danger link" name="comment_id" value={String(item.id)} pending="Deleting…" confirm="Delete this comment?">Delete</Submit>
                      </Form>
                    </div>
                  ) : null}
                </>
              ) : null}
            </li>
          );
        })}
      </ol>
      <ActionMessage data={result} intent="comment" />
      <ActionMessage data={result} intent="comment-edit" />
      <ActionMessage data={result} intent="comment-delete" />
      <Form method="post" className="stack comment-form" ref={commentForm}>
        <input type="hidden" name="intent" value="comment" />
        <label htmlFor="comment-body">Comment</label>
        <textarea id="comment-body" name="body" rows={3} maxLength={5000} required placeholder="Plain text; links become clickable." />
        <div><Submit className="primary" pending="Posting…">Comment</Submit></div>
      </Form>
    </section>
  );
}
