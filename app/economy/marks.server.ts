/**
 * What the player page marks on a player's balance lines: each rise the anomaly detector flags
 * (`isAnomaly` under the currency's effective threshold) and each gain the recorded flows do not
 * explain, within the observations the page charts.
 */
import type { Sql } from "../../db/client.js";
import { playerMarks } from "../../db/economy-marks.js";
import type { Config } from "~/env.server";
import type { CurrencyMap } from "./currency-map.server";
import { effectiveThresholds, isAnomaly, type Threshold } from "./thresholds.server";

export type PlayerMark = {
  kind: "anomaly" | "unexplained";
  currency: string;
  /** the history row (observation) the mark sits on */
  history_id: string;
  from_amount: string;
  to_amount: string;
  from_observed_at: Date | null;
  observed_at: Date;
  /** to / from, two decimals; null from zero or debt */
  factor: number | null;
  /** unexplained gains: the part of the rise no flow explains */
  unexplained: string | null;
  /** anomalies: the threshold that flagged the rise */
  threshold: { factor: number; min_amount: string; source: Threshold["source"] } | null;
};

function ratio(from: string, to: string): number | null {
  const a = Number(from);
  const r = Number(to) / a;
  return a > 0 && Number.isFinite(r) ? Math.round(r * 100) / 100 : null;
}

/** The marks on the observations from `firstHistoryId` on, in the order of their observation. */
export async function playerMarksView(
  sql: Sql,
  config: Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount">,
  projectId: string,
  userId: string,
  firstHistoryId: string | undefined,
  map: CurrencyMap,
): Promise<PlayerMark[]> {
  if (firstHistoryId === undefined) return [];
  const [{ rises, unexplained }, thresholds] = await Promise.all([
    playerMarks(sql, projectId, userId, firstHistoryId),
    effectiveThresholds(sql, projectId, map, config),
  ]);
  // a currency the map no longer has keeps the service's default threshold
  const fallback: Threshold = { factor: config.economyAnomalyFactor, minAmount: String(config.economyAnomalyMinAmount), off: false, source: "default" };
  const marks: PlayerMark[] = [];
  for (const r of rises) {
    const t = thresholds.get(r.currency) ?? fallback;
    if (!isAnomaly(t, r.from_amount, r.to_amount)) continue;
    marks.push({
      kind: "anomaly",
      currency: r.currency,
      history_id: r.history_id,
      from_amount: r.from_amount,
      to_amount: r.to_amount,
      from_observed_at: r.prev_observed_at,
      observed_at: r.observed_at,
      factor: ratio(r.from_amount, r.to_amount),
      unexplained: null,
      threshold: { factor: t.factor, min_amount: t.minAmount, source: t.source },
    });
  }
  for (const u of unexplained) {
    marks.push({
      kind: "unexplained",
      currency: u.currency,
      history_id: u.history_id,
      from_amount: u.from_amount,
      to_amount: u.to_amount,
      from_observed_at: u.from_observed_at,
      observed_at: u.observed_at,
      factor: ratio(u.from_amount, u.to_amount),
      unexplained: u.unexplained,
      threshold: null,
    });
  }
  return marks.sort((a, b) => Number(BigInt(a.history_id) - BigInt(b.history_id)) || a.currency.localeCompare(b.currency) || a.kind.localeCompare(b.kind));
}
