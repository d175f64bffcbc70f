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

/** Keys allowed fewer events a minute than this are counted in PostgreSQL request by request. */
export const LEASE_MIN_LIMIT = 1000;

/**
 * The events a process takes from a key's minute at once, beyond what the request asks: 1% of the
 * limit (none below LEASE_MIN_LIMIT). A block costs one upsert for its many requests; what a process
 * holds unused when the minute ends (or the limit changes) was counted and goes unused, so with
 * several instances a key may be refused up to 1% of its limit per other instance early, never past it.
 */
export const leaseBlock = (limit: number) => (limit >= LEASE_MIN_LIMIT ? Math.floor(limit / 100) : 0);
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

  /**
   * Counts a request's events against its key's minute; past the limit the request is refused (429)
   * and nothing is written. A key of at least LEASE_MIN_LIMIT events a minute takes its minute from
   * PostgreSQL in blocks (see leaseBlock): the events of a block this process already took are
   * counted here without a round trip.
   */
  async countKeyEvents(projectId: string, key: DsnKey | undefined, events: number): Promise<void> {
    if (!key || key.rateLimit === null || events === 0) return;
    this.assertNotRefused(key);
    const memo = `${key.id}/${key.rateLimit}`;
    if (this.fromLease(memo, events)) return;
    const { used, retryAfter } = await this.windows.call(memo, { projectId, subject: `key:${key.id}`, limit: key.rateLimit, n: events });
    if (used <= key.rateLimit) return;
    if (this.refused.size > 10_000) this.refused.clear();
    this.refused.set(memo, Date.now() + retryAfter * 1000);
    throw keyRateLimited(retryAfter, key.rateLimit);
  }

  /**
   * per `<key id>/<limit>`: events this process took from the key's current minute in PostgreSQL
   * and has not counted a request against yet, until the minute ends (ms, by this process's clock,
   * at least a second early)
   */
  private leases = new Map<string, { left: number; until: number }>();

  /** Takes `n` events from the key's block in this process; false when it has not that many left. */
  private fromLease(memo: string, n: number): boolean {
    const lease = this.leases.get(memo);
    if (!lease) return false;
    if (lease.until <= Date.now()) {
      this.leases.delete(memo);
      return false;
    }
    if (lease.left < n) return false;
    lease.left -= n;
    return true;
  }

  /** per project: fingerprints refused a new issue in the current window, until it ends (ms) */
  private refusedIssues = new Map<string, { until: number; fingerprints: Set<string> }>();

  /**
   * A key's minute gets at most one upsert in flight in this process: the requests that arrive
   * meanwhile share the next one, and each gets the count as of its own share (in arrival order).
   * Every request of a key hitting its one row in its own statement made them queue on the row's
   * lock and halved the single-event Sentry rate (bench (s): 798-825 -> 388 req/s).
   *
   * A run first serves what the block taken by the run before it still holds; the others' events,
   * and one more block for the requests to come, are added in one upsert. Of that block, what stays
   * within the limit after the shares is kept as this process's lease.
   */
  private readonly windows = new Coalesced<{ projectId: string; subject: string; limit: number; n: number }, WindowUse>(async (memo, shares) => {
    const rest = shares.filter((x) => !this.fromLease(memo, x.n));
    if (rest.length === 0) return shares.map(() => ({ used: 0, retryAfter: 0 }));
    const { limit } = rest[0];
    const block = leaseBlock(limit);
    const asked = rest.reduce((sum, x) => sum + x.n, 0);
    const { used, retryAfter } = await addToWindow(this.sql, rest[0].projectId, rest[0].subject, asked + block);
    let before = used - asked - block;
    const answers = new Map(rest.map((x) => [x, { used: (before += x.n), retryAfter }]));
    const kept = Math.min(block, limit - before);
    // the lease ends at least a second before the minute does (retryAfter is rounded up, and this
    // clock reads later than the database's did): a block is never used in the next minute
    if (kept > 0 && retryAfter > 2) this.leases.set(memo, { left: kept, until: Date.now() + (retryAfter - 2) * 1000 });
    else this.leases.delete(memo);
    if (this.leases.size > 10_000) this.leases.clear();
    return shares.map((x) => answers.get(x) ?? { used: 0, retryAfter });
  });

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
