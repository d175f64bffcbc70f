import { economyStats, moneySupplyPerDay, topPlayers, wealthBuckets } from "../../db/economy.js";
import type { Sql } from "../../db/client.js";
import type { CurrencyMap } from "./currency-map.server";
import { TOTAL } from "./currency-map.server";

export type WealthBucket = { min: string | null; max: string; count: number };

/** Buckets by order of magnitude, gaps filled with zero so a chart shows the whole range. */
export function histogram(rows: { bucket: number; count: string }[]): WealthBucket[] {
  if (rows.length === 0) return [];
  const counts = new Map(rows.map((r) => [Number(r.bucket), Number(r.count)]));
  const lo = Number(rows[0].bucket);
  const hi = Number(rows[rows.length - 1].bucket);
  const out: WealthBucket[] = [];
  for (let b = lo; b <= hi; b++) {
    const bounds =
      b === -1 ? { min: null, max: "0" } : b === 0 ? { min: "0", max: "1" } : { min: `1${"0".repeat(b - 1)}`, max: `1${"0".repeat(b)}` };
    out.push({ ...bounds, count: counts.get(b) ?? 0 });
  }
  return out;
}

/**
 * GET /api/v1/economy/summary: today's fields (over the total), plus the map's currencies, each one's
 * sum, and for the selected `currency` (default total): median, p99, concentration, newcomers, top
 * players, wealth histogram and money supply per day with growth, the new players' starting wealth and
 * the faucet/sink split.
 */
export async function economySummary(sql: Sql, projectId: string, days: number, map: CurrencyMap, currency: string = TOTAL) {
  const keys = map.currencies.map((c) => c.key);
  const [stats, top, buckets, supply] = await Promise.all([
    economyStats(sql, projectId, keys, currency, days),
    topPlayers(sql, projectId, 10, currency),
    wealthBuckets(sql, projectId, currency),
    moneySupplyPerDay(sql, projectId, days, currency),
  ]);
  const totals = stats;
  return {
    currency,
    currencies: map.currencies.map((c) => ({ key: c.key, name: c.name })),
    players: Number(totals.players),
    sums: {
      cash: totals.cash,
      bank: totals.bank,
      dark_coin: totals.dark_coin,
      total: totals.total,
      balances: stats.sums,
    },
    median_total: totals.median_total,
    p99_total: totals.p99_total,
    median: stats.median,
    p99: stats.p99,
    concentration: { top1_share: stats.top1_share, top10_share: stats.top10_share },
    newcomers: { players: Number(stats.newcomers), median: stats.newcomers_median },
    top_players: top,
    wealth_histogram: histogram(buckets),
    money_supply: supply.map((d) => ({
      day: d.day.toISOString().slice(0, 10),
      supply: d.supply,
      change: d.change,
      opening: d.opening,
      newcomers: d.newcomers,
      growth_pct: d.growth_pct,
      gained: d.gained,
      lost: d.lost,
      gainers: d.gainers,
      losers: d.losers,
    })),
  };
}
