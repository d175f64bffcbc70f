export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` every 25 ms until it returns something truthy, which it returns; throws after `timeoutMs`. */
export async function waitFor<T>(fn: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting");
    await sleep(25);
  }
}

/** Long enough for the alerts' 200 ms coalescing, a 500 ms poll and the send to have happened if they were going to. */
export const QUIET_MS = 2000;
