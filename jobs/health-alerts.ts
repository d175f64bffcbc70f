import type PgBoss from "pg-boss";
import { projectsWithHealthRules } from "../db/health-alerts.js";
import { dispatchHealthAlerts } from "../app/alerts/health.server.js";
import type { AlertDeps } from "../app/alerts/dispatch.server.js";
import { log } from "../log/logger.js";

export const HEALTH_ALERT_QUEUE = "health-alerts";
/** a job of the queue: one project's evaluation, or (no project) the minute's tick that makes them */
export type HealthAlertJob = { project_id?: string };

/**
 * The health alert worker (docs/health.md#alerts). Every minute pg-boss's schedule makes one tick job
 * (one per slot across instances); the tick sends one job per project with an enabled health rule,
 * singleton per project and minute, so projects are evaluated in parallel by every instance's worker
 * and a slow project does not hold up the others. Like the other alert workers it polls every 0.5 s
 * and takes up to 20 jobs at once, so a minute's evaluation starts within a second of its tick.
 * Two evaluations of one project at once (a late job and the next minute's) send each message once:
 * fired and recovered are claimed on the subject's state row.
 */
export async function startHealthAlertWorker(boss: PgBoss, deps: AlertDeps): Promise<void> {
  await boss.createQueue(HEALTH_ALERT_QUEUE);
  await boss.schedule(HEALTH_ALERT_QUEUE, "* * * * *", {});
  await boss.work<HealthAlertJob>(HEALTH_ALERT_QUEUE, { batchSize: 20, pollingIntervalSeconds: 0.5 }, async (jobs) => {
    for (const job of jobs) {
      if (job.data?.project_id) continue;
      const minute = Math.floor(Date.now() / 60_000);
      for (const projectId of await projectsWithHealthRules(deps.sql)) {
        await boss.send(HEALTH_ALERT_QUEUE, { project_id: projectId } satisfies HealthAlertJob, {
          singletonKey: `${projectId}:${minute}`,
          singletonSeconds: 60,
          retryLimit: 1,
          expireInSeconds: 120,
        });
      }
    }
    const projects = new Set(jobs.map((j) => j.data?.project_id).filter((p): p is string => !!p));
    await Promise.all(
      [...projects].map(async (projectId) => {
        try {
          const r = await dispatchHealthAlerts(deps, projectId);
          if (r.failed) log.warn(`[alerts] project ${projectId}: ${r.sent} health alert(s) sent, ${r.failed} failed`);
          else if (r.sent) log.info(`[alerts] project ${projectId}: ${r.sent} health alert(s) sent`);
        } catch (err) {
          log.error({ err, projectId }, `[alerts] health alert evaluation of project ${projectId} failed`);
        }
      }),
    );
  });
}
