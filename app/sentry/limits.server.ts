import type { Sql } from "../../db/client.js";
import type { EventRow } from "../../db/events.js";
import { addToWindow, claimNewIssues, ensureGroup, existingFingerprints } from "../../db/ingest-limits.js";
import { ApiError } from "~/http.server";
import type { KnownFingerprints } from "~/ingest/fingerprint.server";

/**
 * The project's catch-all issue for events of new errors past the new-issue bound. Not a hex hash,
 * so no grouping (custom fingerprints are hashed too) can produce it.
 */
export const OVERFLOW_FINGERPRINT = "overflow:new-issues";

export const overflowMessage = (limit: number) =>
  `Too many new issues: events of errors first seen after ${limit} new issues in one minute are counted here`;

type DsnKey = { id: string; rateLimit: number | null };

const keyRateLimited = (retryAfter: number, limit: number) =>
  new ApiError(429, "rate_limited", `This DSN key may post ${limit} events per minute; retry in ${retryAfter} s.`, undefined, {
    "Retry-After": String(retryAfter),
    // Sentry's header: <retry after>:<categories>:<scope>:<reason code>; SDKs stop sending errors for that long
    "X-Sentry-Rate-Limits": `${retryAfter}:error:key:key_quota`,
  });

/**
 * The limits on what public (DSN) keys may post: events per key per minute, and new issues per
 * project per minute. The counts live in PostgreSQL (`ingest_windows`, `new_issue_claims`), shared
 * by every instance; this process only remembers a key's refusal until its window ends, so a flood
 * past a key's limit is refused without a database round trip.
 */
export class SentryLimits {
  /** `<key id>/<limit>` → when the window that refused it ends (ms); a changed limit is another entry */
  private refused = new Map<string, number>();

  constructor(
    private readonly sql: Sql,
    private readonly known: KnownFingerprints,
    private readonly newIssuesPerMinute: number,
  ) {}

  /** Refuses at once, before the body is read, a key this process already saw over its limit in this minute. */
  assertNotRefused(key: DsnKey | undefined): void {
    if (!key || key.rateLimit === null) return;
    const memo = `${key.id}/${key.rateLimit}`;
    const until = this.refused.get(memo);
    if (until === undefined) return;
    const left = until - Date.now();
    if (left > 0) throw keyRateLimited(Math.ceil(left / 1000), key.rateLimit);
    this.refused.delete(memo);
  }

  /** Counts a request's events against its key's minute; past the limit the request is refused (429) and nothing is written. */
  async countKeyEvents(projectId: string, key: DsnKey | undefined, events: number): Promise<void> {
    if (!key || key.rateLimit === null || events === 0) return;
    this.assertNotRefused(key);
    const { used, retryAfter } = await addToWindow(this.sql, projectId, `key:${key.id}`, events);
    if (used <= key.rateLimit) return;
    if (this.refused.size > 10_000) this.refused.clear();
    this.refused.set(`${key.id}/${key.rateLimit}`, Date.now() + retryAfter * 1000);
    throw keyRateLimited(retryAfter, key.rateLimit);
  }

  /**
   * Bounds the new issues a project's Sentry events create per minute. A fingerprint with no group
   * yet needs a claim in the project's minute (one per fingerprint, shared by every request of that
   * error); past the bound its rows are moved into the project's catch-all issue, where they are
   * counted like any event (occurrences, users, stats; raw rows within the throttle). Returns how
   * many rows were moved.
   */
  async boundNewIssues(projectId: string, rows: EventRow[]): Promise<number> {
    const unknown = new Map<string, string | null>();
    for (const r of rows) if (!this.known.has(projectId, r.fingerprint)) unknown.set(r.fingerprint, r.secondaryFingerprint);
    if (unknown.size === 0) return 0;
    const existing = await existingFingerprints(this.sql, projectId, [...unknown].map(([fp, fp1]) => ({ fp, fp1 })));
    for (const fp of existing) this.known.add(projectId, fp);
    const fresh = [...unknown.keys()].filter((fp) => !existing.has(fp));
    if (fresh.length === 0) return 0;

    // no memory of a full window here: a claimed error's later requests must still find their claim
    const limit = this.newIssuesPerMinute;
    const { granted } = await claimNewIssues(this.sql, projectId, fresh, limit);
    if (granted.size === fresh.length) return 0;

    const over = new Set(fresh.filter((fp) => !granted.has(fp)));
    const moved = rows.filter((r) => over.has(r.fingerprint));
    const first = moved[0];
    await ensureGroup(this.sql, {
      projectId,
      fingerprint: OVERFLOW_FINGERPRINT,
      message: overflowMessage(limit),
      level: first.level,
      environment: first.environment,
      timestamp: first.timestamp,
    });
    this.known.add(projectId, OVERFLOW_FINGERPRINT);
    for (const r of moved) {
      r.fingerprint = OVERFLOW_FINGERPRINT;
      r.secondaryFingerprint = null;
      // the catch-all has no one script to blame
      r.culprit = null;
    }
    return moved.length;
  }
}
