import type PgBoss from "pg-boss";
import { dispatchEconomyAlerts, type EconomyAlertDeps } from "../app/alerts/economy.server.js";
import { ECONOMY_ALERT_QUEUE, type EconomyAlertJob } from "../app/alerts/economy-enqueue.server.js";
import { log } from "../log/logger.js";

/** a project with more to read than one pass reads gets this many passes per job */
const MAX_PASSES = 5;

/**
 * The economy alert worker: like the error alerts' (jobs/alerts.ts), it polls every 0.5 s and takes
 * up to 20 jobs at once; jobs of one project make one evaluation, since each reads everything
 * written since the project's cursor.
 */
export async function startEconomyAlertWorker(boss: PgBoss, deps: EconomyAlertDeps): Promise<void> {
  await boss.createQueue(ECONOMY_ALERT_QUEUE);
  await boss.work<EconomyAlertJob>(ECONOMY_ALERT_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    for (const projectId of new Set(jobs.map((j) => j.data.project_id))) {
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        const r = await dispatchEconomyAlerts(deps, projectId);
        if (r.failed) log.warn(`[alerts] project ${projectId}: ${r.sent} economy alert(s) sent, ${r.failed} failed`);
        else if (r.sent) log.info(`[alerts] project ${projectId}: ${r.sent} economy alert(s) sent`);
        if (!r.more) break;
      }
    }
  });
}
