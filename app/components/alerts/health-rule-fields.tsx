import { EnvironmentPicker } from "./rule-form";

/**
 * The fields of a health rule on the Alerts page. The form works without JavaScript: every field is
 * always there (a threshold, a number of minutes, a minimum) and the trigger decides what each one
 * means; `healthRuleInput` turns the form into the Team API's fields of that trigger, and an empty
 * field takes the trigger's default (the API names a missing required one in its 400).
 */

type HealthRule = {
  trigger: string;
  environments: string[];
  cooldown_minutes: number;
  threshold_count: number | null;
  window_minutes: number | null;
  errors_per_1000: number | null;
  min_player_minutes: number | null;
  error_free_pct: number | null;
  min_sessions: number | null;
  memory_mb: number | null;
  heartbeat_ms: number | null;
  drop_pct: number | null;
  min_servers: number | null;
};

/** What the threshold, the minutes and the minimum mean for each trigger (null: not used). */
const MEANING: Record<string, { threshold: keyof HealthRule; minutes: keyof HealthRule | null; minimum: keyof HealthRule | null }> = {
  error_rate: { threshold: "errors_per_1000", minutes: "window_minutes", minimum: "min_player_minutes" },
  error_free_sessions: { threshold: "error_free_pct", minutes: null, minimum: "min_sessions" },
  server_memory: { threshold: "memory_mb", minutes: "window_minutes", minimum: null },
  server_heartbeat: { threshold: "heartbeat_ms", minutes: "window_minutes", minimum: null },
  out_of_memory: { threshold: "threshold_count", minutes: "window_minutes", minimum: null },
  servers_drop: { threshold: "drop_pct", minutes: null, minimum: "min_servers" },
};

/** One line per trigger: what X, N and the minimum are. */
export const HEALTH_TRIGGER_HELP: Record<string, string> = {
  error_rate:
    "a version's errors per 1,000 player-minutes above the threshold over the last N minutes (default 60), once it has the minimum player-minutes (default 100). A rate: more players alone does not fire it.",
  error_free_sessions:
    "a new version's (first seen in the last 7 days) share of ended player sessions that met no error below the threshold %, once the minimum number of sessions (default 50) ended.",
  server_memory: "a server's memory above the threshold (MB) in every minute of the last N minutes (default 5).",
  server_heartbeat: "a version's p90 heartbeat time above the threshold (ms) in every minute of the last N minutes (default 5).",
  out_of_memory: "at least the threshold (default 1) of a version's servers closed out of memory in the last N minutes (default 60).",
  servers_drop: "the live server count down the threshold % or more within 10 minutes, from at least the minimum (default 3) servers.",
};

const num = (v: FormDataEntryValue | null) => (v === null || String(v).trim() === "" ? undefined : Number(v));

/** The form's fields as the Team API's fields of the chosen trigger. */
export function healthRuleInput(form: FormData): Record<string, unknown> {
  const trigger = String(form.get("trigger") ?? "");
  const m = MEANING[trigger];
  if (!m) return { trigger };
  const out: Record<string, unknown> = { trigger, [m.threshold]: num(form.get("threshold")) ?? null };
  if (m.threshold === "threshold_count" && out.threshold_count === null) delete out.threshold_count;
  if (m.minutes) out[m.minutes] = num(form.get("minutes")) ?? null;
  if (m.minimum) out[m.minimum] = num(form.get("minimum")) ?? null;
  return out;
}

const fmt = (n: number | null) => (n === null ? "?" : n.toLocaleString("en-US", { maximumFractionDigits: 2 }));

/** The rules table's short description of a health rule. */
export function healthRuleSummary(r: HealthRule): string {
  switch (r.trigger) {
    case "error_rate":
      return `above ${fmt(r.errors_per_1000)} errors per 1,000 player-minutes over ${r.window_minutes} min (from ${fmt(r.min_player_minutes)} player-minutes)`;
    case "error_free_sessions":
      return `a new version below ${fmt(r.error_free_pct)}% error-free sessions (from ${fmt(r.min_sessions)} ended)`;
    case "server_memory":
      return `a server above ${fmt(r.memory_mb)} MB for ${r.window_minutes} min`;
    case "server_heartbeat":
      return `a version's p90 heartbeat above ${fmt(r.heartbeat_ms)} ms for ${r.window_minutes} min`;
    case "out_of_memory":
      return `${fmt(r.threshold_count)}+ out-of-memory closes of a version in ${r.window_minutes} min`;
    case "servers_drop":
      return `live servers down ${fmt(r.drop_pct)}% in 10 min (from ${fmt(r.min_servers)} servers)`;
    default:
      return "";
  }
}

/** Trigger, threshold, minutes, minimum, environments and cooldown; prefilled from `rule` when editing. */
export function HealthRuleFields({ rule, environments = [], idPrefix = "health-rule" }: { rule?: HealthRule; environments?: string[]; idPrefix?: string }) {
  const m = rule ? MEANING[rule.trigger] : undefined;
  const value = (k: keyof HealthRule | null | undefined) => (rule && k ? ((rule[k] as number | null) ?? undefined) : undefined);
  return (
    <>
      <div className="row">
        <select name="trigger" defaultValue={rule?.trigger ?? "error_rate"} aria-label="Health condition">
          <option value="error_rate">Error rate: errors per 1,000 player-minutes above X</option>
          <option value="error_free_sessions">Error-free sessions: a new version below X%</option>
          <option value="server_memory">Server memory: above X MB for N minutes</option>
          <option value="server_heartbeat">Server heartbeat: p90 above X ms for N minutes</option>
          <option value="out_of_memory">Out-of-memory closes: X closes in N minutes</option>
          <option value="servers_drop">Live servers drop: down X% in 10 minutes</option>
        </select>
        <label className="row tight">
          X <input name="threshold" type="number" min={0} step="any" defaultValue={value(m?.threshold)} aria-label="Threshold" style={{ width: "7em" }} />
        </label>
        <label className="row tight">
          N <input name="minutes" type="number" min={1} max={1440} step={1} defaultValue={value(m?.minutes)} placeholder="default" aria-label="Minutes" style={{ width: "7em" }} /> minutes
        </label>
        <label className="row tight">
          Minimum <input name="minimum" type="number" min={0} step={1} defaultValue={value(m?.minimum)} placeholder="default" aria-label="Minimum" style={{ width: "7em" }} />
        </label>
      </div>
      <EnvironmentPicker known={environments} selected={rule?.environments} idPrefix={idPrefix} />
      <div className="row" style={{ marginTop: 8 }}>
        <label className="row tight">
          Fire again after <input name="cooldown_minutes" type="number" min={0} defaultValue={rule?.cooldown_minutes ?? 30} aria-label="Fire again after minutes" style={{ width: "5em" }} /> minutes
        </label>
      </div>
    </>
  );
}
