/**
 * The anomaly thresholds of each currency: what the detector, its API and the economy alerts use
 * when a request names no factor or minimum. A rise of a currency between two consecutive
 * observations of a player is an anomaly when the currency's detection is on, the rise is larger than
 * `minAmount`, and the balance went from zero or debt, or to more than `factor` times what it was.
 */
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import type { CurrencyMap } from "./currency-map.server";

export type ThresholdSource = "override" | "learned" | "default";

export type Threshold = {
  factor: number;
  /** a decimal string: amounts are exact */
  minAmount: string;
  off: boolean;
  source: ThresholdSource;
};

/** Whether one rise (decimal strings) is an anomaly under `t`. */
export function isAnomaly(t: Threshold, from: string, to: string): boolean {
  if (t.off) return false;
  const a = Number(from);
  const b = Number(to);
  if (!(b - a > Number(t.minAmount))) return false;
  return a <= 0 || b > a * t.factor;
}

/** Each currency of the map (by key) with its effective threshold. */
export async function effectiveThresholds(
  _sql: Sql,
  _projectId: string,
  map: CurrencyMap,
  config: Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount">,
): Promise<Map<string, Threshold>> {
  return new Map(
    map.currencies.map((c) => [c.key, { factor: config.economyAnomalyFactor, minAmount: String(config.economyAnomalyMinAmount), off: false, source: "default" as const }]),
  );
}
