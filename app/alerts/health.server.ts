import type { Sql } from "../../db/client.js";
import { listChannels, listEnabledRules, projectName, type RuleRow } from "../../db/alerts.js";
import {
  claimFired,
  claimRecovered,
  errorRates,
  heartbeatP90,
  HEALTH_TRIGGERS,
  liveServersPerMinute,
  openStates,
  outOfMemoryCloses,
  serverMemory,
  versionSessions,
  type HealthAlertState,
} from "../../db/health-alerts.js";
import { sendAll, withinBudget, type AlertDeps, type DispatchResult, type Outgoing } from "./dispatch.server";
import { healthLine, type HealthAlert, type HealthFacts } from "./health-payloads.server";
import type { HealthTriggerName } from "./triggers";

/**
 * Health alerts (docs/health.md#alerts): every minute, each enabled health rule of a project is
 * evaluated over the health tables, per subject (a version, a server, or the project), to one of
 * three verdicts: bad (the condition holds), ok (it does not), or no verdict (too little data to
 * say: a version with too few ended sessions, a minute whose samples have not arrived). A bad subject
 * fires once; an ok one that had fired recovers once. Both go through one conditional statement on
 * the subject's state row (db/health-alerts.ts), so two workers or instances evaluating the same
 * minute send each message once.
 *
 * Minute figures run through the minute that ended a minute ago: a server reports its samples up to
 * a minute after taking them, so the minute just ended is not complete yet.
 */

const MIN = 60_000;
/** how far behind now the minute figures end (see above) */
export const LAG_MINUTES = 1;
/** servers_drop compares the latest minute with the 10 before it */
export const DROP_MINUTES = 10;
/** error_free_sessions: a version is new for this long after its first health report */
export const NEW_VERSION_DAYS = 7;

type Verdict = { subject: string; facts: HealthFacts };
type Evaluation = { bad: Verdict[]; ok: Verdict[] };

const versionSubject = (v: string) => `version:${v}`;
const serverSubject = (j: string) => `server:${j}`;
const after = (subject: string, prefix: string) => (subject.startsWith(prefix) ? subject.slice(prefix.length) : null);
const round = (n: number, places = 2) => Math.round(n * 10 ** places) / 10 ** places;

/** The subjects the rule fired on and that have not recovered. */
const openOf = (open: HealthAlertState[], prefix: string) => open.map((s) => after(s.subject, prefix)).filter((s): s is string => s !== null);

async function evaluate(sql: Sql, projectId: string, rule: RuleRow, open: HealthAlertState[], now: Date): Promise<Evaluation> {
  const to = new Date(Math.floor(now.getTime() / MIN) * MIN - LAG_MINUTES * MIN);
  const envs = rule.environments;
  const bad: Verdict[] = [];
  const ok: Verdict[] = [];
  const trigger = rule.trigger as HealthTriggerName;
  const base = { trigger, window_minutes: rule.window_minutes };

  switch (trigger) {
    case "error_rate": {
      const window = rule.window_minutes!;
      const threshold = rule.errors_per_1000!;
      const rows = await errorRates(sql, projectId, new Date(to.getTime() - window * MIN), to, envs);
      const seen = new Set<string>();
      for (const r of rows) {
        const rate = r.player_minutes > 0 ? (r.errors * 1000) / r.player_minutes : null;
        const facts: HealthFacts = { ...base, version: r.place_version, value: rate === null ? null : round(rate), threshold, errors: r.errors, player_minutes: r.player_minutes };
        if (rate === null || r.player_minutes < rule.min_player_minutes!) continue;
        seen.add(r.place_version);
        (rate > threshold ? bad : ok).push({ subject: versionSubject(r.place_version), facts });
      }
      // a version that fired and now has too little play to say is over: its servers moved on
      for (const v of openOf(open, "version:")) {
        if (!seen.has(v)) ok.push({ subject: versionSubject(v), facts: { ...base, version: v, value: null, threshold, reason: "too little play on this version to measure" } });
      }
      break;
    }
    case "error_free_sessions": {
      const threshold = rule.error_free_pct!;
      const newSince = new Date(now.getTime() - NEW_VERSION_DAYS * 24 * 60 * MIN);
      const rows = await versionSessions(sql, projectId, newSince, openOf(open, "version:"), envs);
      for (const r of rows) {
        const isNew = r.first_seen >= newSince;
        const pct = r.ended > 0 ? (r.error_free * 100) / r.ended : null;
        const facts: HealthFacts = { ...base, version: r.place_version, value: pct === null ? null : round(pct), threshold, sessions_ended: r.ended, sessions_error_free: r.error_free, first_seen: r.first_seen.toISOString() };
        if (!isNew) ok.push({ subject: versionSubject(r.place_version), facts: { ...facts, reason: `no longer a new version (first seen over ${NEW_VERSION_DAYS} days ago)` } });
        else if (pct !== null && r.ended >= rule.min_sessions!) (pct < threshold ? bad : ok).push({ subject: versionSubject(r.place_version), facts });
      }
      break;
    }
    case "server_memory": {
      const n = rule.window_minutes!;
      const threshold = rule.memory_mb!;
      const rows = await serverMemory(sql, projectId, new Date(to.getTime() - n * MIN), to, openOf(open, "server:"), envs);
      for (const r of rows) {
        const facts: HealthFacts = { ...base, version: r.place_version, job_id: r.job_id, value: r.last_mb, threshold, lowest: r.min_mb, highest: r.max_mb };
        const subject = serverSubject(r.job_id);
        if (!r.live) ok.push({ subject, facts: { ...facts, reason: r.close_reason ? `the server closed (${r.close_reason})` : "the server stopped reporting" } });
        else if (r.minutes >= n && r.min_mb !== null && r.min_mb > threshold) bad.push({ subject, facts });
        else if (r.last_mb !== null && r.last_mb <= threshold) ok.push({ subject, facts });
      }
      break;
    }
    case "server_heartbeat": {
      const n = rule.window_minutes!;
      const threshold = rule.heartbeat_ms!;
      const rows = await heartbeatP90(sql, projectId, new Date(to.getTime() - n * MIN), to, envs);
      const byVersion = new Map<string, { p90: number; samples: number }[]>();
      for (const r of rows) byVersion.set(r.place_version, [...(byVersion.get(r.place_version) ?? []), r]);
      for (const [v, minutes] of byVersion) {
        const last = minutes[minutes.length - 1];
        const facts: HealthFacts = { ...base, version: v, value: round(last.p90), threshold, lowest: round(Math.min(...minutes.map((m) => m.p90))), samples: last.samples };
        if (minutes.length >= n && minutes.every((m) => m.p90 > threshold)) bad.push({ subject: versionSubject(v), facts });
        else if (last.p90 <= threshold) ok.push({ subject: versionSubject(v), facts });
      }
      for (const v of openOf(open, "version:")) {
        if (!byVersion.has(v)) ok.push({ subject: versionSubject(v), facts: { ...base, version: v, value: null, threshold, reason: "no server of this version reports any more" } });
      }
      break;
    }
    case "out_of_memory": {
      const window = rule.window_minutes!;
      const threshold = rule.threshold_count!;
      const rows = await outOfMemoryCloses(sql, projectId, new Date(now.getTime() - window * MIN), envs);
      const seen = new Map(rows.map((r) => [r.place_version, r]));
      for (const r of rows) {
        const facts: HealthFacts = { ...base, version: r.place_version, value: r.closes, threshold, servers: r.job_ids, last_close_at: r.last_at.toISOString() };
        (r.closes >= threshold ? bad : ok).push({ subject: versionSubject(r.place_version), facts });
      }
      for (const v of openOf(open, "version:")) {
        if (!seen.has(v)) ok.push({ subject: versionSubject(v), facts: { ...base, version: v, value: 0, threshold } });
      }
      break;
    }
    case "servers_drop": {
      const threshold = rule.drop_pct!;
      const rows = await liveServersPerMinute(sql, projectId, new Date(to.getTime() - (DROP_MINUTES + 1) * MIN), to, envs);
      const at = (t: number) => rows.find((r) => r.minute.getTime() === t)?.servers ?? 0;
      const current = at(to.getTime() - MIN);
      const peak = rows.filter((r) => r.minute.getTime() < to.getTime() - MIN).reduce((m, r) => Math.max(m, r.servers), 0);
      const drop = peak > 0 ? round(((peak - current) * 100) / peak) : 0;
      const facts: HealthFacts = { ...base, window_minutes: DROP_MINUTES, value: drop, threshold, servers_now: current, servers_before: peak };
      const fired = open.find((s) => s.subject === "project");
      if (fired) {
        // back once the count is within the threshold of what it was before the drop
        const before = Number((fired.fired as HealthFacts).servers_before ?? 0);
        if (current >= before * (1 - threshold / 100)) ok.push({ subject: "project", facts: { ...facts, servers_before: before } });
      } else if (peak >= rule.min_servers! && drop >= threshold) {
        bad.push({ subject: "project", facts });
      }
      break;
    }
  }
  return { bad, ok };
}

const publicLink = (deps: AlertDeps, path: string) => (deps.config.publicUrl ? `${deps.config.publicUrl}${path}` : null);

/** The page a message links to: release health for a version, live servers for a server or the server count. */
function pageOf(deps: AlertDeps, projectId: string, subject: string): string | null {
  return publicLink(deps, subject.startsWith("version:") ? `/projects/${projectId}/releases` : `/projects/${projectId}/servers`);
}

/**
 * Evaluates the project's enabled health rules at `now` (the database's clock when not given) and
 * sends what fired and what recovered. Returns what was sent and failed.
 */
export async function dispatchHealthAlerts(deps: AlertDeps, projectId: string, opts: { now?: Date } = {}): Promise<DispatchResult> {
  const { sql } = deps;
  const rules = await listEnabledRules(sql, projectId, HEALTH_TRIGGERS);
  if (rules.length === 0) return { sent: 0, failed: 0 };
  const now = opts.now ?? (await sql<{ now: Date }[]>`select now()`)[0].now;
  const open = await openStates(sql, projectId, rules.map((r) => r.id));
  const project = { id: projectId, name: (await projectName(sql, projectId)) ?? "project" };

  const alerts: Outgoing[] = [];
  for (const rule of rules) {
    const { bad, ok } = await evaluate(sql, projectId, rule, open.get(rule.id) ?? [], now);
    const won = await claimFired(sql, projectId, rule, now, bad.map((b) => ({ subject: b.subject, facts: b.facts })));
    const recovered = await claimRecovered(sql, projectId, rule.id, now, ok.map((o) => o.subject));
    const okBySubject = new Map(ok.map((o) => [o.subject, o]));
    const message = (a: Omit<HealthAlert, "kind" | "project" | "rule" | "at">): Outgoing => ({
      rule,
      subject: `${a.status}:${a.subject}`,
      alert: { kind: rule.trigger as HealthTriggerName, project, rule: { id: rule.id, name: rule.name }, at: now, ...a },
    });
    const list: Outgoing[] = [
      ...bad
        .filter((b) => won.has(b.subject))
        .map((b) => message({ status: "fired", subject: b.subject, health: b.facts, fired: null, fired_at: now, recovered_at: null, url: pageOf(deps, projectId, b.subject) })),
      ...recovered.map((s) =>
        message({
          status: "recovered",
          subject: s.subject,
          health: okBySubject.get(s.subject)!.facts,
          fired: s.fired as HealthFacts,
          fired_at: s.fired_at,
          recovered_at: s.recovered_at,
          url: pageOf(deps, projectId, s.subject),
        }),
      ),
    ];
    if (list.length === 0) continue;
    alerts.push(
      ...(await withinBudget(
        sql,
        rule.id,
        list,
        (o) => o,
        (rest) => {
          const lines = rest.slice(0, 20).map((o) => `• ${healthLine(o.alert as HealthAlert)}`);
          if (rest.length > 20) lines.push(`… and ${rest.length - 20} more`);
          const first = rest[0].alert as HealthAlert;
          return message({
            status: first.status,
            subject: `summary:${rest.length}`,
            health: { trigger: first.kind, window_minutes: rule.window_minutes, value: null, threshold: first.health.threshold, summary: lines },
            fired: null,
            fired_at: now,
            recovered_at: null,
            url: publicLink(deps, `/projects/${projectId}/servers`),
          });
        },
      )),
    );
  }
  if (alerts.length === 0) return { sent: 0, failed: 0 };
  const channels = new Map((await listChannels(sql, projectId)).filter((c) => c.enabled).map((c) => [c.id, c]));
  return sendAll(deps, projectId, channels, alerts);
}
