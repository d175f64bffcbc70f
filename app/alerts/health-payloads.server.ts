import { cut, DISCORD, esc, escapeDiscord, factsDiscordBody, factsSlackBody, type EmailParts, type Fact } from "./payloads.server";
import { TRIGGER_NAME, type HealthTriggerName } from "./triggers";

/**
 * What each channel kind receives for a health alert: "fired" (a condition started to hold: what
 * crossed which threshold, on which version or server) and "recovered" (it stopped: the figure now,
 * and how long it was bad). Pure builders, like payloads.server.ts, within the same limits
 * (Discord's 6,000-character embed, Slack's 3,000-character sections).
 */

/** The figures behind one verdict (also stored with the fired state, so the recovery can quote them). */
export type HealthFacts = {
  trigger: HealthTriggerName;
  window_minutes: number | null;
  version?: string;
  job_id?: string;
  /** the watched figure now (null when there is none to show) */
  value: number | null;
  threshold: number;
  /** why a subject recovered without its figure coming back (the server closed, the version moved on) */
  reason?: string;
  /** a burst's summary lines */
  summary?: string[];
  errors?: number;
  player_minutes?: number;
  sessions_ended?: number;
  sessions_error_free?: number;
  first_seen?: string;
  lowest?: number | null;
  highest?: number | null;
  samples?: number;
  servers?: string[];
  last_close_at?: string;
  servers_now?: number;
  servers_before?: number;
};

export type HealthAlert = {
  kind: HealthTriggerName;
  status: "fired" | "recovered";
  project: { id: string; name: string };
  rule: { id: string; name: string };
  /** `version:<v>`, `server:<job_id>`, `project`, or `summary:<n>` for a burst */
  subject: string;
  /** the figures now */
  health: HealthFacts;
  /** recovered: the figures it fired with */
  fired: HealthFacts | null;
  fired_at: Date;
  recovered_at: Date | null;
  /** release health (a version) or live servers (a server, the server count), when PUBLIC_URL is set */
  url: string | null;
  at: Date;
};

const num = (n: number | null | undefined, places = 2) => (n === null || n === undefined ? "—" : n.toLocaleString("en-US", { maximumFractionDigits: places }));

/** "4 min", "2 h 5 min", "1 d 3 h". */
export function duration(ms: number): string {
  const m = Math.max(0, Math.round(ms / 60_000));
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h${m % 60 ? ` ${m % 60} min` : ""}`;
  return `${Math.floor(h / 24)} d${h % 24 ? ` ${h % 24} h` : ""}`;
}

/** What the alert is about: "version 42", "server <job id> (version 42)", "the live server count". */
function target(f: HealthFacts): string {
  if (f.job_id) return `server ${f.job_id}${f.version ? ` (version ${f.version})` : ""}`;
  if (f.version) return `version ${f.version}`;
  return "the live server count";
}

/** The figure against its threshold, as the trigger measures it. */
function figure(f: HealthFacts): string {
  switch (f.trigger) {
    case "error_rate":
      return `${num(f.value)} errors per 1,000 player-minutes over ${f.window_minutes} min (threshold ${num(f.threshold)})`;
    case "error_free_sessions":
      return `${num(f.value)}% error-free sessions of ${num(f.sessions_ended, 0)} ended (threshold ${num(f.threshold)}%)`;
    case "server_memory":
      return `memory ${num(f.value, 1)} MB (threshold ${num(f.threshold)} MB for ${f.window_minutes} min)`;
    case "server_heartbeat":
      return `p90 heartbeat ${num(f.value)} ms (threshold ${num(f.threshold)} ms for ${f.window_minutes} min)`;
    case "out_of_memory":
      return `${num(f.value, 0)} out-of-memory close${f.value === 1 ? "" : "s"} in ${f.window_minutes} min (threshold ${num(f.threshold, 0)})`;
    case "servers_drop":
      return `${num(f.servers_before, 0)} → ${num(f.servers_now, 0)} live servers, −${num(f.value)}% in ${f.window_minutes} min (threshold ${num(f.threshold)}%)`;
  }
}

/** One line that says what happened: the headline's subject, and a line of a burst's summary. */
export function healthLine(a: HealthAlert): string {
  const f = a.health;
  if (f.summary) return `${f.summary.length} more ${a.status === "fired" ? "alerts fired" : "alerts recovered"} for this rule`;
  if (a.status === "fired") return `${target(f)}: ${figure(f)}`;
  const was = a.recovered_at ? ` after ${duration(a.recovered_at.getTime() - a.fired_at.getTime())}` : "";
  return `${target(a.fired ?? f)} is back${was}: ${f.reason ?? figure(f)}`;
}

function headline(a: HealthAlert): string {
  return `${a.status === "fired" ? "🔴" : "🟢"} ${TRIGGER_NAME[a.kind]} ${a.status === "fired" ? "alert" : "recovered"} in ${a.project.name}: ${healthLine(a)}`;
}

/** A sentence for someone woken at night: what it means and where to look. */
function description(a: HealthAlert): string {
  const f = a.health;
  if (f.summary) return f.summary.join("\n");
  if (a.status === "recovered") {
    const bad = a.recovered_at ? duration(a.recovered_at.getTime() - a.fired_at.getTime()) : "?";
    const then = a.fired ? `It fired at ${a.fired_at.toISOString()} with ${figure(a.fired)}. ` : "";
    return `${then}Now: ${f.reason ?? figure(f)}. Alerting for ${bad}.`;
  }
  switch (f.trigger) {
    case "error_rate":
      return `${num(f.errors, 0)} errors in ${num(f.player_minutes, 0)} player-minutes: players of version ${f.version} meet errors more often than the rule allows (a rate, so more players alone does not fire it).`;
    case "error_free_sessions":
      return `Of the ${num(f.sessions_ended, 0)} player sessions of version ${f.version} that have ended (first seen ${f.first_seen}), ${num(f.sessions_error_free, 0)} met no error.`;
    case "server_memory":
      return `Every sample of the last ${f.window_minutes} minutes was above ${num(f.threshold)} MB (lowest ${num(f.lowest, 1)}, highest ${num(f.highest, 1)}). A server near Roblox's memory limit closes with OutOfMemory.`;
    case "server_heartbeat":
      return `The slowest tenth of version ${f.version}'s servers took more than ${num(f.threshold)} ms per frame in each of the last ${f.window_minutes} minutes (16.7 ms is 60 frames a second).`;
    case "out_of_memory":
      return `Servers that closed out of memory: ${(f.servers ?? []).join(", ")}${f.last_close_at ? `; the latest at ${f.last_close_at}` : ""}.`;
    case "servers_drop":
      return `The number of servers sending health samples fell from ${num(f.servers_before, 0)} to ${num(f.servers_now, 0)} within ${f.window_minutes} minutes: servers crashing, a shutdown, or an outage.`;
  }
}

/** The facts as name/value pairs (Discord fields, Slack's details). */
function facts(a: HealthAlert): Fact[] {
  const f = a.health;
  const out: { name: string; value: string; inline: boolean }[] = [];
  if (f.version) out.push({ name: "Version", value: f.version, inline: true });
  if (f.job_id) out.push({ name: "Server (JobId)", value: f.job_id, inline: true });
  out.push({ name: "Threshold", value: num(f.threshold), inline: true });
  if (a.status === "recovered" && a.recovered_at) out.push({ name: "Alerting for", value: duration(a.recovered_at.getTime() - a.fired_at.getTime()), inline: true });
  out.push({ name: "Rule", value: a.rule.name, inline: true });
  return out;
}

const COLOR = { fired: 0xd64545, recovered: 0x2f9e44 } as const;

export function healthDiscordPayload(a: HealthAlert) {
  const title = cut(escapeDiscord(headline(a)), DISCORD.title);
  return factsDiscordBody({ title, description: description(a), facts: facts(a), footer: `${a.status} • ${a.subject}`, color: COLOR[a.status], at: a.at, url: a.url });
}

export function healthSlackPayload(a: HealthAlert) {
  const context = `${a.status} • ${esc(a.subject)}${a.url ? ` • <${a.url}|open>` : ""}`;
  return factsSlackBody({ headline: headline(a), description: description(a), facts: facts(a), context, emoji: true });
}

/** The webhook body: `event` says fired or recovered; the figures as data, times in ISO 8601. */
export function healthWebhookPayload(a: HealthAlert) {
  return {
    type: "alert",
    event: a.status === "fired" ? "health_alert_fired" : "health_alert_recovered",
    trigger: a.kind,
    project: a.project,
    rule: a.rule,
    subject: a.subject,
    version: a.health.version ?? a.fired?.version ?? null,
    job_id: a.health.job_id ?? a.fired?.job_id ?? null,
    health: a.health,
    fired: a.fired,
    fired_at: a.fired_at.toISOString(),
    recovered_at: a.recovered_at?.toISOString() ?? null,
    bad_for_seconds: a.recovered_at ? Math.round((a.recovered_at.getTime() - a.fired_at.getTime()) / 1000) : null,
    summary: healthLine(a),
    url: a.url,
    sent_at: a.at.toISOString(),
  };
}

/** What an email says about a health alert (app/alerts/email-payloads.server.ts lays it out). */
export const healthEmailParts = (a: HealthAlert): EmailParts => ({
  headline: headline(a),
  description: description(a),
  facts: facts(a),
  footer: `${a.status} • ${a.subject}`,
  url: a.url,
});
