/**
 * The write of a batch of events, in one transaction and a fixed number of statements. Its steps live
 * in the files named for their job:
 *  - db/write-resolve.ts: the merge locks, repeated event ids, where each fingerprint lands;
 *  - db/write-aggregate.ts: what Node computes from the rows (group figures, throttle inputs, kept
 *    events, per-key aggregates);
 *  - db/write-statements.ts: the alias insert, the group upsert (the throttle) and the statement
 *    that writes the events, the traces and the pending row of deferred counters;
 *  - db/counter-deltas.ts: applies the deferred counters (users, environments, versions, rollups)
 *    off the request's transaction, within a bounded delay.
 */
import type { Sql, TxSql } from "./client.js";
import { transaction } from "./transaction.js";
import { aggregateGroups, countGroupRows, keepAndAggregate } from "./write-aggregate.js";
import { lockAndResolve, placeEvents } from "./write-resolve.js";
import { insertAliases, touchedGroups, upsertGroups, writeEventsAndCounters } from "./write-statements.js";
import type { EventRow, ThrottleRule, WriteResult } from "./write-types.js";

export { NotCommittedError } from "./transaction.js";
export { isClientOrigin } from "./write-aggregate.js";
export { mergeLockKey } from "./write-resolve.js";
export type { EventRow, Level, ThrottleRule, TouchedGroup, WriteResult } from "./write-types.js";

/**
 * Writes a batch of events in one transaction: group upserts (with the throttle), raw rows, traces,
 * and one pending row per project of the counters reads can wait for (distinct users, environments,
 * versions, rollups; db/counter-deltas.ts applies them). Returns which events were stored as rows,
 * the groups touched and the ids of the pending rows.
 * `extra` runs inside the same transaction, after the writes and before the commit, with which events
 * were stored: whatever it writes commits or rolls back with the events.
 *
 * Lock order is the same in every transaction: the project's merge lock (shared; a merge or unmerge
 * takes it exclusively, so it never interleaves with a write and counts move exactly), then groups
 * by fingerprint, then traces by key. The pending row takes no lock anyone waits for.
 *
 * The throttle is decided in the group upsert, on each locked row: it reads the clock
 * once the row's lock is granted, keeps the row's entries still in the window and lets in as many of
 * this batch's untraced events of that row as the limit leaves room for. That clock is the receive
 * time of the row's stored events, so transactions on one row (from any instance) hold its lock in
 * the order of their receive times, and each judges the window with every earlier row already in it,
 * however long it waited for the lock. Node then picks the kept events (traced ones always, untraced
 * ones in arrival order up to what each row let in) and sends only those with their payload; traces
 * and the deferred counters go as per-key aggregates, not per event.
 */
export async function writeEvents(
  sql: Sql,
  input: EventRow[],
  throttle: ThrottleRule,
  groupingVersion = 3,
  extra?: (tx: TxSql, stored: boolean[]) => Promise<void>,
  /** ms since epoch: the write is bounded by it and rolled back past it (see transaction()) */
  deadline?: number,
  /** its statements are done and COMMIT is being sent (see transaction()'s `onCommit`) */
  onCommit?: () => void,
): Promise<WriteResult> {
  if (input.length === 0) return { stored: [], groups: [], pending: [] };
  // exactly once: resolves only if the transaction committed, even when its connection is lost
  // around COMMIT; a NotCommittedError means nothing was written (see db/transaction.ts)
  return transaction(
    sql,
    async (tx) => {
      const batch = await lockAndResolve(tx, input);
      if (!batch) {
        // every event was a repeat of an event id already received
        await extra?.(tx, input.map(() => false));
        return { stored: input.map(() => false), groups: [], pending: [] };
      }
      const { rows, fresh, res } = batch;
      const slotOf = placeEvents(rows, res);
      const groups = aggregateGroups(rows, slotOf);
      const counts = countGroupRows(rows, slotOf, groups);
      await insertAliases(tx, res);
      const upserted = await upsertGroups(tx, groups, counts, throttle, groupingVersion);
      const writes = keepAndAggregate(rows, slotOf, upserted);
      const pending = await writeEventsAndCounters(tx, writes);
      const stored = inInputOrder(fresh, writes.storedRows);
      await extra?.(tx, stored);
      return { stored, groups: touchedGroups(upserted), pending };
    },
    // a try known to have written nothing is written again, while the deadline allows
    { deadline, attempts: 3, onCommit },
  );
}

/**
 * Reads which input events had a new event id (null: all did) and which of the written rows were
 * stored; returns, per input event, whether it was stored (a dropped repeat of an event id was not).
 */
function inInputOrder(fresh: boolean[] | null, storedRows: boolean[]): boolean[] {
  if (!fresh) return storedRows;
  let k = 0;
  return fresh.map((f) => (f ? storedRows[k++] : false));
}
