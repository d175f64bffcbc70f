import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams, useSearchParams } from "@remix-run/react";
import { useEffect, useState } from "react";
import { Submit, useResetOnSuccess } from "~/components/ui";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError } from "~/http.server";
import { authorize, EVERYONE } from "~/team/access.server";
import { createChannel, editChannel, listProjectChannels, removeChannel, testChannel } from "~/alerts/channels.server";
import { createRule, editRule, listProjectRules, removeRule } from "~/alerts/rules.server";
import { isEconomyTrigger, isHealthTrigger, triggerName } from "~/alerts/triggers";
import { environmentsOf, RuleForm, ruleInputFromForm } from "~/components/alerts/rule-form";
import { knownEnvironments } from "../../db/alerts.js";
import { HealthRuleFields, healthRuleInput, healthRuleSummary, HEALTH_TRIGGER_HELP } from "~/components/alerts/health-rule-fields";
import { loadMap } from "~/economy/map.server";
import { groupDigits } from "~/alerts/economy-payloads.server";
import { readingAsMember } from "~/services.server";
import { retryAfterHeaders } from "~/dashboard/page.server";

export const meta: MetaFunction = () => [{ title: "Alerts · Roblox Monitor" }];

/** A refused test alert's Retry-After reaches the browser with its 429. */
export const headers = retryAfterHeaders;

/** Typed errors become an error page (loader) or a message next to the form (action), like the Team API's bodies. */
async function load<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (ApiError.is(err)) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
}

async function act<T>(intent: string, id: string, fn: () => Promise<T>) {
  try {
    return await fn();
  } catch (err) {
    if (!ApiError.is(err)) throw err;
    return data({ ok: false as const, intent, id, error: err.message }, { status: err.status, headers: err.headers });
  }
}

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return load(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => {
      const { role, projectId } = await authorize(sql, user, params.projectId, EVERYONE);
      return {
        role,
        channels: await listProjectChannels({ sql }, user, params.projectId),
        rules: (await listProjectRules({ sql }, user, params.projectId)).map((r) => ({ ...r, min_amount_text: r.min_amount === null ? null : groupDigits(r.min_amount) })),
        // economy rules name a currency of the map
        currencies: (await loadMap(sql, projectId)).map.currencies.map((c) => ({ key: c.key, name: c.name })),
        publicUrl: context.services.config.publicUrl ?? null,
        // what a rule's environment filter picks from
        environments: await knownEnvironments(sql, projectId),
        // email channels need the operator's SMTP server
        emailEnabled: Boolean(context.services.config.smtpUrl),
      };
    }),
  );
};

const num = (v: FormDataEntryValue | null) => (v === null || v === "" ? null : Number(v));
const list = (v: FormDataEntryValue | null) =>
  String(v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** Each form names its intent; each intent is the same domain verb the Team API calls. */
export const action = async ({ request, params, context }: ActionFunctionArgs) => {
  const { services } = context;
  const user = await requirePageUser(services, request);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  const p = params.projectId;
  const id = String(form.get("id") ?? "");
  return act(intent, id, async () => {
    switch (intent) {
      case "channel-create": {
        const r = await createChannel(services, user, p, {
          name: form.get("name"),
          kind: form.get("kind"),
          ...(form.get("kind") === "email" ? { recipients: list(form.get("recipients")) } : { url: form.get("url") ?? "" }),
          secret: form.get("secret") || undefined,
        });
        return { ok: true as const, intent, message: `Channel "${r.channel.name}" saved.`, secret: "secret" in r ? r.secret : undefined };
      }
      case "channel-edit": {
        const patch: Record<string, unknown> = {};
        if (form.get("name")) patch.name = form.get("name");
        if (form.get("url")) patch.url = form.get("url");
        if (form.get("secret")) patch.secret = form.get("secret");
        if (form.get("recipients") !== null) patch.recipients = list(form.get("recipients"));
        await editChannel(services, user, p, id, patch);
        return { ok: true as const, intent, message: "Channel updated." };
      }
      case "channel-enable":
        await editChannel(services, user, p, id, { enabled: form.get("enabled") === "true" });
        return { ok: true as const, intent, message: form.get("enabled") === "true" ? "Channel enabled." : "Channel disabled." };
      case "channel-delete":
        await removeChannel(services, user, p, id);
        return { ok: true as const, intent, message: "Channel deleted." };
      case "channel-test":
        try {
          await testChannel(services, user, { channel_id: id });
          return { ok: true as const, intent, message: "Test alert sent." };
        } catch (err) {
          if (ApiError.is(err) && err.status === 502) return { ok: false as const, intent, error: err.message };
          throw err;
        }
      case "rule-create":
        await createRule(services, user, p, ruleInputFromForm(form));
        return { ok: true as const, intent, message: "Rule created." };
      case "rule-edit": {
        const r = await editRule(services, user, p, id, ruleInputFromForm(form));
        return { ok: true as const, intent, message: `Rule "${r.rule.name}" saved.` };
      }
      case "health-rule-create":
        await createRule(services, user, p, {
          name: form.get("name"),
          ...healthRuleInput(form),
          environments: environmentsOf(form),
          channel_ids: form.getAll("channel_ids").map(String),
          cooldown_minutes: num(form.get("cooldown_minutes")) ?? 30,
        });
        return { ok: true as const, intent, message: "Health rule created." };
      case "health-rule-edit":
        await editRule(services, user, p, id, {
          ...healthRuleInput(form),
          environments: environmentsOf(form),
          cooldown_minutes: num(form.get("cooldown_minutes")) ?? 30,
        });
        return { ok: true as const, intent, message: "Health rule updated." };
      case "rule-enable":
        await editRule(services, user, p, id, { enabled: form.get("enabled") === "true" });
        return { ok: true as const, intent, message: form.get("enabled") === "true" ? "Rule enabled." : "Rule disabled." };
      case "rule-delete":
        await removeRule(services, user, p, id);
        return { ok: true as const, intent, message: "Rule deleted." };
      default:
        return { ok: false as const, intent, error: "Unknown action." };
    }
  });
};

function Message({ result, intents }: { result: unknown; intents: string[] }) {
  const r = result as { ok?: boolean; intent?: string; error?: string; message?: string; secret?: string } | undefined;
  if (!r || !intents.includes(r.intent ?? "")) return null;
  if (r.ok === false) return <p className="alert error" role="alert">{r.error}</p>;
  return (
    <p className="alert success" role="status">
      {r.message}
      {r.secret ? <> Signing secret (shown once): <code data-testid="webhook-secret">{r.secret}</code></> : null}
    </p>
  );
}

const KIND_NAME: Record<string, string> = { discord: "Discord", slack: "Slack", webhook: "Signed webhook", email: "Email" };

/** What each channel kind's URL looks like, as the URL box's placeholder. */
const URL_EXAMPLE: Record<string, string> = {
  discord: "https://discord.com/api/webhooks/…",
  slack: "https://hooks.slack.com/services/…",
  webhook: "https://example.com/alerts",
};

/** A rule's state as the table shows it: an enabled rule that reaches no enabled channel says so. */
const STATE_TEXT: Record<string, string> = { active: "enabled", no_active_channel: "enabled — no active channel", disabled: "disabled" };

const Intent = ({ intent, id }: { intent: string; id?: string }) => (
  <>
    <input type="hidden" name="intent" value={intent} />
    {id ? <input type="hidden" name="id" value={id} /> : null}
  </>
);

export default function Alerts() {
  const { channels, rules, role, publicUrl, currencies, environments, emailEnabled } = useLoaderData<typeof loader>();
  const currencyName = new Map(currencies.map((c) => [c.key, c.name]));
  const manager = role === "owner" || role === "admin";
  const result = useActionData<typeof action>();
  const channelForm = useResetOnSuccess("channel-create");
  const ruleForm = useResetOnSuccess("rule-create");
  const [kind, setKind] = useState("discord");
  // a new key after each successful create: the rule form starts again from its defaults
  const [ruleFormKey, setRuleFormKey] = useState(0);
  const ruleResult = result as { ok?: boolean; intent?: string; id?: string } | undefined;
  useEffect(() => {
    if (ruleResult?.ok && ruleResult.intent === "rule-create") setRuleFormKey((k) => k + 1);
    if (ruleResult?.ok && ruleResult.intent === "channel-create") setKind("discord");
  }, [ruleResult]);
  const [search] = useSearchParams();
  // the rule being edited: ?edit=<id>, or the one whose save was just refused
  const editId = search.get("edit") ?? (ruleResult?.intent === "rule-edit" && ruleResult.ok === false ? ruleResult.id : null);
  const editing = manager ? rules.find((r) => r.id === editId && !isHealthTrigger(r.trigger)) : undefined;
  const base = `/projects/${useParams().projectId}`;
  const channelName = new Map(channels.map((c) => [c.id, c.name]));
  return (
    <>
      <p className="row">
        <strong>Alerts</strong>
        <Link to={`${base}/deliveries`}>Delivery log</Link>
      </p>
      {!publicUrl ? (
        <p className="alert note" data-testid="public-url-note">
          <code>PUBLIC_URL</code> is not set, so alert messages carry no link to the issue. Set it to the address your team
          opens the dashboard at (for example <code>PUBLIC_URL=https://monitor.example.com</code>) in the service's environment and restart it.
        </p>
      ) : null}
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Channels</h2>
        <Message result={result} intents={["channel-create", "channel-edit", "channel-enable", "channel-delete", "channel-test"]} />
        {channels.length === 0 ? <p className="muted">No channels yet. Add a Discord or Slack webhook, your own endpoint, or email.</p> : null}
        <table className="stack-narrow">
          <thead><tr><th>Name</th><th>Kind</th><th>Destination</th><th>State</th><th /></tr></thead>
          <tbody>
            {channels.map((c) => (
              <tr key={c.id} data-testid={`channel-${c.name}`}>
                <td>{c.name}</td>
                <td>{KIND_NAME[c.kind] ?? c.kind}</td>
                <td data-label="Destination">
                  {c.kind === "email" ? <span className="small" data-testid="channel-recipients">{c.recipients.join(", ")}</span> : <code className="url" title={c.url ?? ""}>{c.url}</code>}
                </td>
                <td>{c.enabled ? "enabled" : "disabled"}</td>
                <td className="row" hidden={!manager}>
                  <Form method="post" className="inline"><Intent intent="channel-test" id={c.id} /><Submit pending="Sending…">Send test</Submit></Form>
                  <Form method="post" className="inline">
                    <Intent intent="channel-enable" id={c.id} />
                    <input type="hidden" name="enabled" value={String(!c.enabled)} />
                    <Submit pending="Saving…">{c.enabled ? "Disable" : "Enable"}</Submit>
                  </Form>
                  <Form method="post" className="inline"><Intent intent="channel-delete" id={c.id} /><Submit className="danger" pending="Deleting…" confirm={`Delete the channel "${c.name}"? Rules stop sending to it.`}>Delete</Submit></Form>
                  <details>
                    <summary>Edit</summary>
                    <Form method="post" className="row" style={{ alignItems: "flex-end" }}>
                      <Intent intent="channel-edit" id={c.id} />
                      <label className="field">Name<input name="name" defaultValue={c.name} aria-label="Channel name" maxLength={100} /></label>
                      {c.kind === "email" ? (
                        <label className="field">Recipients<input name="recipients" defaultValue={c.recipients.join(", ")} aria-label="Recipients" size={40} /></label>
                      ) : (
                        <label className="field">New URL<input name="url" placeholder="leave empty to keep" aria-label="New URL" /></label>
                      )}
                      {c.kind === "webhook" ? <label className="field">New secret<input name="secret" placeholder="optional" aria-label="New secret" /></label> : null}
                      <Submit pending="Saving…">Save</Submit>
                    </Form>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <Form method="post" className="row" style={{ marginTop: 12, alignItems: "flex-end" }} hidden={!manager} ref={channelForm}>
          <Intent intent="channel-create" />
          <label className="field">
            Name
            <input name="name" placeholder="e.g. #errors" required maxLength={100} aria-label="Channel name" />
          </label>
          <label className="field">
            Kind
            <select name="kind" value={kind} onChange={(e) => setKind(e.target.value)} aria-label="Kind">
              <option value="discord">Discord webhook</option>
              <option value="slack">Slack incoming webhook</option>
              <option value="webhook">Signed webhook</option>
              <option value="email" disabled={!emailEnabled}>{emailEnabled ? "Email" : "Email (needs SMTP_URL on the server)"}</option>
            </select>
          </label>
          {kind === "email" ? (
            <label className="field">
              Recipients
              <input name="recipients" type="text" placeholder="oncall@example.com, lead@example.com" required size={40} aria-label="Recipients" />
            </label>
          ) : (
            <label className="field">
              URL
              <input name="url" type="url" placeholder={URL_EXAMPLE[kind]} required size={48} aria-label="Webhook URL" />
            </label>
          )}
          {kind === "webhook" ? (
            <label className="field">
              Signing secret
              <input name="secret" placeholder="generated if empty" aria-label="Secret" />
            </label>
          ) : null}
          <Submit pending="Adding…">Add channel</Submit>
        </Form>
        <p className="muted small">
          URLs hold the webhook's token: they are stored encrypted and shown masked after saving.
          {emailEnabled ? " Email channels send through this server's SMTP server, up to 20 addresses each." : " Email channels need the operator to set SMTP_URL and SMTP_FROM."}
        </p>
      </section>

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Rules</h2>
        <Message result={result} intents={["rule-create", "rule-edit", "rule-enable", "rule-delete", "health-rule-edit"]} />
        {rules.length === 0 ? <p className="muted">No rules yet: nothing alerts.</p> : null}
        <table className="stack-narrow">
          <thead><tr><th>Name</th><th>Trigger</th><th>Filters</th><th>Channels</th><th>Cooldown</th><th>State</th><th /></tr></thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id} data-testid={`rule-${r.name}`}>
                <td>{r.name}</td>
                <td>
                  {triggerName(r.trigger)}
                  {r.trigger === "frequency" ? `: ${r.threshold_count} in ${r.window_minutes} min` : null}
                  {r.trigger === "economy_anomaly" ? `: ${r.currency ? (currencyName.get(r.currency) ?? r.currency) : "any currency"}${r.min_amount_text ? `, at least ${r.min_amount_text}` : ""}` : null}
                  {r.trigger === "supply_growth" ? `: more than ${r.growth_pct}% a day, ${r.currency ? (currencyName.get(r.currency) ?? r.currency) : "each currency"}` : null}
                  {isHealthTrigger(r.trigger) ? `: ${healthRuleSummary(r)}` : null}
                </td>
                <td className="small" data-label="Filters">
                  {[r.levels.length ? `levels: ${r.levels.join(", ")}` : "", r.environments.length ? `env: ${r.environments.join(", ")}` : "", r.message_contains ? `message contains "${r.message_contains}"` : "",
                    r.server_only ? "server errors only" : "", r.min_players > 0 ? `${r.min_players}+ players` : ""]
                    .filter(Boolean)
                    .join("; ") || (isEconomyTrigger(r.trigger) ? "—" : "all")}
                </td>
                <td className="small" data-label="Channels">
                  {r.channel_ids.length === 0 ? <span className="muted">none</span> : r.channel_ids.map((id) => channelName.get(id) ?? "?").join(", ")}
                </td>
                <td data-label="Cooldown">{isEconomyTrigger(r.trigger) ? "once each" : isHealthTrigger(r.trigger) ? `fires and recovers once; ${r.cooldown_minutes} min before firing again` : `${r.cooldown_minutes} min`}</td>
                <td data-label="State" data-testid="rule-state">
                  {r.state === "no_active_channel" ? <span className="badge status-open" title="Every channel of this rule is disabled or deleted: nothing is sent.">{STATE_TEXT[r.state]}</span> : STATE_TEXT[r.state]}
                </td>
                <td className="row" hidden={!manager}>
                  {!isHealthTrigger(r.trigger) ? <Link to={`?edit=${r.id}`} className="button" aria-label={`Edit the rule ${r.name}`}>Edit</Link> : null}
                  <Form method="post" className="inline">
                    <Intent intent="rule-enable" id={r.id} />
                    <input type="hidden" name="enabled" value={String(!r.enabled)} />
                    <Submit pending="Saving…">{r.enabled ? "Disable" : "Enable"}</Submit>
                  </Form>
                  <Form method="post" className="inline"><Intent intent="rule-delete" id={r.id} /><Submit className="danger" pending="Deleting…" confirm={`Delete the rule "${r.name}"?`}>Delete</Submit></Form>
                  {isHealthTrigger(r.trigger) ? (
                    <details>
                      <summary>Edit</summary>
                      <Form method="post" data-testid={`health-rule-edit-${r.name}`}>
                        <Intent intent="health-rule-edit" id={r.id} />
                        <HealthRuleFields rule={r} environments={environments} idPrefix={`health-rule-edit-${r.id}`} />
                        <Submit pending="Saving…">Save</Submit>
                      </Form>
                    </details>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {!manager ? (
          <p className="muted small">Only owners and admins change channels and rules.</p>
        ) : editing ? (
          <Form method="post" action={`${base}/alerts`} style={{ marginTop: 12 }} className="rule-form" data-testid="rule-edit-form" key={editing.id}>
            <h3 style={{ margin: "0 0 8px" }}>Edit the rule "{editing.name}"</h3>
            <Intent intent="rule-edit" id={editing.id} />
            <RuleForm rule={editing} channels={channels} currencies={currencies} environments={environments} />
            <div className="row" style={{ marginTop: 8 }}>
              <Submit pending="Saving…">Save rule</Submit>
              <Link to={`${base}/alerts`}>Cancel</Link>
            </div>
          </Form>
        ) : channels.length > 0 ? (
          <Form method="post" style={{ marginTop: 12 }} ref={ruleForm} className="rule-form" key={`create-${ruleFormKey}`}>
            <h3 style={{ margin: "0 0 8px" }}>New rule</h3>
            <Intent intent="rule-create" />
            <RuleForm channels={channels} currencies={currencies} environments={environments} />
            <div className="row" style={{ marginTop: 8 }}>
              <Submit pending="Creating…">Create rule</Submit>
            </div>
          </Form>
        ) : (
          <p className="muted small">Add a channel first; rules send to channels.</p>
        )}
        {manager && channels.length > 0 ? (
          <details style={{ marginTop: 12 }} data-testid="health-rule-form" open={(ruleResult?.intent === "health-rule-create" && ruleResult.ok === false) || undefined}>
            <summary>New health rule: error rate, error-free sessions, server memory and heartbeat, out-of-memory closes, live servers</summary>
            <Message result={result} intents={["health-rule-create"]} />
            <Form method="post" style={{ marginTop: 8 }}>
              <Intent intent="health-rule-create" />
              <div className="row">
                <label className="field">
                  Health alert name
                  <input name="name" required maxLength={100} aria-label="Health alert name" />
                </label>
              </div>
              <HealthRuleFields environments={environments} />
              <fieldset className="row" style={{ marginTop: 8, border: 0, padding: 0 }}>
                <legend className="small muted" style={{ float: "left", marginRight: 8 }}>Send to</legend>
                {channels.map((c) => (
                  <label key={c.id} className="check-label"><input type="checkbox" name="channel_ids" value={c.id} defaultChecked={channels.length === 1} /> {c.name}</label>
                ))}
              </fieldset>
              <Submit pending="Creating…">Create health rule</Submit>
            </Form>
            <ul className="muted small">
              {Object.entries(HEALTH_TRIGGER_HELP).map(([t, help]) => (
                <li key={t}><strong>{triggerName(t)}</strong>: {help}</li>
              ))}
            </ul>
          </details>
        ) : null}
        <p className="muted small">Each rule alerts at most once per issue within its cooldown; ignored issues never alert.
          Errors relayed from game clients can be made up by an exploiting player: "server errors only", or a minimum number of
          distinct players, keeps such text from paging the team. Economy rules alert once per anomaly, unexplained gain,
          or currency and day. Health rules send one message when their condition starts and one when it is over.
          A rule whose channels are all disabled reads "enabled — no active channel": it sends nothing until one is enabled.</p>
      </section>
    </>
  );
}
