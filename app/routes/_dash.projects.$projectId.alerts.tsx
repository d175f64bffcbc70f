import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { useEffect, useState } from "react";
import { Submit, useResetOnSuccess } from "~/components/ui";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError } from "~/http.server";
import { authorize, EVERYONE } from "~/team/access.server";
import { createChannel, editChannel, listProjectChannels, removeChannel, testChannel } from "~/alerts/channels.server";
import { createRule, editRule, listProjectRules, removeRule } from "~/alerts/rules.server";
import { isEconomyTrigger, isHealthTrigger, TRIGGER_NAME, triggerName } from "~/alerts/triggers";
import { HealthRuleFields, healthRuleInput, healthRuleSummary, HEALTH_TRIGGER_HELP } from "~/components/alerts/health-rule-fields";
import { loadMap } from "~/economy/map.server";
import { groupDigits } from "~/alerts/economy-payloads.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Alerts · Roblox Monitor" }];

/** Typed errors become an error page (loader) or a message next to the form (action), like the Team API's bodies. */
async function load<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (ApiError.is(err)) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
}

async function act<T>(intent: string, fn: () => Promise<T>) {
  try {
    return await fn();
  } catch (err) {
    if (!ApiError.is(err)) throw err;
    return data({ ok: false as const, intent, error: err.message }, { status: err.status });
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
  return act(intent, async () => {
    switch (intent) {
      case "channel-create": {
        const r = await createChannel(services, user, p, {
          name: form.get("name"),
          kind: form.get("kind"),
          url: form.get("url"),
          secret: form.get("secret") || undefined,
        });
        return { ok: true as const, intent, message: `Channel "${r.channel.name}" saved.`, secret: "secret" in r ? r.secret : undefined };
      }
      case "channel-edit": {
        const patch: Record<string, unknown> = {};
        if (form.get("name")) patch.name = form.get("name");
        if (form.get("url")) patch.url = form.get("url");
        if (form.get("secret")) patch.secret = form.get("secret");
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
      case "rule-create": {
        const trigger = String(form.get("trigger") ?? "");
        if (isEconomyTrigger(trigger)) {
          await createRule(services, user, p, {
            name: form.get("name"),
            trigger,
            currency: String(form.get("currency") ?? "") || null,
            ...(trigger === "economy_anomaly" ? { min_amount: String(form.get("min_amount") ?? "").replace(/[,\s_]/g, "") || null } : {}),
            ...(trigger === "supply_growth" ? { growth_pct: num(form.get("growth_pct")) } : {}),
            channel_ids: form.getAll("channel_ids").map(String),
          });
          return { ok: true as const, intent, message: "Rule created." };
        }
        await createRule(services, user, p, {
          name: form.get("name"),
          trigger: form.get("trigger"),
          threshold_count: form.get("trigger") === "frequency" ? num(form.get("threshold_count")) : null,
          window_minutes: form.get("trigger") === "frequency" ? num(form.get("window_minutes")) : null,
          levels: form.getAll("levels").map(String),
          environments: list(form.get("environments")),
          message_contains: String(form.get("message_contains") ?? "") || null,
          channel_ids: form.getAll("channel_ids").map(String),
          cooldown_minutes: num(form.get("cooldown_minutes")) ?? 30,
          server_only: form.get("server_only") === "true",
          min_players: num(form.get("min_players")) ?? 0,
        });
        return { ok: true as const, intent, message: "Rule created." };
      }
      case "health-rule-create":
        await createRule(services, user, p, {
          name: form.get("name"),
          ...healthRuleInput(form),
          environments: list(form.get("environments")),
          channel_ids: form.getAll("channel_ids").map(String),
          cooldown_minutes: num(form.get("cooldown_minutes")) ?? 30,
        });
        return { ok: true as const, intent, message: "Health rule created." };
      case "health-rule-edit":
        await editRule(services, user, p, id, {
          ...healthRuleInput(form),
          environments: list(form.get("environments")),
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

const KIND_NAME: Record<string, string> = { discord: "Discord", slack: "Slack", webhook: "Signed webhook" };

/** What each channel kind's URL looks like, as the URL box's placeholder. */
const URL_EXAMPLE: Record<string, string> = {
  discord: "https://discord.com/api/webhooks/…",
  slack: "https://hooks.slack.com/services/…",
  webhook: "https://example.com/alerts",
};

const Intent = ({ intent, id }: { intent: string; id?: string }) => (
  <>
    <input type="hidden" name="intent" value={intent} />
    {id ? <input type="hidden" name="id" value={id} /> : null}
  </>
);

export default function Alerts() {
  const { channels, rules, role, publicUrl, currencies } = useLoaderData<typeof loader>();
  const currencyName = new Map(currencies.map((c) => [c.key, c.name]));
  const manager = role === "owner" || role === "admin";
  const result = useActionData<typeof action>();
  const channelForm = useResetOnSuccess("channel-create");
  const ruleForm = useResetOnSuccess("rule-create");
  const [trigger, setTrigger] = useState("new_group");
  const economy = isEconomyTrigger(trigger);
  const [kind, setKind] = useState("discord");
  const ruleResult = result as { ok?: boolean; intent?: string } | undefined;
  useEffect(() => {
    if (ruleResult?.ok && ruleResult.intent === "rule-create") setTrigger("new_group");
    if (ruleResult?.ok && ruleResult.intent === "channel-create") setKind("discord");
  }, [ruleResult]);
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
        {channels.length === 0 ? <p className="muted">No channels yet. Add a Discord or Slack webhook, or your own endpoint.</p> : null}
        <table className="stack-narrow">
          <thead><tr><th>Name</th><th>Kind</th><th>URL</th><th>State</th><th /></tr></thead>
          <tbody>
            {channels.map((c) => (
              <tr key={c.id} data-testid={`channel-${c.name}`}>
                <td>{c.name}</td>
                <td>{KIND_NAME[c.kind] ?? c.kind}</td>
                <td><code className="url" title={c.url}>{c.url}</code></td>
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
                    <Form method="post" className="row">
                      <Intent intent="channel-edit" id={c.id} />
                      <input name="name" defaultValue={c.name} aria-label="Channel name" maxLength={100} />
                      <input name="url" placeholder="New URL (leave empty to keep)" aria-label="New URL" />
                      {c.kind === "webhook" ? <input name="secret" placeholder="New secret (optional)" aria-label="New secret" /> : null}
                      <Submit pending="Saving…">Save</Submit>
                    </Form>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <Form method="post" className="row" style={{ marginTop: 12 }} hidden={!manager} ref={channelForm}>
          <Intent intent="channel-create" />
          <input name="name" placeholder="Name, e.g. #errors" required maxLength={100} aria-label="Channel name" />
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value)} aria-label="Kind">
            <option value="discord">Discord webhook</option>
            <option value="slack">Slack incoming webhook</option>
            <option value="webhook">Signed webhook</option>
          </select>
          <input name="url" type="url" placeholder={URL_EXAMPLE[kind]} required size={48} aria-label="Webhook URL" />
          {kind === "webhook" ? <input name="secret" placeholder="Signing secret (generated if empty)" aria-label="Secret" /> : null}
          <Submit pending="Adding…">Add channel</Submit>
        </Form>
        <p className="muted small">URLs hold the webhook's token: they are stored encrypted and shown masked after saving.</p>
      </section>

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Rules</h2>
        <Message result={result} intents={["rule-create", "rule-enable", "rule-delete", "health-rule-edit"]} />
        {rules.length === 0 ? <p className="muted">No rules yet: nothing alerts.</p> : null}
        <table className="stack-narrow">
          <thead><tr><th>Name</th><th>Trigger</th><th>Filters</th><th>Channels</th><th>Cooldown</th><th>State</th><th /></tr></thead>
          <tbody>
            {rules.map((r) => (
              <tr key={r.id}>
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
                <td className="small" data-label="Channels">{r.channel_ids.map((id) => channelName.get(id) ?? "?").join(", ") || <span className="muted">none</span>}</td>
                <td data-label="Cooldown">{isEconomyTrigger(r.trigger) ? "once each" : isHealthTrigger(r.trigger) ? `fires and recovers once; ${r.cooldown_minutes} min before firing again` : `${r.cooldown_minutes} min`}</td>
                <td>{r.enabled ? "enabled" : "disabled"}</td>
                <td className="row" hidden={!manager}>
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
                        <HealthRuleFields rule={r} />
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
        ) : channels.length > 0 ? (
          <Form method="post" style={{ marginTop: 12 }} ref={ruleForm}>
            <Intent intent="rule-create" />
            <div className="row">
              <input name="name" placeholder="Rule name" required maxLength={100} aria-label="Rule name" />
              <select name="trigger" value={trigger} onChange={(e) => setTrigger(e.target.value)} aria-label="Trigger">
                <option value="new_group">{TRIGGER_NAME.new_group}: an issue is seen for the first time</option>
                <option value="regression">{TRIGGER_NAME.regression}: a resolved issue comes back</option>
                <option value="frequency">{TRIGGER_NAME.frequency}: an issue occurs N times in M minutes</option>
                <option value="economy_anomaly">{TRIGGER_NAME.economy_anomaly}: a player's balance jumps, or gains what no flow explains</option>
                <option value="supply_growth">{TRIGGER_NAME.supply_growth}: a currency's supply grows more than X% in a day</option>
              </select>
              {trigger === "frequency" ? (
                <span className="row tight">
                  <input name="threshold_count" type="number" min={1} step={1} placeholder="N" aria-label="Threshold count" required style={{ width: "6em" }} />
                  <span>times in</span>
                  <input name="window_minutes" type="number" min={1} max={1440} step={1} placeholder="M" aria-label="Window minutes" required style={{ width: "5em" }} />
                  <span>minutes</span>
                </span>
              ) : null}
              {economy ? (
                <label className="row tight">
                  Currency
                  <select name="currency" aria-label="Currency" defaultValue="">
                    <option value="">{trigger === "supply_growth" ? "Each currency" : "Any currency"}</option>
                    {currencies.map((c) => (
                      <option key={c.key} value={c.key}>{c.name}</option>
                    ))}
                  </select>
                </label>
              ) : null}
              {trigger === "economy_anomaly" ? (
                <label className="row tight">
                  At least
                  <input name="min_amount" inputMode="decimal" pattern="[0-9][0-9,_ ]*(\.[0-9]+)?" placeholder="any size" aria-label="Minimum amount" style={{ width: "9em" }} />
                </label>
              ) : null}
              {trigger === "supply_growth" ? (
                <label className="row tight">
                  More than
                  <input name="growth_pct" type="number" min={0.01} step="any" required placeholder="X" aria-label="Growth percent" style={{ width: "6em" }} />
                  % in a UTC day
                </label>
              ) : null}
              <label className="row tight" hidden={economy}>
                Cooldown <input name="cooldown_minutes" type="number" min={0} defaultValue={30} aria-label="Cooldown minutes" style={{ width: "5em" }} /> minutes
              </label>
            </div>
            {trigger === "economy_anomaly" ? (
              <p className="muted small" data-testid="economy-rule-help">
                Alerts on each rise that is an anomaly under the currency's detection threshold (see Economy settings), and on
                each gain the game's recorded flows do not explain, naming the player and the jump. Leave the minimum empty to
                alert on every one.
              </p>
            ) : null}
            {trigger === "supply_growth" ? (
              <p className="muted small" data-testid="economy-rule-help">
                Growth is the day's change without new players' opening balances, over the supply at the end of the day before.
                One alert per currency and day.
              </p>
            ) : null}
            <div className="row" style={{ marginTop: 8 }} hidden={economy}>
              <fieldset className="row tight" style={{ border: 0, padding: 0, margin: 0 }}>
                <legend className="small muted" style={{ float: "left", marginRight: 8 }}>Levels (all if none ticked)</legend>
                {["error", "warn", "info"].map((l) => (
                  <label key={l}><input type="checkbox" name="levels" value={l} /> {l}</label>
                ))}
              </fieldset>
              <input name="environments" placeholder="Environments, comma-separated (all if empty)" aria-label="Environments" />
              <input name="message_contains" placeholder="Message contains" aria-label="Message contains" />
            </div>
            <div className="row" style={{ marginTop: 8 }} hidden={economy}>
              <label><input type="checkbox" name="server_only" value="true" /> Server errors only (skip errors only game clients reported)</label>
              <label>
                At least <input name="min_players" type="number" min={0} step={1} defaultValue={0} aria-label="Minimum players" style={{ width: "5em" }} /> players (0: any)
              </label>
            </div>
            <div className="row" style={{ marginTop: 8 }}>
              <span className="small muted">Send to</span>
              {channels.map((c) => (
                <label key={c.id}><input type="checkbox" name="channel_ids" value={c.id} defaultChecked={channels.length === 1} /> {c.name}</label>
              ))}
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
                <input name="name" placeholder="Rule name" required maxLength={100} aria-label="Health alert name" />
              </div>
              <HealthRuleFields />
              <div className="row" style={{ marginTop: 8 }}>
                <span className="small muted">Send to</span>
                {channels.map((c) => (
                  <label key={c.id}><input type="checkbox" name="channel_ids" value={c.id} defaultChecked={channels.length === 1} /> {c.name}</label>
                ))}
                <Submit pending="Creating…">Create health rule</Submit>
              </div>
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
          or currency and day. Health rules send one message when their condition starts and one when it is over.</p>
      </section>
    </>
  );
}
