import type { Sql } from "../../db/client.js";
import type { EventRow } from "../../db/events.js";
import { addToWindow, claimNewIssues, ensureGroup, existingFingerprints, type WindowUse } from "../../db/ingest-limits.js";
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
type Claimed = Awaited<ReturnType<typeof claimNewIssues>>;

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
    const { used, retryAfter } = await this.addShared(projectId, `key:${key.id}`, events);
    if (used <= key.rateLimit) return;
    if (this.refused.size > 10_000) this.refused.clear();
    this.refused.set(`${key.id}/${key.rateLimit}`, Date.now() + retryAfter * 1000);
    throw keyRateLimited(retryAfter, key.rateLimit);
  }

  /** per project: fingerprints refused a new issue in the current window, until it ends (ms) */
  private refusedIssues = new Map<string, { until: number; fingerprints: Set<string> }>();

  /**
   * A key's minute gets at most one upsert in flight in this process: the requests that arrive
   * meanwhile share the next one, and each gets the count as of its own share (in arrival order).
   * Every request of a key hitting its one row in its own statement made them queue on the row's
   * lock and halved the single-event Sentry rate (bench (s): 798-825 -> 388 req/s).
   */
  private readonly windows = new Coalesced<{ projectId: string; n: number }, WindowUse>(async (subject, shares) => {
    const total = shares.reduce((sum, x) => sum + x.n, 0);
    const { used, retryAfter } = await addToWindow(this.sql, shares[0].projectId, subject, total);
    let before = used - total;
    return shares.map((x) => ({ used: (before += x.n), retryAfter }));
  });

  private addShared(projectId: string, subject: string, n: number): Promise<WindowUse> {
    return this.windows.call(subject, { projectId, n });
  }

  /**
   * A project gets at most one new-issue claim in flight in this process; the requests that arrive
   * meanwhile join the next one. Each claim holds the project's lock for its transaction, so one per
   * request made a fresh project's first events queue on it (bench (s), 1,000 new issues in a fresh
   * project: 798-866 req/s before the bound, 351-388 with a claim per request).
   */
  private readonly claims = new Coalesced<string[], Claimed>(async (projectId, lists) => {
    const claimed = await claimNewIssues(this.sql, projectId, [...new Set(lists.flat())], this.newIssuesPerMinute);
    return lists.map(() => claimed);
  });

  private claimShared(projectId: string, fingerprints: string[]): Promise<Claimed> {
    return this.claims.call(projectId, fingerprints);
  }

  /**
   * Bounds the new issues a project's Sentry events create per minute. A fingerprint with no group
   * yet needs a claim in the project's minute (one per fingerprint, shared by every request of that
   * error); past the bound its rows are moved into the project's catch-all issue, where they are
   * counted like any event (occurrences, users, stats; raw rows within the throttle). Returns how
   * many rows were moved.
   */
  async boundNewIssues(projectId: string, rows: EventRow[]): Promise<number> {
    const over = new Set<string>();
    const unknown = new Map<string, string[]>();
    const refused = this.refusedIssues.get(projectId);
    if (refused && refused.until <= Date.now()) this.refusedIssues.delete(projectId);
    for (const r of rows) {
      if (this.known.has(projectId, r.fingerprint)) continue;
      // refused in this window already: no group can have been made for it, nor a claim taken since
      if (refused && refused.until > Date.now() && refused.fingerprints.has(r.fingerprint)) over.add(r.fingerprint);
      else unknown.set(r.fingerprint, r.olderFingerprints);
    }
    if (unknown.size > 0) {
      const existing = await existingFingerprints(this.sql, projectId, [...unknown].map(([fp, older]) => ({ fp, older })));
      for (const fp of existing) this.known.add(projectId, fp);
      const fresh = [...unknown.keys()].filter((fp) => !existing.has(fp));
      if (fresh.length > 0) {
        // a claimed error's later requests find their claim; a refused one is remembered until the window ends
        const { granted, windowEnds } = await this.claimShared(projectId, fresh);
        const notGranted = fresh.filter((fp) => !granted.has(fp));
        if (notGranted.length > 0) {
          let memo = this.refusedIssues.get(projectId);
          if (!memo || memo.until !== windowEnds) this.refusedIssues.set(projectId, (memo = { until: windowEnds, fingerprints: new Set() }));
          if (memo.fingerprints.size < 100_000) for (const fp of notGranted) memo.fingerprints.add(fp);
        }
        for (const fp of notGranted) over.add(fp);
      }
    }
    if (over.size === 0) return 0;
    const limit = this.newIssuesPerMinute;

    const moved = rows.filter((r) => over.has(r.fingerprint));
    const first = moved[0];
    // made once (it carries the bound's message, not the first overflowing event's)
    if (!this.known.has(projectId, OVERFLOW_FINGERPRINT)) {
      await ensureGroup(this.sql, {
        projectId,
        fingerprint: OVERFLOW_FINGERPRINT,
        message: overflowMessage(limit),
        level: first.level,
        environment: first.environment,
        timestamp: first.timestamp,
      });
      this.known.add(projectId, OVERFLOW_FINGERPRINT);
    }
    for (const r of moved) {
      r.fingerprint = OVERFLOW_FINGERPRINT;
      r.olderFingerprints = [];
      // the catch-all has no one script to blame
      r.culprit = null;
    }
    return moved.length;
  }
}

/**
 * At most one `run` per key at a time: calls that arrive while one runs wait and go to the next run
 * together; `run` answers each input in order. A failed run fails the calls it held.
 */
class Coalesced<In, Out> {
  private readonly waiting = new Map<string, { input: In; done: (o: Out) => void; fail: (e: unknown) => void }[]>();

  constructor(private readonly run: (key: string, inputs: In[]) => Promise<Out[]>) {}

  call(key: string, input: In): Promise<Out> {
    return new Promise((done, fail) => {
      const queue = this.waiting.get(key);
      if (queue) return void queue.push({ input, done, fail });
      const q = [{ input, done, fail }];
      this.waiting.set(key, q);
      void (async () => {
        while (q.length > 0) {
          const batch = q.splice(0);
          try {
            const out = await this.run(key, batch.map((b) => b.input));
            batch.forEach((b, i) => b.done(out[i]));
          } catch (err) {
            for (const b of batch) b.fail(err);
          }
        }
        this.waiting.delete(key);
      })();
    });
  }
}
