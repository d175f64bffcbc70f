import { Form, Link } from "@remix-run/react";
import { Ago } from "~/components/time";
import { ActionMessage, Submit, useResetOnSuccess } from "~/components/ui";
import { num, plural } from "~/components/format";

/** The form's fields (the Settings page posts them; app/dashboard/grouping-rules-page.server.ts reads them). */
export const RULE_FORM_FIELDS = ["name", "rule_action", "match_message", "match_message_regex", "match_path", "match_level", "match_tag"] as const;
export type RuleFormValues = Record<(typeof RULE_FORM_FIELDS)[number], string>;

type Match = { message?: string; message_regex?: string; path?: string; level?: string; tag?: string };
export type GroupingRuleView = {
  id: string;
  position: number;
  name: string | null;
  match: Match;
  action: "group" | "ignore";
  hits: number;
  hits_today: number;
  last_hit_at: string | Date | null;
};
type Preview = {
  scanned: number;
  matched: number;
  action: "group" | "ignore";
  issues: { id: string; title: string; status: string; events: number }[];
  would_merge: number;
  would_ignore: number;
};
type Answer = { ok?: boolean; intent?: string; error?: string; details?: { path: string; message: string }[]; values?: RuleFormValues; preview?: Preview; issueId?: string | null };

const EMPTY: RuleFormValues = { name: "", rule_action: "group", match_message: "", match_message_regex: "", match_path: "", match_level: "", match_tag: "" };

const valuesOfRule = (r: GroupingRuleView): RuleFormValues => ({
  name: r.name ?? "",
  rule_action: r.action,
  match_message: r.match.message ?? "",
  match_message_regex: r.match.message_regex ?? "",
  match_path: r.match.path ?? "",
  match_level: r.match.level ?? "",
  match_tag: r.match.tag ?? "",
});

/** A 400's detail paths (`match.message_regex`) as the form's field names (`match_message_regex`). */
function errorsByField(details: Answer["details"]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const d of details ?? []) {
    const field = d.path === "action" ? "rule_action" : d.path.replace(/^match\./, "match_");
    (out[field] ??= []).push(d.message);
  }
  return out;
}

function FieldError({ id, messages }: { id: string; messages?: string[] }) {
  if (!messages?.length) return null;
  return (
    <ul className="field-error" id={id} role="alert">
      {messages.map((m) => <li key={m}>{m}</li>)}
    </ul>
  );
}

/** What a rule matches, in words. */
function describe(m: Match) {
  const parts: React.ReactNode[] = [];
  if (m.message !== undefined) parts.push(<span key="m">message is <code>{m.message}</code></span>);
  if (m.message_regex !== undefined) parts.push(<span key="r">message matches <code>{m.message_regex}</code></span>);
  if (m.path !== undefined) parts.push(<span key="p">script under <code>{m.path}</code></span>);
  if (m.level !== undefined) parts.push(<span key="l">level <code>{m.level}</code></span>);
  if (m.tag !== undefined) parts.push(<span key="t">tag <code>{m.tag}</code></span>);
  return parts.flatMap((p, i) => (i === 0 ? [p] : [<span key={`and${i}`}> and </span>, p]));
}

function Field({ name, label, hint, values, errors, children }: { name: keyof RuleFormValues; label: string; hint?: string; values: RuleFormValues; errors: Record<string, string[]>; children?: React.ReactNode }) {
  const id = `grule-${name}`;
  const bad = errors[name]?.length ? true : undefined;
  return (
    <div className="grule-field">
      <label htmlFor={id}>{label}</label>
      {children ?? <input id={id} name={name} defaultValue={values[name]} aria-invalid={bad} aria-describedby={bad ? `${id}-error` : undefined} maxLength={name === "match_message" ? 8192 : 1000} />}
      {hint ? <p className="muted small grule-hint">{hint}</p> : null}
      <FieldError id={`${id}-error`} messages={errors[name]} />
    </div>
  );
}

export function GroupingRulesPanel({
  rules,
  max,
  manager,
  result,
  editing,
  now,
  base,
}: {
  rules: GroupingRuleView[];
  max: number;
  manager: boolean;
  result: unknown;
  editing: GroupingRuleView | null;
  now: Date | string;
  base: string;
}) {
  const a = result as Answer | undefined;
  const mine = a?.intent?.startsWith("grule-") ? a : undefined;
  const formAnswer = mine && (mine.intent === "grule-save" || mine.intent === "grule-preview") ? mine : undefined;
  const values = formAnswer?.values ?? (editing ? valuesOfRule(editing) : EMPTY);
  const errors = formAnswer && formAnswer.ok === false ? errorsByField(formAnswer.details) : {};
  const preview = formAnswer?.preview;
  const full = rules.length >= max && !editing;
  const formRef = useResetOnSuccess("grule-save");
  return (
    <section className="panel" id="grouping-rules" aria-labelledby="grouping-rules-title">
      <h2 id="grouping-rules-title" style={{ marginTop: 0 }}>Grouping rules</h2>
      <p className="muted small">
        Rules come before the default grouping, in order: the first rule an event matches decides. <b>Group</b> puts every matching event in one issue
        (titled by the rule's name); <b>ignore</b> drops it (not stored, not counted on any issue; counted here). All the fields a rule gives must match.
        Up to {max} rules.
      </p>
      {mine && mine.intent !== "grule-save" && mine.intent !== "grule-preview" ? <ActionMessage data={mine} /> : null}
      {mine?.issueId ? <p className="small"><Link to={`${base}/issues/${mine.issueId}`}>Open the rule's issue</Link></p> : null}
      {rules.length === 0 ? (
        <p className="muted">No grouping rules yet: every event is grouped by its stack and message.</p>
      ) : (
        <table className="stack-narrow grule-list">
          <thead><tr><th>Rule (in order)</th><th>Action</th><th>Ignored</th>{manager ? <th /> : null}</tr></thead>
          <tbody>
            {rules.map((r, i) => (
              <tr key={r.id} data-rule-id={r.id} className={editing?.id === r.id ? "grule-editing" : undefined}>
                <td>
                  <span className="muted">{i + 1}. </span>
                  {r.name ? <b>{r.name}</b> : <span className="muted">unnamed</span>}
                  <div className="small grule-match">{describe(r.match)}</div>
                </td>
                <td data-label="Action" className="small">{r.action}</td>
                <td data-label="Ignored" className="small">
                  {r.action === "ignore" ? (
                    <>{num(r.hits)} ({num(r.hits_today)} today), last <Ago d={r.last_hit_at} now={now} /></>
                  ) : (
                    <span className="muted">counted on its issue</span>
                  )}
                </td>
                {manager ? (
                  <td className="grule-actions-cell"><div className="row grule-actions">
                    <Form method="post" className="inline">
                      <input type="hidden" name="rule_id" value={r.id} />
                      <input type="hidden" name="position" value={String(i - 1)} />
                      <button type="submit" name="intent" value="grule-move" disabled={i === 0} aria-label={`Move rule ${i + 1} up`}>↑</button>
                    </Form>
                    <Form method="post" className="inline">
                      <input type="hidden" name="rule_id" value={r.id} />
                      <input type="hidden" name="position" value={String(i + 1)} />
                      <button type="submit" name="intent" value="grule-move" disabled={i === rules.length - 1} aria-label={`Move rule ${i + 1} down`}>↓</button>
                    </Form>
                    <Link className="button" to={`?rule=${r.id}#grouping-rules-form`} aria-label={`Edit rule ${i + 1}`}>Edit</Link>
                    <Form method="post" className="inline">
                      <input type="hidden" name="rule_id" value={r.id} />
                      <Submit name="intent" value="grule-apply" when={["rule_id", r.id]} pending="Applying…">
                        {r.action === "group" ? "Merge existing" : "Ignore existing"}
                      </Submit>
                    </Form>
                    <Form method="post" className="inline">
                      <input type="hidden" name="rule_id" value={r.id} />
                      <Submit name="intent" value="grule-delete" className="danger" when={["rule_id", r.id]} pending="Deleting…" confirm="Delete this grouping rule? Events are grouped without it from now on.">
                        Delete
                      </Submit>
                    </Form>
                  </div></td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {manager ? (
        <Form method="post" className="grule-form" id="grouping-rules-form" key={editing?.id ?? "new"} ref={formRef} aria-labelledby="grule-form-title">
          <h3 id="grule-form-title">{editing ? `Edit rule ${editing.position + 1}` : "New rule"}</h3>
          {editing ? <input type="hidden" name="rule_id" value={editing.id} /> : null}
          {formAnswer ? <ActionMessage data={formAnswer} /> : null}
          {full ? <p className="alert note">This project has {max} rules, the most it can hold: delete or combine rules before adding another.</p> : null}
          <div className="grule-grid">
            <Field name="name" label="Name (the issue's title)" values={values} errors={errors} />
            <Field name="rule_action" label="Action" values={values} errors={errors}>
              <select id="grule-rule_action" name="rule_action" defaultValue={values.rule_action}>
                <option value="group">group into one issue</option>
                <option value="ignore">ignore (drop)</option>
              </select>
            </Field>
            <Field name="match_message_regex" label="Message matches (RE2 regex)" hint="Unanchored; ^ and $ anchor, (?i) ignores case. No lookaround or backreferences." values={values} errors={errors} />
            <Field name="match_message" label="Message is exactly" values={values} errors={errors} />
            <Field name="match_path" label="Script path starts with" hint="A path and what is under it: ServerScriptService.Combat covers ServerScriptService.Combat.Hitbox." values={values} errors={errors} />
            <Field name="match_level" label="Level" values={values} errors={errors}>
              <select id="grule-match_level" name="match_level" defaultValue={values.match_level}>
                <option value="">any</option>
                <option value="error">error</option>
                <option value="warn">warn</option>
                <option value="info">info</option>
              </select>
            </Field>
            <Field name="match_tag" label="Has the tag" values={values} errors={errors} />
          </div>
          <FieldError id="grule-match-error" messages={errors.match} />
          <div className="row" style={{ marginTop: 12 }}>
            <Submit name="intent" value="grule-preview" pending="Previewing…">Preview</Submit>
            <Submit name="intent" value="grule-save" pending="Saving…">{editing ? "Save rule" : "Add rule"}</Submit>
            {editing ? <Link to="?#grouping-rules">Cancel</Link> : null}
          </div>
          {preview ? <PreviewResult preview={preview} base={base} /> : null}
        </Form>
      ) : (
        <p className="muted small">Only owners and admins add and change grouping rules.</p>
      )}
    </section>
  );
}

function PreviewResult({ preview: p, base }: { preview: Preview; base: string }) {
  const effect =
    p.action === "group"
      ? p.issues.length > 1
        ? `Applying it would merge ${plural(p.would_merge, "issue")} into one.`
        : "Applying it would merge nothing: the matches are in at most one issue."
      : `Applying it would set ${plural(p.would_ignore, "issue")} to ignored.`;
  return (
    <div className="grule-preview" role="status" aria-label="Preview">
      <p>
        <b>Matches {num(p.matched)} of the latest {plural(p.scanned, "stored event")}</b>, in {plural(p.issues.length, "issue")}. {effect}
      </p>
      {p.issues.length > 0 ? (
        <table className="stack-narrow">
          <thead><tr><th>Issue</th><th>Events</th><th>Status</th></tr></thead>
          <tbody>
            {p.issues.slice(0, 50).map((i) => (
              <tr key={i.id}>
                <td className="grule-issue"><Link to={`${base}/issues/${i.id}`}>{i.title.slice(0, 120)}</Link></td>
                <td data-label="Events">{num(i.events)}</td>
                <td data-label="Status">{i.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
