import PgBoss from "pg-boss";
import type { Sql } from "../db/client.js";
import { runHealthRetention, runRetention } from "./retention.js";
import { pruneAudit } from "../db/audit.js";
import { pruneEventIds } from "../db/sentry.js";
import { pruneIngestWindows } from "../db/ingest-limits.js";
import { pruneIdempotencyKeys } from "../db/idempotency.js";
import { pruneFlows } from "../db/economy-flows.js";
import { pruneClientReports, SDK_HEALTH_MAX_DAYS } from "../db/client-reports.js";
import { pruneEconomyAlertClaims } from "../db/economy-alerts.js";
import { reopenExpiredSnoozes } from "../db/groups.js";
import { moveStatsWindows } from "../db/stats.js";
import { fillGroupFrames } from "./group-frames.js";
import { fillGroupingTemplates, GROUPING_LEARN_QUEUE, learnProject } from "./grouping-learn.js";
import { projectsWithNewGroups } from "../db/grouping-templates.js";
import { ensurePartitions } from "./partitions.js";
import { runHealthCompaction, runHealthJob } from "./health.js";
import { registerEconomySync, type EconomySyncOptions } from "./economy-sync.js";
import { log } from "../log/logger.js";

export const QUEUES = {
  retention: "retention",
  partitions: "partitions",
  snoozes: "snoozes",
  statsWindows: "stats-windows",
  groupFrames: "group-frames",
  groupingLearn: GROUPING_LEARN_QUEUE,
  health: "health",
} as const;

/** Starts pg-boss on the same database and registers the workers this process runs. */
export async function startJobs(
  databaseUrl: string,
  sql: Sql,
  opts: { retentionDays: number; auditRetentionDays?: number; economy?: EconomySyncOptions },
): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: databaseUrl, max: 4, schema: "pgboss" });
  // one line per error: the error object carries the whole database client
  boss.on("error", (err) => log.error(`[jobs] pg-boss error: ${describeError(err)}`));
  await boss.start();
  await boss.createQueue(QUEUES.retention);
  // hourly; pg-boss makes sure only one instance runs a scheduled job per slot
  await boss.schedule(QUEUES.retention, "17 * * * *");
  await boss.work(QUEUES.retention, async () => {
    const r = await runRetention(sql, opts.retentionDays);
    if (r.events) log.info(`[jobs] retention deleted ${r.events} raw events`);
    const health = await runHealthRetention(sql, opts.retentionDays);
    if (Object.values(health).some((n) => n > 0)) log.info(`[jobs] retention deleted health data ${JSON.stringify(health)}`);
    const flows = await pruneFlows(sql, opts.retentionDays);
    if (flows) log.info(`[jobs] retention deleted ${flows} economy flows`);
    await pruneEventIds(sql);
    await pruneIngestWindows(sql);
    await pruneIdempotencyKeys(sql);
    await pruneClientReports(sql, SDK_HEALTH_MAX_DAYS);
    await pruneEconomyAlertClaims(sql);
    const audit = await pruneAudit(sql, opts.auditRetentionDays ?? 365);
    if (audit) log.info(`[jobs] retention deleted ${audit} audit log rows`);
  });
  // daily partitions of events and minute rollups, kept a week ahead; also once at start, so a
  // process that was down for days catches up before the current day runs out
  await boss.createQueue(QUEUES.partitions);
  await boss.schedule(QUEUES.partitions, "7 * * * *");
  await boss.work(QUEUES.partitions, async () => {
    const made = await ensurePartitions(sql);
    if (made) log.info(`[jobs] created ${made} daily partitions`);
  });
  await boss.send(QUEUES.partitions, {}, { singletonKey: "start", singletonSeconds: 60 });
  // snoozes that end at a time reopen within a minute of it, even when the error has stopped
  await boss.createQueue(QUEUES.snoozes);
  await boss.schedule(QUEUES.snoozes, "* * * * *");
  await boss.work(QUEUES.snoozes, async () => {
    await reopenExpiredSnoozes(sql);
  });
  // the stats windows of projects without writes move on too (a write moves its own)
  await boss.createQueue(QUEUES.statsWindows);
  await boss.schedule(QUEUES.statsWindows, "* * * * *");
  await boss.work(QUEUES.statsWindows, async () => {
    await moveStatsWindows(sql);
  });
  // issues without the frames search matches (from before migration 115) are filled from their stored
  // events: once at start, and hourly for any a path without stacks made
  await boss.createQueue(QUEUES.groupFrames);
  await boss.schedule(QUEUES.groupFrames, "37 * * * *");
  await boss.work(QUEUES.groupFrames, async () => {
    const filled = await fillGroupFrames(sql);
    if (filled) log.info(`[jobs] filled the stack frames of ${filled} issues`);
  });
  await boss.send(QUEUES.groupFrames, {}, { singletonKey: "start", singletonSeconds: 60 });
  // learned templates (jobs/grouping-learn.ts): a project's pass after writes that made issues
  // (debounced, app/ingest/learned-templates.server.ts); every ten minutes, the issues from before
  // migration 116 get their templates and the projects with new issues are learned again
  await boss.createQueue(QUEUES.groupingLearn);
  await boss.schedule(QUEUES.groupingLearn, "*/10 * * * *");
  await boss.work<{ project_id?: string }>(QUEUES.groupingLearn, async ([job]) => {
    const projects = job?.data?.project_id ? new Set([job.data.project_id]) : await fillGroupingTemplates(sql);
    if (!job?.data?.project_id) for (const p of await projectsWithNewGroups(sql, 15 * 60)) projects.add(p);
    for (const p of projects) {
      const r = await learnProject(sql, p);
      if (r?.merged) log.info(`[jobs] learned templates: ${r.merged} issue(s) merged into their template's issue`);
    }
  });
  await boss.send(QUEUES.groupingLearn, {}, { singletonKey: "start", singletonSeconds: 60 });
  // game servers silent for 3 sample intervals ended abnormally (docs/health.md)
  await boss.createQueue(QUEUES.health);
  await boss.schedule(QUEUES.health, "* * * * *");
  await boss.work(QUEUES.health, async () => {
    const lost = await runHealthJob(sql);
    if (lost) log.info(`[jobs] ${lost} game servers ended abnormally (silent)`);
    // the closed hours' and days' shard rows merged into one per cell: reads over 30 days stay fast
    await runHealthCompaction(sql);
  });
  if (opts.economy) stoppers.set(boss, (await registerEconomySync(boss, sql, opts.economy)).abort);
  return boss;
}

const stoppers = new WeakMap<PgBoss, () => void>();

/** Stops pg-boss after telling long-running workers (the economy scan) to hand their work back. */
export async function stopJobs(boss: PgBoss, opts: { timeoutMs: number }): Promise<void> {
  stoppers.get(boss)?.();
  await boss.stop({ graceful: true, timeout: opts.timeoutMs, wait: true });
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" ? `${err.message} (${code})` : err.message;
}
