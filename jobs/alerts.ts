import type PgBoss from "pg-boss";
import { dispatchAlerts, type AlertDeps } from "../app/alerts/dispatch.server.js";
import { ALERT_QUEUE, type AlertJob } from "../app/alerts/enqueue.server.js";
import { log } from "../log/logger.js";

/**
 * The alert worker. pg-boss 10 polls every 2 s and fetches one job per poll by default (measured
 * 0.5 jobs/s); alerts must reach their channel within 3 s of the ingest, so this worker polls every
 * 0.5 s (pg-boss's minimum) and takes up to 20 jobs at once, merging jobs of the same project.
 */
export async function startAlertWorker(boss: PgBoss, deps: AlertDeps): Promise<void> {
  await boss.createQueue(ALERT_QUEUE);
  await boss.work<AlertJob>(ALERT_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    const byProject = new Map<string, Set<string>>();
    for (const j of jobs) {
      const set = byProject.get(j.data.project_id) ?? new Set<string>();
      for (const f of j.data.fingerprints) set.add(f);
      byProject.set(j.data.project_id, set);
    }
    for (const [projectId, set] of byProject) {
      const r = await dispatchAlerts(deps, projectId, [...set]);
      if (r.failed) log.warn(`[alerts] project ${projectId}: ${r.sent} sent, ${r.failed} failed`);
      else if (r.sent) log.info(`[alerts] project ${projectId}: ${r.sent} sent`);
    }
  });
}
