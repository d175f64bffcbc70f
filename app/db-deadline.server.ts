import type { Sql } from "../db/client.js";
import { unbounded } from "../db/deadline.js";
import type { Config } from "~/env.server";
import { databaseUnavailable } from "~/http.server";

/**
 * A stalled database (a stopped server, a lost network path) answers nothing and closes nothing, and
 * PostgreSQL's own statement and lock timeouts (DB_TIMEOUT_MS) cannot end a wait for a server that
 * does not run. The ingest writer bounds its writes itself (db/transaction.ts); this is the last
 * bound around what is left (the key look-up, a COMMIT already sent when the server stalled): a
 * request that has waited `waitMs` asks the database `select 1` and goes on waiting when that answers
 * within PROBE_TIMEOUT_MS (generous, as the probe waits for a pool connection behind the load),
 * otherwise answers 503 with Retry-After. Lost connections and timeouts become the 503 in the one
 * error mapper (app/http.server.ts).
 */
export const READY_TIMEOUT_MS = 2_000;
const WAIT_MS = 15_000;
const PROBE_TIMEOUT_MS = 5_000;

const TIMED_OUT = Symbol("timed out");

/** `work`'s value, or TIMED_OUT after `ms`. */
function settleWithin<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** What readiness reports beyond the database answering (docs/operations.md#liveness-and-readiness). */
export type ReadyState = {
  /** deferred counters not applied yet (counted up to 10,001) and the age of the oldest, in seconds */
  counters: { pending: number; oldest_s: number };
  /** migrations in the database that this release does not have (a newer release migrated it) */
  newer_migrations: string[];
};

/** The readiness figures in one statement within `ms`; null when the database did not answer. */
export async function readyState(sql: Sql, known: readonly string[], ms = READY_TIMEOUT_MS): Promise<ReadyState | null> {
  try {
    const r = await settleWithin(
      unbounded(sql)<{ pending: number; oldest_s: number; names: string[] }[]>`
        select (select count(*) from (select 1 from counter_deltas limit 10001) x)::int as pending,
          coalesce(extract(epoch from now() - (select min(created_at) from counter_deltas)), 0)::float8 as oldest_s,
          coalesce((select array_agg(name) from schema_migrations), '{}') as names`.execute(),
      ms,
    );
    if (r === TIMED_OUT) return null;
    const [row] = r;
    return {
      counters: { pending: row.pending, oldest_s: Math.max(0, Math.round(row.oldest_s * 10) / 10) },
      newer_migrations: row.names.filter((n) => !known.includes(n)).sort(),
    };
  } catch {
    return null;
  }
}

/** Whether the database answers `select 1` within `ms`. */
export async function databaseAnswers(sql: Sql, ms = READY_TIMEOUT_MS): Promise<boolean> {
  try {
    // on the pool itself: a request past its database budget still learns whether the server answers
    return (await settleWithin(unbounded(sql)`select 1`.execute(), ms)) !== TIMED_OUT;
  } catch {
    return false;
  }
}

/**
 * Resolves as `work` does. Every `waitMs` it has not settled, the database is asked whether it is
 * alive; when it does not answer, this rejects with the 503 (`work` runs on).
 */
export async function withinDatabaseDeadline<T>(sql: Sql, work: Promise<T>, waitMs = WAIT_MS): Promise<T> {
  for (;;) {
    const r = await settleWithin(work, waitMs);
    if (r !== TIMED_OUT) return r;
    if (!(await databaseAnswers(sql, PROBE_TIMEOUT_MS))) throw databaseUnavailable();
  }
}

/** Past DB_TIMEOUT_MS, a write's own bound (it is rolled back past it), a COMMIT already sent is waited for this much longer. */
const COMMIT_GRACE_MS = 5_000;

/**
 * The wait of an ingest write (events or economy balances): the write bounds itself (DB_TIMEOUT_MS,
 * rolled back past it); this waits longer only for a COMMIT already sent when the database stalled,
 * whose outcome is then unknown, and answers 503 when the database no longer answers.
 */
export const withinWriteDeadline = <T>(deps: { sql: Sql; config: Pick<Config, "dbTimeoutMs"> }, work: Promise<T>): Promise<T> =>
  withinDatabaseDeadline(deps.sql, work, deps.config.dbTimeoutMs + COMMIT_GRACE_MS);
