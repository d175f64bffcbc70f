import type PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import { finishSync } from "../db/economy-sync.js";
import { runScanSlice } from "../app/economy/scan.server.js";
import { EconomyAlertEnqueuer } from "../app/alerts/economy-enqueue.server.js";
import { enqueueSlice, SLICE_MS, SYNC_JOB_OPTIONS, SYNC_QUEUE, type SliceJob } from "../app/economy/sync.server.js";
import { log } from "../log/logger.js";

export type EconomySyncOptions = { appSecret: string; openCloudBaseUrl: string; requestsPerMinute: number; workers?: number };

/**
 * Registers the Open Cloud scan workers. Each job runs one slice of a scan, then enqueues the next
 * slice; on shutdown `abort()` stops the slice within one request and hands the rest to a new job,
 * which any instance (this one after a restart) picks up from the saved cursor.
 */
export async function registerEconomySync(boss: PgBoss, sql: Sql, opts: EconomySyncOptions): Promise<{ abort: () => void }> {
  const controller = new AbortController();
  // this process's rule cache for scans (the requests' own is in Services); a rule change is seen within its refresh
  const economyAlerts = new EconomyAlertEnqueuer(sql, boss);
  await boss.createQueue(SYNC_QUEUE);
  const handler = async ([job]: PgBoss.JobWithMetadata<SliceJob>[]) => {
    const { projectId, scanId } = job.data;
    try {
      const outcome = await runScanSlice(
        {
          sql,
          appSecret: opts.appSecret,
          openCloudBaseUrl: opts.openCloudBaseUrl,
          requestsPerMinute: opts.requestsPerMinute,
          signal: controller.signal,
          sliceMs: SLICE_MS,
          afterPage: (id) => economyAlerts.add(id),
        },
        projectId,
        scanId,
      );
      if (outcome === "continue") await enqueueSlice(boss, { projectId, scanId });
    } catch (err) {
      log.error({ err, projectId }, `[jobs] economy scan of project ${projectId} failed (attempt ${job.retryCount + 1})`);
      if (job.retryCount >= (job.retryLimit ?? SYNC_JOB_OPTIONS.retryLimit)) {
        await finishSync(sql, projectId, scanId, {
          state: "failed",
          error: "The scan stopped after repeated errors talking to Open Cloud or the database; start it again to resume.",
        });
        return;
      }
      throw err;
    }
  };
  // one slice per worker at a time; a short poll so a scan starts within a second of its request
  for (let i = 0; i < (opts.workers ?? 2); i++) {
    await boss.work<SliceJob>(SYNC_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1, includeMetadata: true }, handler);
  }
  return { abort: () => controller.abort() };
}
