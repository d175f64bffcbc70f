import type { AnomalyFilter, PlayerFilter, PlayerSort } from "../../db/economy.js";
import { fail, integer, oneOf, text } from "~/errors/params.server";
import type { CurrencyMap } from "./currency-map.server";
import { TOTAL } from "./currency-map.server";

const SEED_SORTS = ["cash", "bank", "dark_coin"];
const ORDERS = new Set(["asc", "desc"]);

/** The map's keys a read may name: `total` (the sum of all currencies) and every currency's key. */
export const currencyKeys = (map: CurrencyMap) => [TOTAL, ...map.currencies.map((c) => c.key)];

/**
 * `currency`: `total` (the default) or a key of the project's current map (keys are lowercase, so the
 * parameter is read case-insensitively); anything else is a 400 naming the valid keys.
 */
export function parseCurrency(q: URLSearchParams, map: CurrencyMap): string {
  return oneOf(q, "currency", new Set(currencyKeys(map)), (s) => s.toLowerCase()) ?? TOTAL;
}

/** limit/offset exactly as on /api/v1/errors: limit defaults to 50 and is clamped to 100. */
function page(q: URLSearchParams) {
  return { limit: Math.min(100, integer(q, "limit", 50, 1)), offset: integer(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER) };
}

/**
 * GET /api/v1/economy/players: sort (default total: cash, bank, dark_coin, total or any key of the
 * map), order (default desc), search, limit, offset.
 */
export function parsePlayerParams(q: URLSearchParams, map: CurrencyMap): PlayerFilter {
  const search = text(q, "search")?.trim() || undefined;
  if (search && search.length > 200) fail("search", "must be at most 200 characters");
  const sorts = new Set([...SEED_SORTS, ...currencyKeys(map)]);
  return {
    sort: (oneOf(q, "sort", sorts, (s) => s.toLowerCase()) ?? TOTAL) as PlayerSort,
    order: (oneOf(q, "order", ORDERS, (s) => s.toLowerCase()) ?? "desc") as "asc" | "desc",
    search,
    ...page(q),
  };
}

function positiveNumber(q: URLSearchParams, name: string, def: number, min: number, exclusive: boolean): number {
  const raw = q.get(name)?.trim();
  if (!raw) return def;
  if (!/^\d+(\.\d+)?$/.test(raw)) fail(name, "must be a number");
  const n = Number(raw);
  if (exclusive ? n <= min : n < min) fail(name, `must be ${exclusive ? "greater than" : "at least"} ${min}`);
  return n;
}

/** GET /api/v1/economy/anomalies: currency (default total), factor (> 1) and min_amount (>= 0) default from the config. */
export function parseAnomalyParams(q: URLSearchParams, defaults: { factor: number; minAmount: number }, map: CurrencyMap): AnomalyFilter {
  return {
    currency: parseCurrency(q, map),
    factor: positiveNumber(q, "factor", defaults.factor, 1, true),
    minAmount: positiveNumber(q, "min_amount", defaults.minAmount, 0, false),
    days: integer(q, "days", 30, 1, 3650),
    ...page(q),
  };
}

export function parseDays(q: URLSearchParams): number {
  return integer(q, "days", 30, 1, 366);
}
