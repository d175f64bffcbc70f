import type { Sql } from "../../db/client.js";
import { listChannels, listEnabledRules, projectName, ECONOMY_TRIGGERS, type RuleRow } from "../../db/alerts.js";
import {
  advanceCursor,
  claimSubjects,
  readCursor,
  riseCandidates,
  supplyGrowth,
  unexplainedCandidates,
  type PlayerCandidate,
  type PlayerNames,
  type RuleWindow,
} from "../../db/economy-alerts.js";
import type { Config } from "~/env.server";
import { effectiveThresholds, isAnomaly } from "~/economy/thresholds.server";
import { loadMap } from "~/economy/map.server";
import { compareDec, stringToDec } from "~/economy/profile.server";
import { sendAll, withinBudget, type AlertDeps, type DispatchResult, type Outgoing } from "./dispatch.server";
import { eventLine, type EconomyAlert, type EconomyEvent, type EconomyPlayer } from "./economy-payloads.server";

/**
 * Economy alerts: evaluates a project's enabled `economy_anomaly` and `supply_growth` rules and sends
 * what fires. Runs as the `economy-alerts` job, enqueued after committed pushes and scan pages.
 *
 * - economy_anomaly: each rise written since the project's cursor (db/economy-alerts.ts) that is an
 *   anomaly under its currency's effective threshold (`isAnomaly`), and each unexplained gain, of the
 *   rule's currency (any when null) and at least its `min_amount`; only what was recorded after the
 *   rule was last saved (a rule enabled again does not report the time it was off), at most a day old.
 * - supply_growth: each currency (the rule's, or every one of the map) whose supply grew more than
 *   `growth_pct` % today or yesterday (UTC), openings excluded, on days the rule existed.
 * Every message is claimed first (one row per rule and subject), so two workers or instances
 * evaluating the same rows send it once; the cursor only moves forward once a pass has read
 * everything up to it.
 */
export type EconomyAlertDeps = AlertDeps & { config: AlertDeps["config"] & Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount"> };

/**
 * Rows are read in pages of PAGE rows, at most PAGES pages per pass; a pass that stops there leaves
 * the cursor where it was (`more`), and the next pass reads on (claimed rows drop out).
 */
const PAGE = 500;
const PAGES = 20;

/** Every page of `read` after id 0, up to PAGES; `more` when it stopped before the end. */
async function pages<T extends { id: string }>(read: (page: { afterId: string; limit: number }) => Promise<T[]>): Promise<{ rows: T[]; more: boolean }> {
  const rows: T[] = [];
  let afterId = "0";
  for (let i = 0; i < PAGES; i++) {
    const page = await read({ afterId, limit: PAGE });
    rows.push(...page);
    if (page.length < PAGE) return { rows, more: false };
    // a page may end inside one row's rules: the next starts at that row again
    const last = page[page.length - 1].id;
    afterId = page[0].id === last ? last : (BigInt(last) - 1n).toString();
  }
  return { rows, more: true };
}

const nameOf = (p: PlayerNames) => p.display_name ?? p.display_names[0] ?? p.username ?? null;
const player = (userId: string, p: PlayerNames): EconomyPlayer => ({ user_id: userId, name: nameOf(p), username: p.username });

const dedupe = <T>(rows: T[], key: (t: T) => string) => [...new Map(rows.map((r) => [key(r), r])).values()];

const publicLink = (deps: AlertDeps, path: string) => (deps.config.publicUrl ? `${deps.config.publicUrl}${path}` : null);

/** The lower of two non-negative decimal strings, compared exactly (digit by digit, not as doubles). */
export const lower = (a: string, b: string): string => (compareDec(stringToDec(a), stringToDec(b)) <= 0 ? a : b);

export async function dispatchEconomyAlerts(deps: EconomyAlertDeps, projectId: string): Promise<DispatchResult & { more: boolean }> {
  const { sql } = deps;
  const rules = await listEnabledRules(sql, projectId, ECONOMY_TRIGGERS);
  if (rules.length === 0) return { sent: 0, failed: 0, more: false };
  const { cursor, xmin } = await readCursor(sql, projectId);
  const { map } = await loadMap(sql, projectId);
  const names = new Map(map.currencies.map((c) => [c.key, c.name]));
  const currency = (key: string) => ({ key, name: names.get(key) ?? key });
  const project = { id: projectId, name: (await projectName(sql, projectId)) ?? "project" };
  const at = new Date();
  const fired: { rule: RuleRow; subject: string; event: EconomyEvent; url: string | null }[] = [];

  const anomalyRules = rules.filter((r) => r.trigger === "economy_anomaly");
  const windows: RuleWindow[] = anomalyRules.map((r) => ({ rule_id: r.id, currency: r.currency, min_amount: r.min_amount, since: r.updated_at.toISOString() }));
  let more = false;
  if (anomalyRules.length > 0) {
    const thresholds = await effectiveThresholds(sql, projectId, map, deps.config);
    const on = [...thresholds].filter(([, t]) => !t.off);
    const floor = {
      currencies: on.map(([k]) => k),
      minAmount: on.reduce((m, [, t]) => lower(m, t.minAmount), on[0]?.[1].minAmount ?? "0"),
      factor: Math.min(...on.map(([, t]) => t.factor)),
    };
    const r = await pages((page) => riseCandidates(sql, projectId, windows, cursor, floor, page));
    const u = await pages((page) => unexplainedCandidates(sql, projectId, windows, cursor, page));
    more = r.more || u.more;
    const rises = dedupe(r.rows, (x) => `${x.rule_id}:${x.id}`);
    const unexplained = dedupe(u.rows, (x) => `${x.rule_id}:${x.id}`);
    const ruleById = new Map(anomalyRules.map((r) => [r.id, r]));
    // what every alert about one player's currency says
    const about = (kind: "rise" | "unexplained", c: PlayerCandidate) => ({
      rule: ruleById.get(c.rule_id)!,
      subject: `${kind}:${c.id}`,
      url: publicLink(deps, `/projects/${projectId}/economy/players/${c.user_id}`),
      facts: { player: player(c.user_id, c), currency: currency(c.currency), from: c.from_amount, to: c.to_amount, observed_at: c.observed_at },
    });
    for (const r of rises) {
      const t = thresholds.get(r.currency);
      if (!t || !isAnomaly(t, r.from_amount, r.to_amount)) continue;
      const { facts, ...a } = about("rise", r);
      const threshold = { factor: t.factor, min_amount: t.minAmount, source: t.source };
      fired.push({ ...a, event: { type: "anomaly", ...facts, increase: r.increase, factor: r.factor, from_observed_at: r.from_observed_at, source: r.source, threshold } });
    }
    for (const u of unexplained) {
      const { facts, ...a } = about("unexplained", u);
      fired.push({ ...a, event: { type: "unexplained", ...facts, explained: u.explained, unexplained: u.unexplained, from_observed_at: u.from_observed_at } });
    }
  }

  const growthRules = rules.filter((r) => r.trigger === "supply_growth");
  if (growthRules.length > 0) {
    const keys = [...new Set(growthRules.flatMap((r) => (r.currency ? [r.currency] : map.currencies.map((c) => c.key))))].filter((k) => names.has(k));
    const days = await supplyGrowth(sql, projectId, keys);
    for (const rule of growthRules) {
      const since = rule.created_at.toISOString().slice(0, 10);
      for (const d of days) {
        if ((rule.currency && d.currency !== rule.currency) || d.day < since) continue;
        if (d.growth_pct === null || !(d.growth_pct > Number(rule.growth_pct))) continue;
        fired.push({
          rule,
          subject: `supply:${d.currency}:${d.day}`,
          url: publicLink(deps, `/projects/${projectId}/economy?currency=${encodeURIComponent(d.currency)}`),
          event: {
            type: "supply_growth",
            currency: currency(d.currency),
            day: d.day,
            growth_pct: d.growth_pct,
            previous: d.previous,
            change: d.change,
            opening: d.opening,
            supply: d.supply,
            threshold_pct: Number(rule.growth_pct),
          },
        });
      }
    }
  }

  // claims first, per rule: what another pass claimed is not sent again
  const claimed: typeof fired = [];
  for (const rule of rules) {
    const mine = fired.filter((f) => f.rule.id === rule.id);
    const won = await claimSubjects(sql, projectId, rule.id, mine.map((f) => f.subject));
    claimed.push(...mine.filter((f) => won.has(f.subject)));
  }
  if (!more) await advanceCursor(sql, projectId, xmin);
  if (claimed.length === 0) return { sent: 0, failed: 0, more };

  const alerts: Outgoing[] = [];
  for (const rule of rules) {
    const list = claimed.filter((f) => f.rule.id === rule.id);
    if (list.length === 0) continue;
    const kind = rule.trigger as EconomyAlert["kind"];
    const message = (subject: string, event: EconomyEvent, url: string | null): Outgoing => ({
      rule,
      subject,
      alert: { kind, project, rule: { id: rule.id, name: rule.name }, subject, event, url, at },
    });
    alerts.push(
      ...(await withinBudget(
        sql,
        rule.id,
        list,
        (f) => message(f.subject, f.event, f.url),
        (rest) => {
          const lines = rest.slice(0, 20).map((f) => `• ${eventLine(f.event)}`);
          if (rest.length > 20) lines.push(`… and ${rest.length - 20} more`);
          return message(`summary:${rest.length}`, { type: "summary", count: rest.length, lines }, publicLink(deps, `/projects/${projectId}/economy`));
        },
      )),
    );
  }
  const channels = new Map((await listChannels(sql, projectId)).filter((c) => c.enabled).map((c) => [c.id, c]));
  return { ...(await sendAll(deps, projectId, channels, alerts)), more };
}
