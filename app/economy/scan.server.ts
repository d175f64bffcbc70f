import { setImmediate as nextTurn } from "node:timers/promises";
import type { Sql } from "../../db/client.js";
import { writeObservationsTx, type Observation } from "../../db/economy.js";
import { beginRun, finishSync, getOpenCloudKey, savePage } from "../../db/economy-sync.js";
import { openKey } from "./crypto.server";
import { Interrupted, OpenCloudAuthError, OpenCloudClient, OpenCloudError, Pacer } from "./open-cloud.server";
import { userIdFromKey } from "./profile.server";
import { readProfileInSlices, seedFields } from "./currency-map.server";
import { loadMap } from "./map.server";
import { isStorable } from "~/text.server";

export type ScanDeps = {
  sql: Sql;
  appSecret: string;
  openCloudBaseUrl: string;
  requestsPerMinute: number;
  /** aborted when the process shuts down: the scan stops within one request and resumes elsewhere */
  signal: AbortSignal;
  /** stop after this long so one job does not hold a worker (or outlive pg-boss's expiry) forever */
  sliceMs: number;
  backoffBaseMs?: number;
  /** after a committed page that wrote players (the economy alerts' trigger); must not throw */
  afterPage?: (projectId: string) => void;
};

/** done: finished or failed for good; continue: more to do, enqueue the next slice; superseded: not ours any more. */
export type SliceOutcome = "done" | "continue" | "superseded";

/**
 * Runs one slice of a project's scan: list a page (maxPageSize 256), read each entry that names a
 * player, read it through the project's currency map (loaded once per slice, so a map saved during a
 * scan applies from the next slice), and commit the page's snapshots together with the next
 * cursor and counters. A page cut short by shutdown is not committed and is read again on resume,
 * so counters stay exact. 401/403 and other permanent errors end the scan in state `failed`.
 */
export async function runScanSlice(deps: ScanDeps, projectId: string, scanId: string): Promise<SliceOutcome> {
  const { sql } = deps;
  const run = await beginRun(sql, projectId, scanId);
  if (!run) return "superseded";
  const key = await getOpenCloudKey(sql, projectId);
  if (!key) {
    await finishSync(sql, projectId, scanId, { state: "failed", error: "No Open Cloud key is configured; store one with PUT /api/economy/key." });
    return "done";
  }
  let apiKey: string;
  try {
    apiKey = openKey(deps.appSecret, projectId, { ciphertext: key.key_ciphertext, iv: key.key_iv, tag: key.key_tag });
  } catch {
    await finishSync(sql, projectId, scanId, {
      state: "failed",
      error: "The stored Open Cloud key cannot be decrypted (APP_SECRET changed?); store it again with PUT /api/economy/key.",
    });
    return "done";
  }
  const client = new OpenCloudClient(
    {
      baseUrl: deps.openCloudBaseUrl,
      apiKey,
      universeId: key.universe_id,
      datastoreName: key.datastore_name,
      scope: key.scope,
      keyPrefix: key.key_prefix,
    },
    new Pacer(deps.requestsPerMinute),
    deps.signal,
    deps.backoffBaseMs,
  );
  const { compiled: map } = await loadMap(sql, projectId);
  const deadline = Date.now() + deps.sliceMs;
  let cursor = run.cursor;
  try {
    for (;;) {
      if (deps.signal.aborted || Date.now() >= deadline) return "continue";
      const page = await client.listEntries(cursor);
      const observations: Observation[] = [];
      let skipped = 0;
      let failed = 0;
      for (const entry of page.entries) {
        const userId = userIdFromKey(entry.id);
        if (!userId) {
          skipped++; // ____PS and keys naming no player: not worth a read
          continue;
        }
        let value;
        try {
          value = await client.getEntry(entry.id);
        } catch (err) {
          if (err instanceof OpenCloudError && err.status >= 400 && err.status < 500 && err.status !== 429) {
            failed++; // this entry cannot be read (e.g. 400); the rest of the store can
            continue;
          }
          throw err;
        }
        // a profile is read in slices: the scan runs in the service's process, beside its requests
        const reading = value ? await readProfileInSlices(map, value.value, nextTurn) : null;
        const profile = reading?.ok ? reading.profile : null;
        if (profile && !profile.display_names.every(isStorable)) {
          skipped++; // a name PostgreSQL cannot store (NUL, lone surrogate) would fail the whole page
          continue;
        }
        if (!value || !profile || !value.revisionCreateTime) {
          if (value && profile && !value.revisionCreateTime) failed++;
          else skipped++;
          continue;
        }
        const seed = seedFields(profile.balances);
        observations.push({
          userId,
          balances: profile.balances,
          total: profile.total,
          cash: seed.cash,
          bank: seed.bank,
          darkCoin: seed.dark_coin,
          skippedValues: profile.skipped_values,
          skippedCount: profile.skipped_count,
          displayNames: profile.display_names,
          dataCode: profile.data_code,
          username: null,
          displayName: null,
          observedAt: value.revisionCreateTime,
          revisionTime: value.revisionCreateTime,
        });
      }
      const next = page.nextPageToken;
      const owned = await sql.begin(async (tx) => {
        const stored = await writeObservationsTx(tx, projectId, "scan", observations);
        const ok = await savePage(tx, projectId, scanId, {
          cursor: next,
          scanned: page.entries.length,
          stored: stored.size,
          // not stored: no player, not a profile of the map, deleted, or older than the snapshot (a push always wins)
          skipped: skipped + (observations.length - stored.size),
          failed,
        });
        if (!ok) throw new Superseded();
        return stored.size > 0 ? "wrote" : "empty";
      }).catch((err) => {
        if (err instanceof Superseded) return false;
        throw err;
      });
      if (!owned) return "superseded";
      if (owned === "wrote") deps.afterPage?.(projectId);
      if (!next) {
        await finishSync(sql, projectId, scanId, { state: "succeeded" });
        return "done";
      }
      cursor = next;
    }
  } catch (err) {
    if (err instanceof Interrupted) return "continue";
    if (err instanceof OpenCloudAuthError || (err instanceof OpenCloudError && err.status !== 0 && err.status < 500 && err.status !== 429)) {
      await finishSync(sql, projectId, scanId, { state: "failed", error: err.message });
      return "done";
    }
    throw err; // transient (5xx, network, database): the job is retried and resumes from the cursor
  }
}

class Superseded extends Error {}
