import type PgBoss from "pg-boss";
import type { Sql } from "../../db/client.js";
import { hasEconomyRules } from "../../db/economy-alerts.js";
import { Coalescer } from "./enqueue.server";
import { log } from "../../log/logger.js";

export const ECONOMY_ALERT_QUEUE = "economy-alerts";
export type EconomyAlertJob = { project_id: string };

/**
 * The economy's best-effort alert trigger, called after each committed push and each scan page that
 * wrote players. `add` only records the project in memory (after a cached look at whether it has an
 * enabled economy rule, refreshed every `cacheMs` and at once when this process changes a rule);
 * every `flushMs` each pending project becomes one pg-boss job. So a push costs no query, a storm of
 * pushes makes a few jobs a second, and nothing here throws into the push or the scan: a failure is
 * logged and the next push enqueues again (the evaluation reads everything since its cursor).
 */
export class EconomyAlertEnqueuer extends Coalescer {
  private pending = new Set<string>();
  private rules = new Map<string, { any: boolean; until: number }>();

  constructor(
    private readonly sql: Sql,
    private readonly boss: PgBoss | null,
    private readonly opts: { flushMs: number; cacheMs: number } = { flushMs: 200, cacheMs: 5_000 },
  ) {
    super(opts.flushMs);
  }

  add(projectId: string): void {
    if (!this.boss) return;
    const cached = this.rules.get(projectId);
    if (cached && cached.until > Date.now() && !cached.any) return;
    this.pending.add(projectId);
    this.schedule();
  }

  /** Rules of the project changed here: look again before the next enqueue. */
  forget(projectId: string): void {
    this.rules.delete(projectId);
  }

  protected async flush(): Promise<void> {
    const batch = [...this.pending];
    this.pending = new Set();
    await Promise.all(
      batch.map(async (projectId) => {
        try {
          const cached = this.rules.get(projectId);
          const any = cached && cached.until > Date.now() ? cached.any : await hasEconomyRules(this.sql, projectId);
          this.rules.set(projectId, { any, until: cached && cached.until > Date.now() ? cached.until : Date.now() + this.opts.cacheMs });
          if (!any) return;
          const job: EconomyAlertJob = { project_id: projectId };
          await this.boss!.send(ECONOMY_ALERT_QUEUE, job, { retryLimit: 2, retryDelay: 1, expireInSeconds: 120 });
        } catch (err) {
          log.error({ err, projectId }, `[alerts] could not enqueue economy alert evaluation for project ${projectId}`);
        }
      }),
    );
  }
}
