import type { Sql } from "../../db/client.js";
import { NotCommittedError, writeEvents, type EventRow, type ThrottleRule, type TouchedGroup } from "../../db/events.js";

export type SubmitResult = { stored: number; throttled: number };
type Pending = { rows: EventRow[]; resolve: (r: SubmitResult) => void; reject: (e: unknown) => void };

const RETRYABLE = new Set(["40P01", "40001"]); // deadlock, serialization failure

/**
 * Coalesces concurrent ingest requests into shared transactions. While fewer than `concurrency`
 * writes are in flight a submission is written at once; otherwise it waits and joins the next write
 * with everything else that queued meanwhile. Each submission resolves only after the transaction
 * holding its events has committed. If a shared write fails, each submission is retried on its own,
 * so one request cannot fail another.
 */
export class EventWriter {
  private queue: Pending[] = [];
  /** every submission not yet settled, queued or being written */
  private unsettled = new Set<Pending>();
  private inFlight = 0;
  private pending = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly opts: {
      throttle: ThrottleRule;
      concurrency: number;
      maxEventsPerWrite: number;
      afterCommit?: (groups: TouchedGroup[]) => void;
    },
  ) {}

  submit(rows: EventRow[]): Promise<SubmitResult> {
    this.pending += rows.length;
    let entry!: Pending;
    return new Promise<SubmitResult>((resolve, reject) => {
      entry = { rows, resolve, reject };
      this.unsettled.add(entry);
      this.queue.push(entry);
      this.pump();
    }).finally(() => {
      this.unsettled.delete(entry);
      this.pending -= rows.length;
    });
  }

  /** Events submitted and not yet committed or failed (queued or being written): the ingest backlog. */
  get pendingEvents(): number {
    return this.pending;
  }

  /** Resolves when nothing is queued or being written (graceful shutdown). */
  drain(): Promise<void> {
    if (this.inFlight === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  /**
   * Gives up on every submission not yet settled (shutdown past its bound): each is rejected with
   * `reason` and nothing queued is written any more. A write already sent goes on; its outcome is
   * unknown to the caller, never acknowledged. Returns what was given up.
   */
  abandon(reason: unknown): { submissions: number; events: number; writing: number } {
    const given = [...this.unsettled];
    const writing = this.inFlight;
    this.queue = [];
    for (const p of given) p.reject(reason);
    return { submissions: given.length, events: given.reduce((n, p) => n + p.rows.length, 0), writing };
  }

  private pump() {
    while (this.inFlight < this.opts.concurrency && this.queue.length > 0) {
      const batch: Pending[] = [];
      let events = 0;
      while (this.queue.length > 0 && (batch.length === 0 || events + this.queue[0].rows.length <= this.opts.maxEventsPerWrite)) {
        const p = this.queue.shift()!;
        batch.push(p);
        events += p.rows.length;
      }
      this.inFlight++;
      void this.flush(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.pump();
        else if (this.inFlight === 0) this.idle.splice(0).forEach((r) => r());
      });
    }
  }

  private async flush(batch: Pending[]) {
    try {
      const { stored } = await this.write(batch.flatMap((p) => p.rows));
      let offset = 0;
      for (const p of batch) {
        const mine = stored.slice(offset, offset + p.rows.length);
        offset += p.rows.length;
        const n = mine.filter(Boolean).length;
        p.resolve({ stored: n, throttled: p.rows.length - n });
      }
    } catch (err) {
      if (batch.length === 1) return batch[0].reject(err);
      // each on its own, except those given up meanwhile (shutdown)
      await Promise.all(batch.filter((p) => this.unsettled.has(p)).map((p) => this.flush([p])));
    }
  }

  private async write(rows: EventRow[]) {
    for (let attempt = 1; ; attempt++) {
      try {
        const result = await writeEvents(this.sql, rows, this.opts.throttle);
        this.opts.afterCommit?.(result.groups);
        return result;
      } catch (err) {
        // a connection lost before COMMIT left nothing behind: write again on a fresh connection
        const lost = err instanceof NotCommittedError;
        const code = (err as { code?: string }).code;
        if (attempt >= 3 || !(lost || (code && RETRYABLE.has(code)))) throw err;
        if (lost) await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }
}
