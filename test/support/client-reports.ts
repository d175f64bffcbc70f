import type { SentRequest } from "./roblox.js";

export type Discarded = { reason: string; category: string; quantity: number };

/** The loss report a request carried: a batch's `client_report`, or a `POST /api/client-reports` body. */
export function reportOf(
  request: SentRequest
):
  | {
      discarded_events: Discarded[];
      last_warning?: { message: string; at: string };
    }
  | undefined {
  if (request.url.endsWith("/api/client-reports"))
    return JSON.parse(request.body);
  if (request.url.endsWith("/api/ingest"))
    return JSON.parse(request.body).client_report;
  return undefined;
}

/**
 * What the SDK reported lost in requests the service took (2xx), each Idempotency-Key once:
 * quantities by "<category>:<reason>".
 */
export function reportedLosses(
  requests: SentRequest[]
): Record<string, number> {
  const seen = new Set<string>();
  const totals: Record<string, number> = {};
  for (const request of requests) {
    const report = reportOf(request);
    const key = request.headers["idempotency-key"];
    if (
      !report ||
      typeof request.status !== "number" ||
      request.status >= 300 ||
      seen.has(key)
    )
      continue;
    seen.add(key);
    for (const { category, reason, quantity } of report.discarded_events)
      totals[`${category}:${reason}`] =
        (totals[`${category}:${reason}`] ?? 0) + quantity;
  }
  return totals;
}
