/**
 * The accept step: every ingest protocol ends here. A protocol parser (native JSON in
 * native.server.ts, Sentry in app/sentry/) reads its own wire format and hands over IncomingEvents:
 * values within the limits below, ids and times normalized. Accept does what is the same for every
 * protocol, once: it makes the rows (text cut and made storable, grouping, the clock rules), lets the
 * protocol admit them (its own limits), writes them through the writer under the write deadline,
 * exactly once (an Idempotency-Key's recorded parts, or each event's dedup id in SQL), and then
 * teaches the known-fingerprint cache. Protocols never write themselves.
 */
import { frameEntries } from "./frames.server.js";
import type { Sql } from "../../db/client.js";
import type { EventRow } from "../../db/events.js";
import { DeadlineError } from "../../db/deadline.js";
import { countIngest } from "../../db/metrics.js";
import type { Config } from "~/env.server";
import { withinWriteDeadline } from "~/db-deadline.server";
import { isStorable, storable } from "~/text.server";
import { culpritFor, groupEvent, type KnownFingerprints } from "./fingerprint.server";
import type { LearnedTemplates } from "./learned-templates.server";
import type { EventWriter } from "./writer.server";
import { writeOnce, type KeyedRequest } from "./idempotency.server";
import { NO_RULES, recordRuleHits, type GroupingRuleCache, type ProjectRules } from "./rules.server";

export const LEVELS = ["error", "warn", "info"] as const;
export type Level = (typeof LEVELS)[number];

/** Breadcrumb bounds (docs/api.md, "breadcrumbs"): the SDK keeps well under them. */
export const BREADCRUMBS = { count: 100, bytes: 32 * 1024, message: 2048, category: 128, dataBytes: 4 * 1024 } as const;
export const BREADCRUMB_LEVELS = ["debug", "info", "warning", "error", "fatal"] as const;
export type BreadcrumbLevel = (typeof BREADCRUMB_LEVELS)[number];

/** Roblox servers keep UTC time: anything before the Unix epoch is a broken clock or a hostile value. */
export const MIN_TIMESTAMP_MS = Date.UTC(1970, 0, 1);

export type IncomingBreadcrumb = {
  /** ISO 8601 */
  timestamp?: string;
  level: BreadcrumbLevel;
  category?: string;
  message?: string;
  data?: Record<string, unknown>;
};

export type IncomingEvent = {
  message: string;
  level: Level;
  stackTrace: string | null;
  /** a Roblox user id: decimal digits without leading zeros, at most 2^63 - 1 */
  userId: string | null;
  playerName: string | null;
  /** a lowercase UUID with dashes */
  traceId: string | null;
  jobId: string | null;
  placeId: string | null;
  gameVersion: string | null;
  /** null: production */
  environment: string | null;
  context: Record<string, unknown> | null;
  tags: string[] | null;
  /** ms since the epoch, not before MIN_TIMESTAMP_MS; null: the receive time */
  timestamp: number | null;
  /** occurrences this event stands for, 1..1000 */
  count: number;
  /** the client's grouping parts; null: grouped by message and stack */
  fingerprint: string | string[] | null;
  breadcrumbs: IncomingBreadcrumb[] | null;
  /** the id stored on the raw event and answered to the client */
  eventId: string | null;
  /** an id the client keeps for every retry of this event (Sentry's event_id): the event is written at most once under it */
  dedupId: string | null;
  /** where the event happened when its frames are not Roblox script paths (Node, Python…); null: found from the stack */
  culprit: string | null;
};

/** What accepting events uses (the process's Services hold all of it). */
export type AcceptDeps = {
  sql: Sql;
  writer: EventWriter;
  /** fingerprints this process knows to have a group: a known one skips the earlier versions' fingerprints */
  known: KnownFingerprints;
  /** the projects' learned templates (default grouping's last step); absent: none apply */
  learned?: LearnedTemplates;
  config: Pick<Config, "retentionDays" | "dbTimeoutMs">;
  /** the projects' grouping rules (absent: none) */
  groupingRules?: GroupingRuleCache;
};

const MESSAGE_BYTES = 8 * 1024;
const STACK_BYTES = 64 * 1024;
const FUTURE_TOLERANCE_MS = 5 * 60 * 1000;
const DAY_MS = 86_400_000;

/** Cuts a string to at most `max` UTF-8 bytes without splitting a character. */
export function truncateUtf8(s: string, max: number): string {
  if (s.length * 3 <= max || Buffer.byteLength(s) <= max) return s;
  const buf = Buffer.from(s).subarray(0, max);
  return buf.toString("utf8").replace(/\uFFFD$/, "");
}

const storableOpt = (s: string | null) => (s === null ? null : storable(s));

/** Whether every string and key of a JSON value can be stored as it is (nothing to replace). */
function allStorable(v: unknown): boolean {
  if (typeof v === "string") return isStorable(v);
  if (Array.isArray(v)) return v.every(allStorable);
  if (v !== null && typeof v === "object") {
    for (const k of Object.keys(v)) if (!isStorable(k) || !allStorable((v as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** A JSON value with its unstorable strings and keys replaced: the value itself when it has none (the usual case), else a copy. */
function storableJson(v: unknown): unknown {
  return allStorable(v) ? v : storableCopy(v);
}

function storableCopy(v: unknown): unknown {
  if (typeof v === "string") return storable(v);
  if (Array.isArray(v)) return v.map(storableCopy);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storable(k), storableCopy(x)]));
  }
  return v;
}

/** Breadcrumbs as stored: absent fields left out, every string storable; none is null. */
function storedBreadcrumbs(crumbs: IncomingEvent["breadcrumbs"]): unknown[] | null {
  if (!crumbs?.length) return null;
  return crumbs.map((c) => {
    const out: Record<string, unknown> = {};
    if (c.timestamp !== undefined) out.timestamp = c.timestamp;
    out.level = c.level;
    if (c.category !== undefined) out.category = storable(c.category);
    if (c.message !== undefined) out.message = storable(c.message);
    if (c.data !== undefined) out.data = storableJson(c.data);
    return out;
  });
}

/** An event an `ignore` grouping rule dropped: never stored nor counted on an issue. */
export type IgnoredEvent = { ignoredBy: string };

/**
 * One event's row. A timestamp more than 5 minutes ahead is the receive time. One from before the
 * retention window (`retentionDays` back from the receive time) is kept on the event, but its issue
 * counts it as the window's start, so a bogus or ancient clock cannot make an issue years old.
 * The project's grouping rules come first (the first match wins): `ignore` drops the event, `group`
 * gives it the rule's fingerprint instead of the client's and the default one.
 */
export function toEventRow(
  projectId: string,
  e: IncomingEvent,
  receivedAt: number,
  retentionDays: number,
  known: KnownFingerprints,
  rules: ProjectRules = NO_RULES,
): EventRow | IgnoredEvent {
  const message = truncateUtf8(storable(e.message), MESSAGE_BYTES);
  const stackTrace = e.stackTrace === null ? null : truncateUtf8(storable(e.stackTrace), STACK_BYTES);
  const ts = e.timestamp ?? receivedAt;
  const playerName = storableOpt(e.playerName);
  const rule = rules.match({ message, level: e.level, tags: e.tags, stackTrace, playerName });
  if (rule?.action === "ignore") return { ignoredBy: rule.id };
  const grouping = rule
    ? { fingerprint: rule.fingerprint, older: [], culprit: culpritFor(message, stackTrace, playerName), parts: null }
    : groupEvent(message, stackTrace, e.fingerprint, playerName, (fp) => !known.has(projectId, fp), e.userId);
  return {
    projectId,
    fingerprint: grouping.fingerprint,
    olderFingerprints: grouping.older,
    message,
    level: e.level,
    stackTrace,
    userId: e.userId,
    playerName,
    traceId: e.traceId,
    jobId: storableOpt(e.jobId),
    placeId: e.placeId,
    gameVersion: storableOpt(e.gameVersion),
    environment: storable(e.environment?.trim() || "production"),
    context: e.context === null ? null : storableJson(e.context),
    tags: e.tags?.map(storable) ?? null,
    breadcrumbs: storedBreadcrumbs(e.breadcrumbs),
    timestamp: ts > receivedAt + FUTURE_TOLERANCE_MS ? receivedAt : ts,
    notBefore: receivedAt - retentionDays * DAY_MS,
    count: e.count,
    // Roblox script paths name the culprit; other frames (the protocol's hint) only when they do not
    culprit: grouping.culprit ?? e.culprit,
    frames: frameEntries(stackTrace, playerName),
    // default grouping: what a learned template may cover (applied in accept, LearnedTemplates.apply)
    grouping: grouping.parts,
    eventId: e.dedupId,
    storedEventId: e.eventId,
  };
}

/** `ignored`: events an ignore rule dropped (in `count`, not in `occurrences`); present only when some were. */
export type Accepted = { count: number; occurrences: number; throttled: number; ignored?: number };

export type AcceptOptions = {
  /** a native request's Idempotency-Key: parts an earlier attempt committed are not written again */
  idempotency?: KeyedRequest | null;
  /** the protocol's own limits on the rows about to be written (it throws to refuse them; nothing is written) */
  admit?: (rows: EventRow[]) => Promise<void>;
};

/**
 * Writes a request's events (all of them, or none when `admit` refuses) and answers what was
 * counted. The wait is bounded by the write deadline (see withinWriteDeadline): a stalled database
 * answers 503, and what that request wrote is rolled back by the writer's own bound.
 */
export async function accept(deps: AcceptDeps, projectId: string, events: IncomingEvent[], opts: AcceptOptions = {}): Promise<Accepted> {
  const receivedAt = Date.now();
  const rules = deps.groupingRules ? await deps.groupingRules.forProject(deps.sql, projectId) : NO_RULES;
  const made = events.map((e) => toEventRow(projectId, e, receivedAt, deps.config.retentionDays, deps.known, rules));
  const rows = made.filter((r): r is EventRow => !("ignoredBy" in r));
  // default grouping's last step (a rule's or the client's fingerprint has no parts to cover)
  await deps.learned?.apply(projectId, rows);
  const write = async () => {
    if (rows.length === 0) return 0;
    await opts.admit?.(rows);
    // admitted only once the database answered again, past the write's deadline: the request is
    // answered 503 (or about to be), so nothing of it may be written now
    if (Date.now() >= receivedAt + deps.config.dbTimeoutMs) throw new DeadlineError();
    return opts.idempotency ? writeOnce(deps, projectId, opts.idempotency, rows) : (await deps.writer.submit(rows)).throttled;
  };
  const throttled = await withinWriteDeadline(deps, write());
  for (const r of rows) deps.known.add(projectId, r.fingerprint);
  const ignored = rules.empty ? 0 : await recordRuleHits(deps.sql, projectId, rules, made, rows, receivedAt);
  countIngest({ count: made.length, throttled, ignored });
  return { count: made.length, occurrences: rows.reduce((n, r) => n + r.count, 0), throttled, ...(ignored > 0 ? { ignored } : {}) };
}
