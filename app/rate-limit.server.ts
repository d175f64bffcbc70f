import type { Sql } from "../db/client.js";
import { hit, pruneRateLimits } from "../db/rate-limits.js";
import { ApiError } from "~/http.server";

/**
 * Counts one request on `key` in its fixed window, across instances (db/rate-limits.ts), and refuses
 * it past `limit` with 429 and Retry-After; `refusal` words the message for the seconds left. Every
 * limited key is one row: now and then, rows of windows over a day old are dropped.
 */
export async function countOrRefuse(
  sql: Sql,
  key: string,
  o: { windowSeconds: number; limit: number; refusal: (retryAfterSeconds: number) => string },
): Promise<void> {
  const h = await hit(sql, key, o.windowSeconds);
  if (Math.random() < 0.01) pruneRateLimits(sql, Math.max(86_400, o.windowSeconds)).catch(() => {});
  if (h.count > o.limit) {
    throw new ApiError(429, "rate_limited", o.refusal(h.retryAfterSeconds), undefined, { "Retry-After": String(h.retryAfterSeconds) });
  }
}
