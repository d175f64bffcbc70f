import { economyTotals, moneySupplyPerDay, topPlayers, wealthBuckets } from "../../db/economy.js";
import type { Sql } from "../../db/client.js";

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

/** GET /api/v1/economy/summary */
export async function economySummary(sql: Sql, projectId: string, days: number) {
  const [totals, top, buckets, supply] = await Promise.all([
    economyTotals(sql, projectId),
    topPlayers(sql, projectId, 10),
    wealthBuckets(sql, projectId),
    moneySupplyPerDay(sql, projectId, days),
  ]);
  return {
    players: Number(totals.players),
    sums: { cash: totals.cash, bank: totals.bank, dark_coin: totals.dark_coin, total: totals.total },
    median_total: totals.median_total,
    p99_total: totals.p99_total,
    top_players: top,
    wealth_histogram: histogram(buckets),
    money_supply: supply.map((d) => ({ day: d.day.toISOString().slice(0, 10), supply: d.supply, change: d.change })),
  };
}
