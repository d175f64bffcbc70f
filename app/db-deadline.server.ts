import { isConnectionLoss } from "../db/client.js";
import { ApiError } from "~/http.server";

/**
 * A stalled database (a stopped server, a lost network path) answers nothing and closes nothing, so
 * a request would wait for as long as the stall lasts. Requests that need the database wait for it
 * a bounded time and then answer 503 with Retry-After, which every retrying client understands.
 */
export const READY_TIMEOUT_MS = 2_000;
export const INGEST_TIMEOUT_MS = 10_000;
const RETRY_AFTER_SECONDS = 5;

export const databaseUnavailable = () =>
  new ApiError(503, "unavailable", "The database is not answering; retry later.", undefined, {
    "Retry-After": String(RETRY_AFTER_SECONDS),
  });

/**
 * Resolves as `work` does; rejects with the 503 when `work` has not settled after `ms` (it runs on:
 * a write that commits later is kept, so a 503 means "unknown", never "lost") or failed because the
 * database could not be reached.
 */
export function withinDatabaseDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(databaseUnavailable()), ms);
  });
  const settled = work.catch((err: unknown) => {
    throw isConnectionLoss(err) ? databaseUnavailable() : err;
  });
  return Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
}
