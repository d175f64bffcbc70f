/**
 * Ingest's side of the learned templates (app/ingest/miner.server.ts, jobs/grouping-learn.ts): a
 * per-project cache of what the project learned, and the trigger that asks for learning after
 * writes that made new issues.
 *
 * An event grouped by default whose location and template fall under a learned template of its
 * project takes the template's fingerprint, which is an alias of the template's issue: it lands there
 * and makes no new issue. The cache holds at most MAX_TEMPLATES_PER_PROJECT templates per project and
 * is read again after TTL_MS, and at once when this process learned (templatesChanged); so another
 * instance's learning reaches this one within TTL_MS, and until then an event merely makes an issue
 * that the next learning pass merges. With nothing learned, nothing changes.
 */
import type PgBoss from "pg-boss";
import type { Sql } from "../../db/client.js";
import type { EventRow, TouchedGroup } from "../../db/events.js";
import { MAX_TEMPLATES_PER_PROJECT, templatesForIngest } from "../../db/grouping-templates.js";
import { Coalescer } from "../alerts/enqueue.server";
import { pickTemplate, tokens } from "./miner.server";
import type { GroupingParts } from "./fingerprint.server";
import { log } from "../../log/logger.js";

const TTL_MS = 5_000;
/** Projects whose templates are kept at once; the least recently loaded one is dropped first. */
const MAX_PROJECTS = 10_000;
/** Learning waits this long after a write that made issues, so a burst of new issues is one pass. */
const LEARN_DEBOUNCE_SECONDS = 3;
export const GROUPING_LEARN_QUEUE = "grouping-learn";

type Candidate = { template: string; tokens: string[]; positions: number; fingerprint: string };
type Entry = { until: number; buckets: Map<string, Candidate[]>; count: number };

const caches = new Set<LearnedTemplates>();

/** This process learned for the project: every cache of the process reads it again before its next use. */
export function templatesChanged(projectId: string): void {
  for (const c of caches) c.invalidate(projectId);
}

const bucketKey = (location: string, tokenCount: number) => `${location}:${tokenCount}`;

export class LearnedTemplates extends Coalescer {
  private entries = new Map<string, Entry>();
  private loading = new Map<string, Promise<Entry>>();
  private pending = new Set<string>();

  constructor(
    private readonly sql: Sql,
    private readonly boss: PgBoss | null = null,
    private readonly ttlMs = TTL_MS,
  ) {
    super(500);
    caches.add(this);
  }

  invalidate(projectId: string): void {
    this.entries.delete(projectId);
  }

  /** Stops receiving this process's invalidations (a cache made for a test or a bench). */
  close(): void {
    caches.delete(this);
  }

  private async load(projectId: string): Promise<Entry> {
    return this.hold(projectId, await templatesForIngest(this.sql, projectId));
  }

  /** Holds `rows` as the project's templates until the TTL (what a read from the database does; the bench uses it directly). */
  hold(projectId: string, rows: { fingerprint: string; location: string; template: string; token_count: number; variables: number }[]): Entry {
    const buckets = new Map<string, Candidate[]>();
    const kept = rows.slice(0, MAX_TEMPLATES_PER_PROJECT);
    for (const r of kept) {
      const k = bucketKey(r.location, r.token_count);
      let list = buckets.get(k);
      if (!list) buckets.set(k, (list = []));
      list.push({ template: r.template, tokens: tokens(r.template), positions: r.variables, fingerprint: r.fingerprint });
    }
    const entry = { until: Date.now() + this.ttlMs, buckets, count: kept.length };
    if (this.entries.size >= MAX_PROJECTS && !this.entries.has(projectId)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(projectId, entry);
    return entry;
  }

  /** The project's templates, read again when older than the TTL; concurrent reads share one query. */
  private async current(projectId: string): Promise<Entry> {
    const e = this.entries.get(projectId);
    if (e && e.until > Date.now()) return e;
    let p = this.loading.get(projectId);
    if (!p) {
      p = this.load(projectId).finally(() => this.loading.delete(projectId));
      this.loading.set(projectId, p);
    }
    return p;
  }

  /**
   * Gives the rows grouped by default (`grouping` set) whose location and template a learned template
   * covers that template's fingerprint (and no earlier versions' fingerprints: the alias is the way in). When
   * the templates cannot be read, the rows keep their default grouping: learning merges them later.
   */
  async apply(projectId: string, rows: EventRow[]): Promise<void> {
    if (!rows.some((r) => r.grouping)) return;
    let entry: Entry;
    try {
      entry = await this.current(projectId);
    } catch (err) {
      log.error(`[grouping] learned templates not read: ${(err as Error).message}`);
      return;
    }
    if (entry.count === 0) return;
    for (const r of rows) {
      const fp = r.grouping ? this.matchParts(entry, r.grouping) : null;
      if (fp === null) continue;
      r.fingerprint = fp;
      r.olderFingerprints = [];
      r.grouping = null;
    }
  }

  /**
   * With the parts' bucket (location and word count) made once per text: most events have no learned
   * template at their location and cost one map look-up; the words are split once per text too.
   */
  private matchParts(entry: Entry, parts: { location: string; template: string; bucket?: string; words?: string[] }): string | null {
    if (parts.bucket === undefined) return this.match(entry, parts.location, parts.template);
    const candidates = entry.buckets.get(parts.bucket);
    return candidates ? (pickTemplate(candidates, (parts.words ??= tokens(parts.template)))?.fingerprint ?? null) : null;
  }

  private match(entry: Entry, location: string, template: string): string | null {
    const t = tokens(template);
    return pickTemplate(entry.buckets.get(bucketKey(location, t.length)), t)?.fingerprint ?? null;
  }

  /** What `apply` does for one event, on what is held now (nothing read): the template's fingerprint, or null. */
  fingerprintIn(projectId: string, parts: GroupingParts): string | null {
    const e = this.entries.get(projectId);
    return e && e.count > 0 ? this.matchParts(e, parts) : null;
  }

  /** The fingerprint a learned template gives an event of the project (reads the project's templates if needed). */
  async fingerprintFor(projectId: string, location: string, template: string): Promise<string | null> {
    return this.match(await this.current(projectId), location, template);
  }

  /** Roughly what the cache holds for a project, in bytes (strings at 2 bytes a character, arrays and objects at V8's sizes). */
  bytesFor(projectId: string): number {
    const e = this.entries.get(projectId);
    if (!e) return 0;
    const str = (s: string) => 16 + 2 * s.length;
    let bytes = 64;
    for (const [k, list] of e.buckets) {
      bytes += str(k) + 32 + 16 + 8 * list.length;
      for (const c of list) bytes += 48 + str(c.template) + str(c.fingerprint) + 16 + c.tokens.reduce((n, t) => n + 8 + str(t), 0);
    }
    return bytes;
  }

  /** After a committed write: projects where it made issues are learned again soon (debounced, one job per project). */
  groupsCreated(groups: TouchedGroup[]): void {
    if (!this.boss) return;
    for (const g of groups) if (g.created) this.pending.add(g.project_id);
    if (this.pending.size > 0) this.schedule();
  }

  protected async flush(): Promise<void> {
    const projects = [...this.pending];
    this.pending.clear();
    for (const p of projects) {
      try {
        await this.boss!.sendDebounced(GROUPING_LEARN_QUEUE, { project_id: p }, {}, LEARN_DEBOUNCE_SECONDS, p);
      } catch (err) {
        log.error(`[grouping] learning not triggered: ${(err as Error).message}`);
      }
    }
  }
}
