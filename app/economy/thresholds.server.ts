/**
 * The anomaly thresholds of each currency: what the detector, its API and the economy alerts use
 * when a request names no factor or minimum. A rise of a currency between two consecutive
 * observations of a player is an anomaly when the currency's detection is on, the rise is larger than
 * `minAmount`, and the balance went from zero or debt, or to more than `factor` times what it was.
 *
 * Each currency's threshold is, in this order: the project's override (Economy → Settings, the Team
 * API), else what was learned from the currency's own rises over the last 30 days, else the default.
 * See docs/economy.md, "Detection", for the method.
 */
import type { Sql } from "../../db/client.js";
import { learnThreshold, readThresholdRows, type LearnedRow, type OverrideRow } from "../../db/economy-thresholds.js";
import type { Config } from "~/env.server";
import type { CurrencyMap } from "./currency-map.server";
import { compareDec, mulDec, numberToDec, stringToDec, subDec } from "./profile.server";

export type ThresholdSource = "override" | "learned" | "default";

export type Threshold = {
  factor: number;
  /** a decimal string: amounts are exact */
  minAmount: string;
  off: boolean;
  source: ThresholdSource;
};

/** The learning's parameters (documented in docs/economy.md, "Detection"). */
export const LEARNING = {
  /** the trailing window of rises learned from, in days */
  windowDays: 30,
  /** at most this many of the window's latest rises are read */
  sample: 5_000,
  /** fewer rises than this in the window: the default applies (from current balances) */
  minRises: 50,
  /** a learned threshold older than this is learned again on its next use */
  staleSeconds: 3_600,
  /** min_amount = e^(median + k·σ) of the rises' logarithms, σ = 1.4826 × their median absolute deviation */
  amountK: 3,
  /** factor = the 99th percentile of the ratios to/from (rises from a positive balance), within factorBounds */
  factorPercentile: 0.99,
  /** σ is at least this (in log space), so a game whose every reward is the same size still has room */
  minSigma: 0.5,
  /** the learned factor stays within these: 3 keeps ordinary doubling out, 5 keeps every 10× dupe in */
  factorBounds: [3, 5] as const,
};

/** Whether one rise (decimal strings) is an anomaly under `t`, exactly (no rounding of amounts of any size). */
export function isAnomaly(t: Threshold, from: string, to: string): boolean {
  if (t.off) return false;
  const a = stringToDec(from);
  const b = stringToDec(to);
  if (compareDec(subDec(b, a), stringToDec(t.minAmount)) <= 0) return false;
  return a.m <= 0n || compareDec(b, mulDec(a, numberToDec(t.factor))) > 0;
}

// ---- effective thresholds ----

type Defaults = Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount">;

/** What learning gave a currency: null while it has too few rises (then the default applies). */
export type Learned = { factor: number; min_amount: string; rises: number; window_days: number; computed_at: Date };

export type ThresholdView = {
  key: string;
  name: string;
  learned: Learned | null;
  override: { factor: number | null; min_amount: string | null; off: boolean } | null;
  effective: { factor: number; min_amount: string; off: boolean; source: ThresholdSource };
  /** how many rises the learning saw (0 before it ran) */
  rises: number;
};

const isStale = (row: LearnedRow | undefined, now: number) => !row || now - row.computed_at.getTime() > LEARNING.staleSeconds * 1000;

/**
 * Reads the project's overrides and learned thresholds, and learns again the currencies whose
 * figures are missing or stale. Learning one currency is one statement under a transaction-scoped
 * advisory lock tried without waiting: when another instance is learning it at that moment, this one
 * keeps the figures it has (or the default when there are none yet) rather than queue behind it or
 * learn the same thing twice. On a read-only replica the write fails and the read runs again on the
 * primary (db/replica.ts), once an hour per currency at most.
 */
async function loadRows(sql: Sql, projectId: string, map: CurrencyMap, config: Defaults) {
  const keys = map.currencies.map((c) => c.key);
  const { overrides, learned } = await readThresholdRows(sql, projectId, keys);
  const now = Date.now();
  const stale = keys.filter((k) => isStale(learned.get(k), now));
  const fresh = await Promise.all(
    stale.map((k) =>
      learnThreshold(sql, projectId, k, {
        windowDays: LEARNING.windowDays,
        sample: LEARNING.sample,
        minRises: LEARNING.minRises,
        amountK: LEARNING.amountK,
        factorPercentile: LEARNING.factorPercentile,
        minSigma: LEARNING.minSigma,
        factorMin: LEARNING.factorBounds[0],
        factorMax: LEARNING.factorBounds[1],
        defaultFactor: config.economyAnomalyFactor,
        defaultMinAmount: String(config.economyAnomalyMinAmount),
      }),
    ),
  );
  stale.forEach((k, i) => {
    const row = fresh[i];
    if (row) learned.set(k, row);
  });
  return { overrides, learned };
}

function resolve(key: string, override: OverrideRow | undefined, learned: LearnedRow | undefined, config: Defaults): Threshold {
  const base: Threshold =
    learned && learned.rises >= LEARNING.minRises
      ? { factor: learned.factor, minAmount: learned.min_amount, off: false, source: "learned" }
      : {
          factor: learned?.factor ?? config.economyAnomalyFactor,
          minAmount: learned?.min_amount ?? String(config.economyAnomalyMinAmount),
          off: false,
          source: "default",
        };
  if (!override) return base;
  if (override.off) return { ...base, off: true, source: "override" };
  if (override.factor === null && override.min_amount === null) return base;
  return { factor: override.factor ?? base.factor, minAmount: override.min_amount ?? base.minAmount, off: false, source: "override" };
}

/** Each currency of the map (by key) with its effective threshold. */
export async function effectiveThresholds(sql: Sql, projectId: string, map: CurrencyMap, config: Defaults): Promise<Map<string, Threshold>> {
  const { overrides, learned } = await loadRows(sql, projectId, map, config);
  return new Map(map.currencies.map((c) => [c.key, resolve(c.key, overrides.get(c.key), learned.get(c.key), config)]));
}

/** Every currency's learned, overridden and effective threshold, as the settings and the Team API show them. */
export async function thresholdViews(sql: Sql, projectId: string, map: CurrencyMap, config: Defaults): Promise<ThresholdView[]> {
  const { overrides, learned } = await loadRows(sql, projectId, map, config);
  return map.currencies.map((c) => {
    const o = overrides.get(c.key);
    const l = learned.get(c.key);
    const t = resolve(c.key, o, l, config);
    return {
      key: c.key,
      name: c.name,
      learned:
        l && l.rises >= LEARNING.minRises
          ? { factor: l.factor, min_amount: l.min_amount, rises: l.rises, window_days: l.window_days, computed_at: l.computed_at }
          : null,
      override: o ? { factor: o.factor, min_amount: o.min_amount, off: o.off } : null,
      effective: { factor: t.factor, min_amount: t.minAmount, off: t.off, source: t.source },
      rises: l?.rises ?? 0,
    };
  });
}
