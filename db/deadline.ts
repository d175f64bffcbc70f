import type { Sql, TxSql } from "./client.js";

export const DEADLINE_CODE = "DATABASE_DEADLINE";

/** The work passed its deadline before COMMIT and was given up: a write rolls back, nothing of it is written. */
export class DeadlineError extends Error {
  readonly code = DEADLINE_CODE;
  constructor() {
    super("The database did not finish the work before its deadline; it was given up and nothing of it committed.");
  }
}

/**
 * A request's database budget: the time it may spend waiting on the database (DB_TIMEOUT_MS), the
 * wait for a pool connection included. PostgreSQL's statement and lock timeouts start only once a
 * statement runs, and postgres.js queues a query without a bound while every connection of the pool
 * is busy, so under a held lock a request could wait for many statement timeouts of the requests
 * ahead of it. The budget is spent while at least one of the request's queries or transactions is
 * pending (time spent elsewhere, such as sending a webhook, is not counted). When it is spent:
 *
 * - a query still waiting for a connection is taken out of the pool's queue and never runs;
 * - a running statement is cancelled in PostgreSQL (a transaction around it then rolls back), and one
 *   sent behind another statement on its connection is cancelled when it starts; either answers by
 *   its outcome (a statement that finished first answers its result), or is given up
 *   SETTLE_GRACE_MS later (a server that stopped answering);
 * - a transaction that has not sent COMMIT never commits: it is refused before its first statement
 *   or before COMMIT, and rolls back; one that sent COMMIT is waited for (its outcome is the answer);
 * - every later query of the request fails at once.
 *
 * What fails this way fails with DeadlineError (DATABASE_DEADLINE) or PostgreSQL's 57014, which the
 * error mapper answers with 503 and Retry-After. Work the process shares between requests (the
 * ingest writer, the counter drain, alerts, jobs) runs on the pool itself, outside any budget.
 */
export class DatabaseBudget {
  private pending = new Set<Pending>();
  private since = 0;
  private spent = 0;
  private timer: NodeJS.Timeout | undefined;
  private expired = false;

  constructor(private readonly budgetMs: number) {}

  /** `sql` (a pool or a transaction) whose queries and transactions spend this budget. */
  bind<S extends Sql | TxSql>(sql: S): S {
    const raw = unbounded(sql as Sql) as S;
    const budget = this;
    return new Proxy(raw, {
      apply(target, self, args) {
        return budget.watch(Reflect.apply(target as (...a: unknown[]) => unknown, self, args));
      },
      get(target, prop) {
        if (prop === UNBOUNDED) return target;
        if (prop === "unsafe" || prop === "file") {
          const make = (target as unknown as Record<string, (...a: unknown[]) => unknown>)[prop];
          return (...args: unknown[]) => budget.watch(make(...args));
        }
        if (prop === "begin") return (...args: unknown[]) => budget.begin(target as Sql, args);
        return Reflect.get(target, prop);
      },
    });
  }

  /** A query is watched from the moment postgres.js hands it to the pool (a fragment never is). */
  private watch<T>(made: T): T {
    if (!isQuery(made)) return made;
    const q = made;
    const send = q.handler;
    const handler = (query: Query) => {
      if (this.expired) return query.reject(new DeadlineError());
      const pending: Pending = { expire: () => expireQuery(query, () => this.settled(pending)) };
      this.enter(pending);
      const settled = () => this.settled(pending);
      query.then(settled, settled);
      return send(query);
    };
    handler.debug = send.debug;
    q.handler = handler;
    return made;
  }

  /**
   * `sql.begin` under the budget. At the deadline the transaction's promise rejects at once unless
   * COMMIT was sent; whatever still runs on its connection afterwards is refused before it can
   * commit (the callback's later statements fail, and COMMIT is replaced by ROLLBACK).
   */
  private begin(sql: Sql, args: unknown[]): Promise<unknown> {
    if (this.expired) return Promise.reject(new DeadlineError());
    const fn = args.pop() as (tx: TxSql) => unknown;
    let phase: "waiting" | "running" | "committing" = "waiting";
    let giveUp!: (err: unknown) => void;
    const givenUp = new Promise<never>((_, reject) => (giveUp = reject));
    const pending: Pending = { expire: () => phase !== "committing" && giveUp(new DeadlineError()) };
    this.enter(pending);
    const work = (sql.begin as (...a: unknown[]) => Promise<unknown>)(...args, async (tx: TxSql) => {
      if (this.expired) throw new DeadlineError();
      phase = "running";
      const x = fn(this.bind(tx));
      const value = await (Array.isArray(x) ? Promise.all(x) : x);
      if (this.expired) throw new DeadlineError();
      phase = "committing";
      return value;
    });
    return Promise.race([work, givenUp]).finally(() => this.settled(pending));
  }

  private enter(p: Pending) {
    if (this.pending.size === 0) {
      this.since = performance.now();
      this.timer = setTimeout(() => this.expire(), Math.max(0, this.budgetMs - this.spent)).unref();
    }
    this.pending.add(p);
  }

  private settled(p: Pending) {
    if (!this.pending.delete(p) || this.pending.size > 0 || this.expired) return;
    clearTimeout(this.timer);
    this.spent += performance.now() - this.since;
  }

  private expire() {
    this.expired = true;
    for (const p of [...this.pending]) p.expire();
  }
}

/** A statement sent to a server that does not answer its cancel is given up this much after the deadline. */
const SETTLE_GRACE_MS = 500;

function expireQuery(query: Query, settled: () => void) {
  const sent = query.state !== null;
  // not sent: out of the pool's queue, rejected with 57014; sent: cancelled in PostgreSQL, now or
  // when it starts behind the statement ahead of it on its connection
  query.cancel();
  if (!sent) {
    // a query postgres.js already handed to a connection that is still connecting is not in the
    // queue; marked cancelled, that connection would never be handed back to the pool
    query.cancelled = null;
    return settled();
  }
  const timer = setTimeout(() => query.reject(new DeadlineError()), SETTLE_GRACE_MS).unref();
  const clear = () => clearTimeout(timer);
  query.then(clear, clear);
}

type Pending = { expire: () => void };

/** What this module uses of a postgres.js query (its handler is where the pool receives it). */
type Query = Promise<unknown> & {
  handler: ((q: Query) => unknown) & { debug?: unknown };
  state: unknown;
  cancelled: unknown;
  cancel: () => unknown;
  reject: (err: unknown) => void;
};

const isQuery = (x: unknown): x is Query =>
  x instanceof Promise && typeof (x as Partial<Query>).cancel === "function" && typeof (x as Partial<Query>).handler === "function";

const UNBOUNDED = Symbol("unbounded pool");

/**
 * The pool behind a budget-bound `sql`: for work that must not end with the request's budget, such
 * as asking whether a COMMIT already sent landed, or whether a stalled server answers at all.
 */
export const unbounded = (sql: Sql): Sql => (sql as unknown as Record<symbol, Sql | undefined>)[UNBOUNDED] ?? sql;
