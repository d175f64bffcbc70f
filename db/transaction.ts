import { isConnectionLoss, type Sql, type TxSql } from "./client.js";
import { DeadlineError, unbounded } from "./deadline.js";
import { log } from "../log/logger.js";

/** The transaction was rolled back, or never reached COMMIT: nothing of it was written. Safe to write again. */
export class NotCommittedError extends Error {
  readonly code: string;
  constructor(readonly cause: unknown) {
    super(`Write not committed: ${(cause as Error)?.message ?? cause}`);
    this.code = String((cause as { code?: unknown })?.code ?? "CONNECTION_CLOSED");
  }
}

/**
 * COMMIT was sent and the connection was lost before its answer, and the database could not be
 * asked what became of the transaction. The write may or may not have landed: never write it again.
 */
export class CommitUnknownError extends Error {
  readonly code: string;
  constructor(readonly cause: unknown) {
    super(`Commit outcome unknown: ${(cause as Error)?.message ?? cause}`);
    this.code = String((cause as { code?: unknown })?.code ?? "CONNECTION_CLOSED");
  }
}

export { DeadlineError, DEADLINE_CODE } from "./deadline.js";

/** A transaction that is still running when its budget is spent is given up this much later (a stalled server cancels nothing itself). */
const GIVE_UP_GRACE_MS = 500;
/** The shortest budget a transaction gets, so a request that waited in a queue to its deadline still gets one try's worth. */
const MIN_BUDGET_MS = 250;

export type TransactionOptions = {
  /** ms since epoch: the statements get the time left as statement and lock timeout, and the transaction is given up past it */
  deadline?: number;
  /** tries in all while each failure is known to have written nothing and the deadline allows (default 1) */
  attempts?: number;
  /** how long to keep asking what became of a transaction whose COMMIT lost its connection (default 10 s) */
  outcomeWaitMs?: number;
  /**
   * Called when a try's statements have all succeeded and its COMMIT is about to be sent (once per
   * try that gets that far): the rest of the transaction is PostgreSQL's flush of its commit.
   */
  onCommit?: () => void;
};

type Identity = { xid: string; pid: number };

const RETRYABLE = new Set(["40P01", "40001"]); // deadlock, serialization failure

/**
 * `once` below, tried again up to `attempts` in all while a failure is known to have written nothing:
 * lost before COMMIT or aborted (NotCommittedError, after a short pause, on a fresh connection), or
 * rolled back by a deadlock or serialization failure. Never after an unknown outcome or a timeout.
 */
export async function transaction<T>(sql: Sql, fn: (tx: TxSql) => Promise<T>, opts: TransactionOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(sql, fn, opts);
    } catch (err) {
      const lost = err instanceof NotCommittedError;
      const code = (err as { code?: string }).code;
      const timeLeft = opts.deadline === undefined || Date.now() < opts.deadline;
      if (attempt >= (opts.attempts ?? 1) || !timeLeft || !(lost || (code && RETRYABLE.has(code)))) throw err;
      if (lost) await new Promise((r) => setTimeout(r, 50 * attempt));
    }
  }
}

/**
 * `sql.begin` whose outcome the caller always learns, exactly:
 *
 * - It resolves only when the transaction committed, including when the connection was lost after
 *   COMMIT was sent: the transaction's id (taken in its first round trip) is then looked up with
 *   `pg_xact_status` on a fresh connection, as PostgreSQL documents for this case. While it is still
 *   `in progress` (the connection was cut, its backend lives on) that backend is terminated first,
 *   so the answer is final. Committed: the callback's value is returned, as if nothing happened.
 * - NotCommittedError: nothing was written (the loss came before COMMIT, or the lookup says aborted).
 * - CommitUnknownError: the database could not be asked within `outcomeWaitMs`; never write again.
 * - With a deadline, each statement gets the time left as `statement_timeout` and `lock_timeout`
 *   (a held lock or a slow query ends the transaction in PostgreSQL itself), and a transaction still
 *   running past it (a stalled server) is given up with DeadlineError: it is marked so that it
 *   rolls back instead of committing when the server answers again. One that already sent COMMIT
 *   runs to its outcome.
 */
async function once<T>(sql: Sql, fn: (tx: TxSql) => Promise<T>, opts: TransactionOptions): Promise<T> {
  const budget = opts.deadline === undefined ? null : Math.max(MIN_BUDGET_MS, Math.round(opts.deadline - Date.now()));
  let state = "running" as "running" | "committing" | "given up";
  let identity: Promise<Identity> | undefined;
  let value!: T;
  let giveUp!: (err: unknown) => void;
  const givenUp = new Promise<never>((_, reject) => (giveUp = reject));
  const work = sql.begin(async (tx) => {
    // queued ahead of the callback's first statement and sent in the same round trip
    identity = (
      budget === null
        ? tx<Identity[]>`select pg_current_xact_id()::text as xid, pg_backend_pid() as pid`
        : tx<Identity[]>`select pg_current_xact_id()::text as xid, pg_backend_pid() as pid,
            set_config('statement_timeout', ${String(budget)}, true), set_config('lock_timeout', ${String(budget)}, true)`
    )
      .execute()
      .then((rows) => rows[0]);
    // awaited below only when the callback got that far; its loss is the callback's loss too
    identity.catch(() => {});
    const v = await fn(tx);
    await identity;
    if (state === "given up") throw new DeadlineError();
    state = "committing";
    value = v;
    opts.onCommit?.();
    return v;
  });
  const timer =
    budget === null
      ? undefined
      : setTimeout(() => {
          if (state !== "running") return;
          state = "given up";
          giveUp(new DeadlineError());
        }, budget + GIVE_UP_GRACE_MS);
  try {
    return (await Promise.race([work, givenUp])) as T;
  } catch (err) {
    if (err instanceof DeadlineError) {
      work.catch(() => {});
      throw err;
    }
    if (!isConnectionLoss(err)) throw err;
    // lost before COMMIT was sent: the server rolls the transaction back
    if (state !== "committing") throw new NotCommittedError(err);
    const id = await identity?.catch(() => undefined);
    if (!id) throw new CommitUnknownError(err);
    // asked on the pool itself: a request's database budget must not make a landed write look lost
    const outcome = await commitOutcome(unbounded(sql), id, opts.outcomeWaitMs ?? 10_000);
    if (outcome === "committed") return value;
    if (outcome === "aborted") throw new NotCommittedError(err);
    log.error(`[db] commit of transaction ${id.xid} lost its connection and its outcome could not be read: ${(err as Error).message}`);
    throw new CommitUnknownError(err);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What became of transaction `xid`, asked on another connection for up to `waitMs`. An `in progress`
 * answer means its backend still runs (the client's connection broke, the server's did not notice):
 * that backend is terminated, which ends the transaction one way or the other, and it is asked again.
 */
export async function commitOutcome(sql: Sql, id: Identity, waitMs: number): Promise<"committed" | "aborted" | "unknown"> {
  const until = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      const [{ status }] = await sql<{ status: string | null }[]>`select pg_xact_status(${id.xid}::xid8) as status`;
      if (status === "committed") return "committed";
      if (status === "aborted") return "aborted";
      if (status === "in progress") {
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where pid = ${id.pid} and backend_xid = xid(${id.xid}::xid8)`;
      } else {
        return "unknown"; // too old to be known: not a case a just-sent COMMIT meets
      }
    } catch (err) {
      if (!isConnectionLoss(err)) throw err;
    }
    if (Date.now() >= until) return "unknown";
    await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** attempt, 1_000)));
  }
}
