import { isDatabaseUnavailable, type Sql, type TxSql } from "../../db/client.js";
import { writeEvents, type EventRow, type ThrottleRule, type TouchedGroup } from "../../db/events.js";
import { DeadlineError } from "../../db/transaction.js";
import { IdempotencyClash, recordParts, type PartRecord } from "../../db/idempotency.js";
import { GROUPING_VERSION } from "./fingerprint.server.js";
import { observeWriterTransaction } from "../../db/metrics.js";

export type SubmitResult = { stored: number; throttled: number };

/** A keyed request: each part the writer commits is recorded under the key in its own transaction. */
export type IdempotentSubmit = {
  key: string;
  bodyHash: Buffer;
  /** each submitted row's index in the request body (what a part records as written) */
  indexes: number[];
};

type PartKey = Omit<PartRecord, "stored" | "throttled">;
type Pending = {
  rows: EventRow[];
  record?: PartKey;
  /** ms since epoch: not written after it (dropped from the queue, or its transaction given up) */
  deadline: number;
  resolve: (r: SubmitResult) => void;
  reject: (e: unknown) => void;
};

/** Writes per `concurrency` that may be committing while the next ones run their statements. */
const COMMITTING_PER_SLOT = 1;

type WriterOptions = {
  throttle: ThrottleRule;
  /** fingerprint shards, each with its own queue */
  shards: number;
  /** transactions in flight per shard */
  concurrency: number;
  maxEventsPerWrite: number;
  /** a submission is written within this many ms of its submit, or rejected having written nothing */
  timeoutMs: number;
  /** after each commit, with the groups touched and the ids of its pending counter rows (db/counter-deltas.ts) */
  afterCommit?: (groups: TouchedGroup[], pending: string[]) => void;
};


/** FNV-1a over project and fingerprint: the same shard in every process, for every retry. */
export function shardOf(projectId: string, fingerprint: string, shards: number): number {
  if (shards === 1) return 0;
  const s = `${projectId}\u0000${fingerprint}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) % shards;
}

/**
 * Writes ingest requests through one queue per fingerprint shard (a hash of project and
 * fingerprint). A request whose events fall in several shards is split into one part per shard;
 * it resolves only when every part has committed (or settled, when one failed), and its counts sum
 * the parts. Within a shard, concurrent parts are coalesced into shared transactions (see Shard).
 * Transactions of different shards touch different group rows, so they do not wait for each other.
 */
export class EventWriter {
  private readonly shards: Shard[];

  constructor(sql: Sql, opts: WriterOptions) {
    this.shards = Array.from({ length: opts.shards }, () => new Shard(sql, opts));
  }

  async submit(rows: EventRow[], idempotent?: IdempotentSubmit): Promise<SubmitResult> {
    const parts = new Map<number, { rows: EventRow[]; indexes: number[] }>();
    rows.forEach((row, i) => {
      const s = shardOf(row.projectId, row.fingerprint, this.shards.length);
      const part = parts.get(s) ?? { rows: [], indexes: [] };
      parts.set(s, part);
      part.rows.push(row);
      if (idempotent) part.indexes.push(idempotent.indexes[i]);
    });
    const settled = await Promise.allSettled(
      [...parts].map(([s, part]) =>
        this.shards[s].submit(
          part.rows,
          idempotent && { projectId: part.rows[0].projectId, key: idempotent.key, bodyHash: idempotent.bodyHash, events: part.indexes },
        ),
      ),
    );
    // a real failure is reported before a clash with a concurrent duplicate (which the caller resolves)
    const failures = settled.flatMap((r) => (r.status === "rejected" ? [r.reason as unknown] : []));
    if (failures.length > 0) throw failures.find((e) => !IdempotencyClash.is(e)) ?? failures[0];
    return settled.reduce((sum, r) => {
      const { stored, throttled } = (r as PromiseFulfilledResult<SubmitResult>).value;
      return { stored: sum.stored + stored, throttled: sum.throttled + throttled };
    }, { stored: 0, throttled: 0 });
  }

  /** Events submitted and not yet committed or failed (queued or being written): the ingest backlog. */
  get pendingEvents(): number {
    return this.shards.reduce((n, s) => n + s.pendingEvents, 0);
  }

  /** Resolves when nothing is queued or being written (graceful shutdown). */
  async drain(): Promise<void> {
    await Promise.all(this.shards.map((s) => s.drain()));
  }

  /**
   * Gives up on every submission not yet settled (shutdown past its bound): each is rejected with
   * `reason` and nothing queued is written any more. A write already sent goes on; its outcome is
   * unknown to the caller, never acknowledged. Returns what was given up.
   */
  abandon(reason: unknown): { submissions: number; events: number; writing: number } {
    return this.shards
      .map((s) => s.abandon(reason))
      .reduce((a, b) => ({ submissions: a.submissions + b.submissions, events: a.events + b.events, writing: a.writing + b.writing }));
  }
}

/**
 * One shard's queue. While fewer than `concurrency` writes are in flight a submission is written at
 * once; otherwise it waits and joins the next write with everything else that queued meanwhile. Each
 * submission resolves only after the transaction holding its events has committed; a keyed one has
 * recorded its part in that transaction. If a shared write fails on a statement (it rolled back),
 * each submission is retried on its own, so one request cannot fail another.
 *
 * Exactly once: a submission resolves only if its transaction committed, and is written again only
 * when the transaction is known not to have committed (db/transaction.ts asks PostgreSQL when the
 * connection was lost around COMMIT). Bounded: each submission has a deadline; one still queued at
 * it is rejected unwritten, and a transaction carries the earliest deadline of its submissions as
 * statement and lock timeout and is given up (rolled back) past it. The rejection is a 503.
 *
 * A write whose statements are done and whose COMMIT was sent no longer counts against
 * `concurrency`: the next write starts then, with what queued meanwhile, while PostgreSQL flushes
 * the commit (its WAL flush is most of a small transaction's time, and commits in flight together
 * share one flush). The two hold no lock the other waits for except the rows they share, which the
 * later one's upsert waits on until the earlier commits, in the usual lock order. At most
 * `concurrency` writes commit meanwhile (COMMITTING_PER_SLOT), so a stalled flush cannot take the
 * pool's connections.
 */
class Shard {
  private queue: Pending[] = [];
  /** every submission not yet settled, queued or being written */
  private unsettled = new Set<Pending>();
  /** writes started and not finished, those committing included */
  private inFlight = 0;
  /** writes in flight that sent their COMMIT and wait for its answer */
  private committing = 0;
  pendingEvents = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly opts: WriterOptions,
  ) {}

  submit(rows: EventRow[], record?: PartKey): Promise<SubmitResult> {
    this.pendingEvents += rows.length;
    let entry!: Pending;
    return new Promise<SubmitResult>((resolve, reject) => {
      entry = { rows, record, deadline: Date.now() + this.opts.timeoutMs, resolve, reject };
      this.unsettled.add(entry);
      this.queue.push(entry);
      this.pump();
    }).finally(() => {
      this.unsettled.delete(entry);
      this.pendingEvents -= rows.length;
    });
  }

  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  abandon(reason: unknown): { submissions: number; events: number; writing: number } {
    const given = [...this.unsettled];
    const writing = this.inFlight;
    this.queue = [];
    for (const p of given) p.reject(reason);
    return { submissions: given.length, events: given.reduce((n, p) => n + p.rows.length, 0), writing };
  }

  private pump() {
    const { concurrency } = this.opts;
    while (this.inFlight - this.committing < concurrency && this.inFlight < concurrency * (1 + COMMITTING_PER_SLOT) && this.queue.length > 0) {
      const batch: Pending[] = [];
      let events = 0;
      const now = Date.now();
      while (this.queue.length > 0 && (batch.length === 0 || events + this.queue[0].rows.length <= this.opts.maxEventsPerWrite)) {
        const p = this.queue.shift()!;
        // waited in the queue to its deadline: answered 503, never written
        if (p.deadline <= now) {
          p.reject(new DeadlineError());
          continue;
        }
        batch.push(p);
        events += p.rows.length;
      }
      if (batch.length === 0) {
        if (this.inFlight === 0) this.idle.splice(0).forEach((r) => r());
        continue;
      }
      this.inFlight++;
      const slot = { committing: false };
      void this.flush(batch, slot).finally(() => {
        this.inFlight--;
        if (slot.committing) this.committing--;
        if (this.queue.length > 0) this.pump();
        else if (this.inFlight === 0) this.idle.splice(0).forEach((r) => r());
      });
    }
  }

  /** `slot`: the write's place in `inFlight`; marked committing at the first COMMIT sent for it */
  private async flush(batch: Pending[], slot: { committing: boolean }) {
    try {
      const { stored } = await this.write(batch, () => {
        if (slot.committing) return;
        slot.committing = true;
        this.committing++;
        if (this.queue.length > 0) this.pump();
      });
      let offset = 0;
      for (const p of batch) {
        p.resolve(countStored(stored.slice(offset, offset + p.rows.length)));
        offset += p.rows.length;
      }
    } catch (err) {
      // Written again only when known to have rolled back on a statement of its own: a database that
      // did not answer in time or lost the connection would fail each of them the same way, and a
      // commit whose outcome is unknown must never be written twice
      if (batch.length === 1 || isDatabaseUnavailable(err)) return batch.forEach((p) => p.reject(err));
      // each on its own, except those given up meanwhile (shutdown)
      await Promise.all(batch.filter((p) => this.unsettled.has(p)).map((p) => this.flush([p], slot)));
    }
  }

  private async write(batch: Pending[], onCommit: () => void) {
    const rows = batch.flatMap((p) => p.rows);
    const keyed = batch.some((p) => p.record);
    // each keyed submission records its own part, with its own outcome, in the shared transaction
    const record = async (tx: TxSql, stored: boolean[]) => {
      const parts: PartRecord[] = [];
      let offset = 0;
      for (const p of batch) {
        if (p.record) parts.push({ ...p.record, ...countStored(stored.slice(offset, offset + p.rows.length)) });
        offset += p.rows.length;
      }
      await recordParts(tx, parts);
    };
    // writeEvents writes again itself what is known not to have committed (db/transaction.ts)
    const deadline = Math.min(...batch.map((p) => p.deadline));
    const started = performance.now();
    const result = await writeEvents(this.sql, rows, this.opts.throttle, GROUPING_VERSION, keyed ? record : undefined, deadline, onCommit);
    observeWriterTransaction(performance.now() - started);
    this.opts.afterCommit?.(result.groups, result.pending);
    return result;
  }
}

function countStored(stored: boolean[]): SubmitResult {
  const n = stored.filter(Boolean).length;
  return { stored: n, throttled: stored.length - n };
}
