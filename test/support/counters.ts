import type { Sql } from "../../db/client.js";
import { sleep } from "./wait.js";

/**
 * Waits until no deferred counter is pending (db/counter-deltas.ts): the service applies them by
 * itself shortly after each write, so a read after this sees every write committed before the call.
 * Reads of users, environments, versions and rollups wait for it; it drains nothing itself.
 */
export async function countersApplied(sql: Sql, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    const [{ pending }] = await sql<{ pending: boolean }[]>`select exists (select 1 from counter_deltas) as pending`;
    if (!pending) return;
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting for the deferred counters");
    await sleep(25);
  }
}
