import type { Sql } from "../../db/client.js";
import { holdDrainLock } from "../../db/counter-deltas.js";

/**
 * Holds `tables` (a comma list) in ACCESS EXCLUSIVE mode in a transaction on `sql` until `release`
 * is called; resolves once the lock is held. `held()` is false from the release on.
 */
export async function lockTables(sql: Sql, tables: string) {
  let held = true;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const holding = new Promise<void>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    await tx.unsafe(`set local lock_timeout = 0`);
    await tx.unsafe(`lock table ${tables} in access exclusive mode`);
    locked();
    await released;
    held = false;
  });
  await holding;
  return {
    held: () => held,
    /** Ends the transaction holding the lock, and waits for it to end. */
    release: async () => {
      release();
      await holder;
    },
  };
}

/**
 * Holds the counter drain's lock in a transaction on `sql`, so no drain runs (pending counter rows
 * stay pending) until `release` is called; resolves once the lock is held.
 */
export async function holdDrain(sql: Sql) {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const holding = new Promise<void>((r) => (held = r));
  const holder = sql.begin(async (tx) => {
    await holdDrainLock(tx);
    held();
    await released;
  });
  await holding;
  return {
    /** Ends the transaction holding the lock, and waits for it to end. */
    release: async () => {
      release();
      await holder;
    },
  };
}
