import { isConnectionLoss, type Sql } from "../db/client.js";
import { databaseUnavailable } from "~/http.server";

/**
 * A stalled database (a stopped server, a lost network path) answers nothing and closes nothing, so
 * a request would wait for as long as the stall lasts. Requests that need the database wait for it
 * a bounded time and then answer 503 with Retry-After, which every retrying client understands.
 * A database that is merely busy is not stalled: a request that has waited INGEST_WAIT_MS asks it
 * `select 1` and goes on waiting when that answers within PROBE_TIMEOUT_MS (generous, as the probe
 * waits for a pool connection behind the load).
 */
export const READY_TIMEOUT_MS = 2_000;
export const INGEST_WAIT_MS = 15_000;
const PROBE_TIMEOUT_MS = 5_000;

export { databaseUnavailable };

const TIMED_OUT = Symbol("timed out");

/** `work`'s value, or TIMED_OUT after `ms`; a lost connection becomes the 503. */
function settleWithin<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  const settled = work.catch((err: unknown) => {
    throw isConnectionLoss(err) ? databaseUnavailable() : err;
  });
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

/** Whether the database answers `select 1` within `ms`. */
export async function databaseAnswers(sql: Sql, ms = READY_TIMEOUT_MS): Promise<boolean> {
  try {
    return (await settleWithin(sql`select 1`.execute(), ms)) !== TIMED_OUT;
  } catch {
    return false;
  }
}

/**
 * Resolves as `work` does. Every `waitMs` it has not settled, the database is asked whether it is
 * alive; when it does not answer, this rejects with the 503 (`work` runs on: a write that commits
 * later is kept, so a 503 means "unknown", never "lost"). A lost connection is the 503 at once.
 */
export async function withinDatabaseDeadline<T>(sql: Sql, work: Promise<T>, waitMs = INGEST_WAIT_MS): Promise<T> {
  for (;;) {
    const r = await settleWithin(work, waitMs);
    if (r !== TIMED_OUT) return r;
    if (!(await databaseAnswers(sql, PROBE_TIMEOUT_MS))) throw databaseUnavailable();
  }
}
