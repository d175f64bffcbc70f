import { useState } from "react";
import type { HealthRuleFields, RuleFields } from "../../../db/alerts.js";
import { TRIGGER_NAME, isEconomyTrigger } from "~/alerts/triggers";

/**
 * The form of an issue or economy alert rule on the Alerts page, for creating one and for editing
 * one (prefilled from `rule`). Every box has a visible label. `ruleInputFromForm` turns the posted
 * form into the Team API's rule fields, the same for both.
 */

/** A rule as the page holds it: the stored fields of an issue or economy rule (JSON numbers for growth). */
export type FormRule = Omit<RuleFields, "trigger" | "enabled" | "growth_pct" | keyof HealthRuleFields> & { trigger: string; growth_pct: number | null };

const num = (v: FormDataEntryValue | null) => (v === null || String(v).trim() === "" ? null : Number(v));
const list = (v: FormDataEntryValue | null) =>
  String(v ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** The ticked environments and the ones typed in "Other environments", each once. */
export const environmentsOf = (form: FormData) => [...new Set([...form.getAll("environments").map(String).filter(Boolean), ...list(form.get("environments_other"))])];

/** The posted rule form as the Team API's fields (the same for create and edit). */
export function ruleInputFromForm(form: FormData): Record<string, unknown> {
  const trigger = String(form.get("trigger") ?? "");
  const common = { name: form.get("name"), trigger, channel_ids: form.getAll("channel_ids").map(String) };
  if (isEconomyTrigger(trigger)) {
    return {
      ...common,
      currency: String(form.get("currency") ?? "") || null,
      min_amount: trigger === "economy_anomaly" ? String(form.get("min_amount") ?? "").replace(/[,\s_]/g, "") || null : null,
      growth_pct: trigger === "supply_growth" ? num(form.get("growth_pct")) : null,
    };
  }
  return {
    ...common,
    threshold_count: trigger === "frequency" ? num(form.get("threshold_count")) : null,
    window_minutes: trigger === "frequency" ? num(form.get("window_minutes")) : null,
    levels: form.getAll("levels").map(String),
    environments: environmentsOf(form),
    message_contains: String(form.get("message_contains") ?? "") || null,
    cooldown_minutes: num(form.get("cooldown_minutes")) ?? 30,
    server_only: form.get("server_only") === "true",
    min_players: num(form.get("min_players")) ?? 0,
  };
}

/**
 * A pick-list of the environments the project's data has seen (issues and server health), plus a box
 * for ones not seen yet (a rule set up before a new environment's first error). None ticked: all.
 */
export function EnvironmentPicker({ known, selected = [], idPrefix }: { known: string[]; selected?: string[]; idPrefix: string }) {
  const names = [...new Set([...known, ...selected])].sort();
  return (
    <fieldset className="env-picker" data-testid={`${idPrefix}-environments`}>
      <legend>Environments <span className="muted small">(all if none ticked)</span></legend>
      {names.length === 0 ? <span className="muted small">No environment seen yet.</span> : null}
      <span className="row tight">
        {names.map((e) => (
          <label key={e} className="check-label">
            <input type="checkbox" name="environments" value={e} defaultChecked={selected.includes(e)} /> {e}
          </label>
        ))}
      </span>
      <label className="field">
        Other environments
        <input name="environments_other" placeholder="comma-separated, e.g. beta" aria-label="Other environments" />
      </label>
    </fieldset>
  );
}

type Channel = { id: string; name: string; enabled: boolean };

export function RuleForm({
  rule,
  channels,
  currencies,
  environments,
}: {
  rule?: FormRule;
  channels: Channel[];
  currencies: { key: string; name: string }[];
  environments: string[];
}) {
  const [trigger, setTrigger] = useState(rule?.trigger ?? "new_group");
  const economy = isEconomyTrigger(trigger);
  const prefix = rule ? "rule-edit" : "rule-create";
  return (
    <>
      <div className="row" style={{ alignItems: "flex-end" }}>
        <label className="field">
          Rule name
          <input name="name" required maxLength={100} defaultValue={rule?.name} aria-label="Rule name" />
        </label>
        <label className="field">
          Trigger
          <select name="trigger" value={trigger} onChange={(e) => setTrigger(e.target.value)} aria-label="Trigger">
            <option value="new_group">{TRIGGER_NAME.new_group}: an issue is seen for the first time</option>
            <option value="regression">{TRIGGER_NAME.regression}: a resolved issue comes back</option>
            <option value="frequency">{TRIGGER_NAME.frequency}: an issue occurs N times in M minutes</option>
            <option value="economy_anomaly">{TRIGGER_NAME.economy_anomaly}: a player's balance jumps, or gains what no flow explains</option>
            <option value="supply_growth">{TRIGGER_NAME.supply_growth}: a currency's supply grows more than X% in a day</option>
          </select>
        </label>
        {trigger === "frequency" ? (
          <span className="row tight" style={{ alignItems: "flex-end" }}>
            <label className="field">
              Occurrences (N)
              <input name="threshold_count" type="number" min={1} step={1} defaultValue={rule?.threshold_count ?? undefined} aria-label="Threshold count" required style={{ width: "7em" }} />
            </label>
            <label className="field">
              In minutes (M)
              <input name="window_minutes" type="number" min={1} max={1440} step={1} defaultValue={rule?.window_minutes ?? undefined} aria-label="Window minutes" required style={{ width: "7em" }} />
            </label>
          </span>
        ) : null}
        {economy ? (
          <label className="field">
            Currency
            <select name="currency" aria-label="Currency" defaultValue={rule?.currency ?? ""}>
              <option value="">{trigger === "supply_growth" ? "Each currency" : "Any currency"}</option>
              {currencies.map((c) => (
                <option key={c.key} value={c.key}>{c.name}</option>
              ))}
            </select>
          </label>
        ) : null}
        {trigger === "economy_anomaly" ? (
          <label className="field">
            At least (amount)
            <input name="min_amount" inputMode="decimal" pattern="[0-9][0-9,_ ]*(\.[0-9]+)?" placeholder="any size" defaultValue={rule?.min_amount ?? undefined} aria-label="Minimum amount" style={{ width: "9em" }} />
          </label>
        ) : null}
        {trigger === "supply_growth" ? (
          <label className="field">
            More than (% in a UTC day)
            <input name="growth_pct" type="number" min={0.01} step="any" required defaultValue={rule?.growth_pct ?? undefined} aria-label="Growth percent" style={{ width: "7em" }} />
          </label>
        ) : null}
        <label className="field" hidden={economy}>
          Cooldown (minutes)
          <input name="cooldown_minutes" type="number" min={0} defaultValue={rule?.cooldown_minutes ?? 30} aria-label="Cooldown minutes" style={{ width: "7em" }} />
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
      <div hidden={economy}>
        <div className="row" style={{ marginTop: 8, alignItems: "flex-end" }}>
          <fieldset className="row tight" style={{ border: 0, padding: 0, margin: 0 }}>
            <legend className="small muted" style={{ float: "left", marginRight: 8 }}>Levels (all if none ticked)</legend>
            {["error", "warn", "info"].map((l) => (
              <label key={l} className="check-label"><input type="checkbox" name="levels" value={l} defaultChecked={rule?.levels.includes(l)} /> {l}</label>
            ))}
          </fieldset>
          <label className="field">
            Message contains
            <input name="message_contains" placeholder="any message" defaultValue={rule?.message_contains ?? undefined} aria-label="Message contains" />
          </label>
        </div>
        <EnvironmentPicker known={environments} selected={rule?.environments} idPrefix={prefix} />
        <div className="row" style={{ marginTop: 8 }}>
          <label className="check-label"><input type="checkbox" name="server_only" value="true" defaultChecked={rule?.server_only} /> Server errors only (skip errors only game clients reported)</label>
          <label className="check-label">
            At least <input name="min_players" type="number" min={0} step={1} defaultValue={rule?.min_players ?? 0} aria-label="Minimum players" style={{ width: "5em" }} /> players (0: any)
          </label>
        </div>
      </div>
      <fieldset className="row" style={{ marginTop: 8, border: 0, padding: 0 }}>
        <legend className="small muted" style={{ float: "left", marginRight: 8 }}>Send to</legend>
        {channels.map((c) => (
          <label key={c.id} className="check-label">
            <input type="checkbox" name="channel_ids" value={c.id} defaultChecked={rule ? rule.channel_ids.includes(c.id) : channels.length === 1} /> {c.name}
            {c.enabled ? null : <span className="muted small"> (disabled)</span>}
          </label>
        ))}
      </fieldset>
    </>
  );
}
