/**
 * The anomalies read: every currency on its own, each under its own threshold (or the request's
 * figures), one page and one count across them. The API and the overview both answer from here.
 */
import type { Sql } from "../../db/client.js";
import { listAnomalies, type AnomalyRow, type CurrencyThreshold } from "../../db/economy-anomalies.js";
import type { Config } from "~/env.server";
import type { CurrencyMap } from "./currency-map.server";
import { ALL, type AnomalyParams } from "./params.server";
import { thresholdViews, type ThresholdSource } from "./thresholds.server";

/** `request`: the request named the factor or the minimum, which replaced the currency's own. */
export type AppliedSource = ThresholdSource | "request";

export type AppliedThreshold = { factor: number; min_amount: string; source: AppliedSource };

export type AnomaliesAnswer = {
  data: (AnomalyRow & { threshold: AppliedThreshold })[];
  total: number;
  currency: string;
  /** the request's factor and minimum, null when it named none */
  factor: number | null;
  min_amount: string | null;
  days: number;
  limit: number;
  offset: number;
  /** every listed currency's threshold as applied: `rises` is how many rises its learning saw */
  thresholds: Record<string, { factor: number; min_amount: string; off: boolean; source: AppliedSource; rises: number }>;
};

export async function readAnomalies(
  sql: Sql,
  projectId: string,
  map: CurrencyMap,
  config: Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount">,
  p: AnomalyParams,
): Promise<AnomaliesAnswer> {
  const views = await thresholdViews(sql, projectId, map, config);
  const listed = views.filter((v) => p.currency === ALL || v.key === p.currency);
  const byRequest = p.factor !== undefined || p.minAmount !== undefined;
  const thresholds: AnomaliesAnswer["thresholds"] = {};
  const applied = new Map<string, CurrencyThreshold>();
  for (const v of listed) {
    const e = v.effective;
    const t = {
      factor: p.factor ?? e.factor,
      min_amount: p.minAmount ?? e.min_amount,
      off: e.off,
      source: byRequest ? ("request" as const) : e.source,
      rises: v.rises,
    };
    thresholds[v.key] = t;
    applied.set(v.key, { factor: t.factor, minAmount: t.min_amount, off: t.off });
  }
  const { data, total } = await listAnomalies(sql, projectId, { thresholds: applied, days: p.days, limit: p.limit, offset: p.offset });
  return {
    data: data.map((row) => {
      const t = thresholds[row.currency];
      return { ...row, threshold: { factor: t.factor, min_amount: t.min_amount, source: t.source } };
    }),
    total,
    currency: p.currency,
    factor: p.factor ?? null,
    min_amount: p.minAmount ?? null,
    days: p.days,
    limit: p.limit,
    offset: p.offset,
    thresholds,
  };
}
