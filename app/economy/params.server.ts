import type { AnomalyFilter, PlayerFilter, PlayerSort } from "../../db/economy.js";
import { fail, integer, oneOf, text } from "~/errors/params.server";

const SORTS = new Set(["cash", "bank", "dark_coin", "total"]);
const ORDERS = new Set(["asc", "desc"]);

/** limit/offset exactly as on /api/v1/errors: limit defaults to 50 and is clamped to 100. */
function page(q: URLSearchParams) {
  return { limit: Math.min(100, integer(q, "limit", 50, 1)), offset: integer(q, "offset", 0, 0, Number.MAX_SAFE_INTEGER) };
}

/** GET /api/v1/economy/players: sort (default total), order (default desc), search, limit, offset. */
export function parsePlayerParams(q: URLSearchParams): PlayerFilter {
  const search = text(q, "search")?.trim() || undefined;
  if (search && search.length > 200) fail("search", "must be at most 200 characters");
  return {
    sort: (oneOf(q, "sort", SORTS, (s) => s.toLowerCase()) ?? "total") as PlayerSort,
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

/** GET /api/v1/economy/anomalies: factor (> 1) and min_amount (>= 0) default from the config. */
export function parseAnomalyParams(q: URLSearchParams, defaults: { factor: number; minAmount: number }): AnomalyFilter {
  return {
    factor: positiveNumber(q, "factor", defaults.factor, 1, true),
    minAmount: positiveNumber(q, "min_amount", defaults.minAmount, 0, false),
    days: integer(q, "days", 30, 1, 3650),
    ...page(q),
  };
}

export function parseDays(q: URLSearchParams): number {
  return integer(q, "days", 30, 1, 366);
}
