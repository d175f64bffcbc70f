import type { Sql } from "../../db/client.js";
import { flowsBySource, hasFlows, listUnexplained, type CurrencyFlows, type UnexplainedFilter } from "../../db/economy-flows.js";
import { fail, integer, oneOf } from "~/errors/params.server";
import type { CurrencyMap } from "./currency-map.server";

const ALL = new Set(["all", "total"]);

/**
 * `currency` of the flow reads: a key of the map (case-insensitive), or absent, `all` or `total` for
 * every currency (flows are per currency: the total is not summed). Anything else is a 400.
 */
export function parseFlowCurrency(q: URLSearchParams, map: CurrencyMap): string | undefined {
  const v = oneOf(q, "currency", new Set([...ALL, ...map.currencies.map((c) => c.key)]), (s) => s.toLowerCase());
  return v === undefined || ALL.has(v) ? undefined : v;
}

/** GET /api/v1/economy/flows: currency, days (1..366, default 30). */
export function parseFlowParams(q: URLSearchParams, map: CurrencyMap): { currency?: string; days: number } {
  return { currency: parseFlowCurrency(q, map), days: integer(q, "days", 30, 1, 366) };
}

/** GET /api/v1/economy/unexplained: currency, min_amount (a decimal >= 0, default 0), days (1..3650, default 30), limit, offset. */
export function parseUnexplainedParams(q: URLSearchParams, map: CurrencyMap): UnexplainedFilter {
  const raw = q.get("min_amount")?.trim();
  if (raw && !/^\d{1,30}(\.\d{1,30})?$/.test(raw)) fail("min_amount", "must be a number at least 0");
  return {
    currency: parseFlowCurrency(q, map),
    minAmount: raw ? raw : "0",
    days: integer(q, "days", 30, 1, 3650),
    limit: Math.min(100, integer(q, "limit", 50, 1)),
    offset: integer(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER),
  };
}

/** The flows read's answer: one currency's sources and sinks, or every currency's. */
export async function flowsView(sql: Sql, projectId: string, map: CurrencyMap, p: { currency?: string; days: number }) {
  const keys = p.currency ? [p.currency] : map.currencies.map((c) => c.key);
  const per = await flowsBySource(sql, projectId, keys, p.days);
  if (p.currency) return { currency: p.currency, days: p.days, ...strip(per[0]) };
  return { currency: "all", days: p.days, currencies: per };
}

const strip = ({ currency: _, ...rest }: CurrencyFlows) => rest;

export type FlowsPanelData = {
  /** whether the game has ever sent a flow */
  enabled: boolean;
  /** the overview's selected currency (`total`: every currency) */
  currency: string;
  days: number;
  /** the selected currency, or every currency that moved in the window, in the map's order */
  currencies: (CurrencyFlows & { name: string })[];
  unexplained: Awaited<ReturnType<typeof listUnexplained>>;
};

/** The overview's sources-and-sinks panel: the selected currency's, or every currency's for the total. */
export async function flowsPanel(sql: Sql, projectId: string, map: CurrencyMap, currency: string, days = 30): Promise<FlowsPanelData> {
  const key = map.currencies.some((c) => c.key === currency) ? currency : undefined;
  const [enabled, per, unexplained] = await Promise.all([
    hasFlows(sql, projectId),
    flowsBySource(sql, projectId, key ? [key] : map.currencies.map((c) => c.key), days),
    listUnexplained(sql, projectId, { currency: key, minAmount: "0", days, limit: 10, offset: 0 }),
  ]);
  const names = new Map(map.currencies.map((c) => [c.key, c.name]));
  const currencies = per.filter((c) => key || c.totals.flows > 0).map((c) => ({ ...c, name: names.get(c.currency) ?? c.currency }));
  return { enabled, currency: key ?? "total", days, currencies, unexplained };
}
