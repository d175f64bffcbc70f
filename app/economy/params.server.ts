import type { PlayerFilter, PlayerSort } from "../../db/economy.js";
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

/** A number parameter as written (digits, an optional fraction), or undefined when absent. */
function decimalParam(q: URLSearchParams, name: string, min: number, exclusive: boolean): string | undefined {
  const raw = q.get(name)?.trim();
  if (!raw) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw)) fail(name, "must be a number");
  const n = Number(raw);
  if (exclusive ? n <= min : n < min) fail(name, `must be ${exclusive ? "greater than" : "at least"} ${min}`);
  if (!Number.isFinite(n)) fail(name, "must be a finite number");
  return raw;
}

/** Which currencies an anomalies read looks in: every one of the map (`all`), or one key. */
export const ALL = "all";

export type AnomalyParams = {
  /** `all` or a key of the map */
  currency: string;
  /** given: applies to every listed currency for this request instead of its threshold */
  factor: number | undefined;
  /** given: likewise; a decimal string as written */
  minAmount: string | undefined;
  days: number;
  limit: number;
  offset: number;
};

/**
 * GET /api/v1/economy/anomalies: currency (absent, `all` or `total`: every currency of the map, each
 * with its own threshold; else a key of the map), factor (> 1) and min_amount (>= 0) when given
 * replace every listed currency's own figures for this request.
 */
export function parseAnomalyParams(q: URLSearchParams, map: CurrencyMap): AnomalyParams {
  const keys = new Set([ALL, ...currencyKeys(map)]);
  const chosen = oneOf(q, "currency", keys, (s) => s.toLowerCase());
  const factor = decimalParam(q, "factor", 1, true);
  return {
    currency: chosen === undefined || chosen === TOTAL ? ALL : chosen,
    factor: factor === undefined ? undefined : Number(factor),
    minAmount: decimalParam(q, "min_amount", 0, false),
    days: integer(q, "days", 30, 1, 3650),
    ...page(q),
  };
}

export function parseDays(q: URLSearchParams): number {
  return integer(q, "days", 30, 1, 366);
}
