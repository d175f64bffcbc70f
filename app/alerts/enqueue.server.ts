import type PgBoss from "pg-boss";
import type { Sql } from "../../db/client.js";
import { enqueueMode } from "../../db/alerts.js";
import type { TouchedGroup } from "../../db/events.js";
import { log } from "../../log/logger.js";

export const ALERT_QUEUE = "alerts";
export type AlertJob = { project_id: string; fingerprints: string[] };

const MAX_FINGERPRINTS = 1000;

/**
 * Work recorded in memory and sent as pg-boss jobs at most every `flushMs` (`flush`, one at a time),
 * so a storm of writes makes a few jobs a second; `drain` sends what is pending now (graceful shutdown).
 */
export abstract class Coalescer {
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(private readonly flushMs: number) {}

  protected abstract flush(): Promise<void>;

  /** Something is pending: flush it within `flushMs`. */
  protected schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }, this.flushMs);
    this.timer.unref();
  }

  async drain(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.flushing = this.flushing.then(() => this.flush());
    }
    await this.flushing;
  }
}

/**
 * The ingest's best-effort alert trigger. `add` runs after each committed ingest write and only
 * records fingerprints in memory; every `flushMs` the pending set becomes one pg-boss job per
 * project, so a storm of thousands of requests makes a few jobs a second, not one per request.
 * What a project needs is cached (refreshed every `cacheMs`, and at once when this process changes a
 * rule), which keeps the ingest path free of extra queries: nothing without an enabled rule; only
 * created or regressed groups when it has no frequency rule; every touched group otherwise.
 * Nothing here throws into the ingest: failures are logged and the alert is lost, never the event.
 */
export class AlertEnqueuer extends Coalescer {
  /** project -> fingerprint -> whether the group was created or regressed by the write */
  private pending = new Map<string, Map<string, boolean>>();
  private rules = new Map<string, { mode: "none" | "changes" | "all"; until: number }>();

  constructor(
    private readonly sql: Sql,
    private readonly boss: PgBoss | null,
    private readonly opts: { flushMs: number; cacheMs: number } = { flushMs: 200, cacheMs: 5_000 },
  ) {
    super(opts.flushMs);
  }

  add(groups: TouchedGroup[]): void {
    if (!this.boss) return;
    const now = Date.now();
    for (const g of groups) {
      if (g.status === "ignored") continue;
      const changed = g.created || g.regressed;
      const cached = this.rules.get(g.project_id);
      if (cached && cached.until > now && (cached.mode === "none" || (cached.mode === "changes" && !changed))) continue;
      let fps = this.pending.get(g.project_id);
      if (!fps) this.pending.set(g.project_id, (fps = new Map()));
      fps.set(g.fingerprint, changed || fps.get(g.fingerprint) === true);
    }
    if (this.pending.size > 0) this.schedule();
  }

  /** Rules of the project changed here: look again before the next enqueue. */
  forget(projectId: string): void {
    this.rules.delete(projectId);
  }

  private async mode(projectId: string): Promise<"none" | "changes" | "all"> {
    const cached = this.rules.get(projectId);
    if (cached && cached.until > Date.now()) return cached.mode;
    const mode = await enqueueMode(this.sql, projectId);
    this.rules.set(projectId, { mode, until: Date.now() + this.opts.cacheMs });
    return mode;
  }

  protected async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    await Promise.all(
      [...batch].map(async ([projectId, fps]) => {
        try {
          const mode = await this.mode(projectId);
          if (mode === "none") return;
          const all = [...fps].filter(([, changed]) => mode === "all" || changed).map(([fp]) => fp).sort();
          for (let i = 0; i < all.length; i += MAX_FINGERPRINTS) {
            const job: AlertJob = { project_id: projectId, fingerprints: all.slice(i, i + MAX_FINGERPRINTS) };
            await this.boss!.send(ALERT_QUEUE, job, { retryLimit: 2, retryDelay: 1, expireInSeconds: 120 });
          }
        } catch (err) {
          log.error({ err, projectId }, `[alerts] could not enqueue alert evaluation for project ${projectId}`);
        }
      }),
    );
  }
}
