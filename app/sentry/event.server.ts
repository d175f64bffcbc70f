/**
 * The Sentry protocol's event: one Sentry event (the JSON of a `/store/` body or an envelope's
 * `event` item) read straight into an IncomingEvent for the accept step. Sentry clients cannot be
 * told to fix a field, so the reading is lenient: values are cut to the limits every incoming event
 * keeps (app/ingest/accept.server.ts) and unusable ones are dropped, and only a body that is not an event at
 * all is refused.
 */

import { BREADCRUMBS, type BreadcrumbLevel, type IncomingBreadcrumb, type IncomingEvent, type Level } from "~/ingest/accept.server";
import { cutText, jsonDepth, MAX_JSON_DEPTH, storable } from "~/text.server";

const CONTEXT_BYTES = 16 * 1024;
const MAX_TAGS = 50;
const TAG_CHARS = 200;
const SHORT_CHARS = 256;
const MAX_FRAMES = 250;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined;
const clip = (s: string | undefined, max: number) => (s === undefined ? undefined : s.length > max ? s.slice(0, max) : s);
const nonEmpty = (s: string | undefined) => (s !== undefined && s.trim() !== "" ? s : undefined);

/** `{values: [...]}` (the current protocol) or a bare array (older clients, the Roblox ports). */
const valuesOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : isObject(v) && Array.isArray(v.values) ? v.values : []);

const CANONICAL_ID = /^[0-9a-f]{32}$/;
const ZERO_ID = /^0+$/;

/** A 32-hex event id from `abc…` or a dashed UUID; anything else is not an id. */
export function normalizeEventId(v: unknown): string | null {
  if (typeof v !== "string") return null;
  // as SDKs send it: 32 lowercase hex digits
  if (CANONICAL_ID.test(v)) return ZERO_ID.test(v) ? null : v;
  const hex = v.trim().replace(/^\{|\}$/g, "").replace(/-/g, "").toLowerCase();
  return CANONICAL_ID.test(hex) && !ZERO_ID.test(hex) ? hex : null;
}

const LEVELS: Record<string, Level> = {
  fatal: "error",
  error: "error",
  critical: "error",
  warning: "warn",
  warn: "warn",
  info: "info",
  debug: "info",
  log: "info",
};

type Frame = { filename?: string; module?: string; function?: string; lineno?: number; in_app?: boolean };

function frameOf(v: unknown): Frame | null {
  if (!isObject(v)) return null;
  const line = typeof v.lineno === "number" ? v.lineno : typeof v.lineno === "string" && /^\d+$/.test(v.lineno.trim()) ? Number(v.lineno) : undefined;
  return {
    filename: nonEmpty(str(v.filename)) ?? nonEmpty(str(v.abs_path)),
    module: nonEmpty(str(v.module)),
    // Luau tracebacks say `function name`; some Roblox ports pass that through as the function
    function: (nonEmpty(str(v.function)) ?? nonEmpty(str(v.raw_function)))?.replace(/^function\s+/, ""),
    lineno: line !== undefined && Number.isSafeInteger(line) ? line : undefined,
    in_app: typeof v.in_app === "boolean" ? v.in_app : undefined,
  };
}

/**
 * One stack line in the native text form (`ServerScriptService.Combat:123 function attack`), so a
 * Roblox script path is grouped and found as culprit exactly as in a native event.
 */
function frameLine(f: Frame): string {
  const where = f.filename ?? f.module ?? "?";
  const at = f.lineno !== undefined ? `${where}:${f.lineno}` : where;
  // Sentry SDKs name anonymous functions `?`
  return f.function && f.function !== "?" ? `${at} function ${f.function}` : at;
}

/** Sentry lists frames outermost first; native stacks (like `debug.traceback`) innermost first. */
function framesOf(stacktrace: unknown): Frame[] {
  if (!isObject(stacktrace) || !Array.isArray(stacktrace.frames)) return [];
  return stacktrace.frames.slice(-MAX_FRAMES).map(frameOf).filter((f): f is Frame => f !== null).reverse();
}

type Exc = { type?: string; value?: string; frames: Frame[] };

function exceptionsOf(event: Json): Exc[] {
  return valuesOf(event.exception)
    .filter(isObject)
    .map((e) => ({ type: nonEmpty(str(e.type)), value: nonEmpty(str(e.value)), frames: framesOf(e.stacktrace) }));
}

const excTitle = (e: Exc) => (e.type && e.value ? `${e.type}: ${e.value}` : (e.value ?? e.type ?? "Error"));

function messageOf(event: Json): string | undefined {
  const fromEntry = (v: unknown) =>
    typeof v === "string" ? nonEmpty(v) : isObject(v) ? (nonEmpty(str(v.formatted)) ?? nonEmpty(str(v.message))) : undefined;
  return fromEntry(event.logentry) ?? fromEntry(event.message);
}

function tagsOf(v: unknown): string[] | undefined {
  const pairs: [string, string][] = [];
  if (Array.isArray(v)) {
    for (const p of v) {
      if (!Array.isArray(p) || p.length !== 2) continue;
      const k = str(p[0]);
      const x = str(p[1]);
      if (k !== undefined && x !== undefined) pairs.push([k, x]);
    }
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) {
      const x = str(v[k]);
      if (x !== undefined) pairs.push([k, x]);
    }
  }
  const tags = pairs.slice(0, MAX_TAGS).map(([k, x]) => clip(`${k}:${x}`, TAG_CHARS)!);
  return tags.length ? tags : undefined;
}

/** RFC 3339 (a missing zone means UTC, as in Sentry) or epoch seconds, as ms since the epoch; unusable values are dropped. */
function timestampOf(v: unknown): number | undefined {
  let ms = NaN;
  if (typeof v === "number") ms = v * 1000;
  else if (typeof v === "string") {
    const s = v.trim();
    if (/^\d+(\.\d+)?$/.test(s)) ms = Number(s) * 1000;
    else if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(s)) {
      ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
    }
  }
  if (!Number.isFinite(ms) || ms < 0 || ms > 253402300799000) return undefined;
  return new Date(ms).getTime();
}

function traceIdOf(contexts: unknown): string | undefined {
  const id = isObject(contexts) && isObject(contexts.trace) ? str(contexts.trace.trace_id) : undefined;
  if (!id || !/^[0-9a-f]{32}$/i.test(id) || /^0+$/.test(id)) return undefined;
  const h = id.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const byteLength = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

const CRUMB_LEVELS: Record<string, BreadcrumbLevel> = {
  fatal: "fatal",
  critical: "fatal",
  error: "error",
  warning: "warning",
  warn: "warning",
  info: "info",
  log: "info",
  debug: "debug",
};

/**
 * `breadcrumbs` (`{values: [...]}` or a bare list) as native breadcrumbs: the newest 100, each
 * with its time, level (unknown: `info`), category (else its `type`), message and `data` (left out
 * when over 4 KiB or nested too deep), cut to the native limits; a breadcrumb with none of message,
 * category and data is left out, and older ones go first until the whole fits in 32 KiB.
 */
function breadcrumbsOf(v: unknown): IncomingBreadcrumb[] | null {
  const crumbs: IncomingBreadcrumb[] = [];
  for (const c of valuesOf(v).filter(isObject).slice(-BREADCRUMBS.count)) {
    const crumb: IncomingBreadcrumb = { level: CRUMB_LEVELS[str(c.level)?.trim().toLowerCase() ?? ""] ?? "info" };
    const timestamp = timestampOf(c.timestamp);
    if (timestamp !== undefined) crumb.timestamp = new Date(timestamp).toISOString();
    const category = nonEmpty(str(c.category)) ?? nonEmpty(str(c.type));
    if (category) crumb.category = cutText(category, BREADCRUMBS.category);
    const message = nonEmpty(str(c.message));
    if (message) crumb.message = cutText(message, BREADCRUMBS.message);
    if (isObject(c.data) && jsonDepth(c.data, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH && byteLength(c.data) <= BREADCRUMBS.dataBytes) crumb.data = c.data;
    if (crumb.category || crumb.message || crumb.data) crumbs.push(crumb);
  }
  // the array's size is its items' sizes, the commas between them and the brackets
  const sizes = crumbs.map(byteLength);
  let total = sizes.reduce((a, b) => a + b + 1, 1);
  let first = 0;
  while (first < crumbs.length && total > BREADCRUMBS.bytes) total -= sizes[first++] + 1;
  return first < crumbs.length ? crumbs.slice(first) : null;
}

/**
 * `platform`, `sdk`, `contexts`, `extra` (and what of `user` is not mapped) within the native 16 KiB
 * context limit: when too large, whole parts go, and `_dropped` names what was left out.
 */
function contextOf(event: Json, userRest: Json | undefined): Json | undefined {
  const ctx: Json = {};
  for (const k of ["platform", "logger", "transaction", "sdk", "contexts", "extra"] as const) {
    if (event[k] !== undefined && event[k] !== null) ctx[k] = event[k];
  }
  if (userRest) ctx.user = userRest;
  if (Object.keys(ctx).length === 0) return undefined;
  const dropped: string[] = [];
  // a part nested deeper than stored context may be is left out (measured without recursion: no
  // serializer sees it, and 5,000 levels would overflow the stack)
  for (const [k, v] of Object.entries(ctx)) {
    if (jsonDepth(v, MAX_JSON_DEPTH) >= MAX_JSON_DEPTH) {
      delete ctx[k];
      dropped.push(k);
    }
  }
  if (Object.keys(ctx).length === 0) return { _dropped: dropped };
  // measured again only when a part went (one serialization for a context that fits)
  const size = () => byteLength(dropped.length ? { ...ctx, _dropped: dropped } : ctx);
  let bytes = size();
  for (const k of ["extra", "contexts", "user", "sdk", "transaction", "logger"]) {
    if (bytes <= CONTEXT_BYTES) break;
    if (k in ctx) {
      delete ctx[k];
      dropped.push(k);
      bytes = size();
    }
  }
  if (dropped.length) ctx._dropped = dropped;
  return bytes <= CONTEXT_BYTES ? ctx : { _dropped: ["everything (too large)"] };
}

export class NotAnEvent extends Error {}

/**
 * One Sentry event as an IncomingEvent. Its id is the client's (`event_id`, else `fallbackEventId`:
 * the envelope's), which also makes it written at most once; an event without one gets a new id,
 * answered but not deduplicated. Throws NotAnEvent for a body that is not a JSON object.
 */
export function mapSentryEvent(raw: unknown, fallbackEventId?: string | null): IncomingEvent {
  if (!isObject(raw)) throw new NotAnEvent("A Sentry event must be a JSON object.");
  const clientId = normalizeEventId(raw.event_id) ?? normalizeEventId(fallbackEventId);

  const excs = exceptionsOf(raw);
  const raised = excs.at(-1);
  let message: string;
  let frames: Frame[];
  const lines: string[] = [];
  if (raised) {
    message = excTitle(raised);
    frames = raised.frames;
    lines.push(...frames.map(frameLine));
    // the causes, most recent first, each under its own heading
    for (const cause of excs.slice(0, -1).reverse()) {
      lines.push(`Caused by: ${excTitle(cause)}`, ...cause.frames.map(frameLine));
    }
  } else {
    message = messageOf(raw) ?? "<unlabeled event>";
    const threads = valuesOf(raw.threads).filter(isObject);
    const thread = threads.find((t) => t.crashed === true) ?? threads.find((t) => t.current === true) ?? threads[0];
    frames = framesOf(raw.stacktrace);
    if (frames.length === 0 && thread) frames = framesOf(thread.stacktrace);
    lines.push(...frames.map(frameLine));
  }

  const user = isObject(raw.user) ? raw.user : undefined;
  const userId = user ? str(user.id)?.trim() : undefined;
  const numericUser = userId !== undefined && /^\d{1,19}$/.test(userId) && BigInt(userId) <= 9223372036854775807n ? userId : undefined;
  const playerName = user ? nonEmpty(str(user.username)) : undefined;
  let userRest: Json | undefined;
  if (user) {
    const { id, username, ...rest } = user;
    if (numericUser === undefined && id !== undefined && id !== null) rest.id = id;
    if (Object.keys(rest).length) userRest = rest;
  }

  const fingerprint = Array.isArray(raw.fingerprint)
    ? raw.fingerprint.map(str).filter((p): p is string => p !== undefined && p !== "").slice(0, 20).map((p) => clip(p, 500)!)
    : undefined;
  const level = LEVELS[str(raw.level)?.trim().toLowerCase() ?? ""] ?? "error";
  const inApp = frames.find((f) => f.in_app === true) ?? frames[0];
  const culprit = inApp?.module ?? inApp?.filename;

  return {
    message,
    level,
    stackTrace: lines.length ? lines.join("\n") : null,
    // without leading zeros, as a native user id
    userId: numericUser === undefined ? null : String(BigInt(numericUser)),
    playerName: clip(playerName, SHORT_CHARS) ?? null,
    traceId: traceIdOf(raw.contexts) ?? null,
    jobId: clip(nonEmpty(str(raw.server_name)), SHORT_CHARS) ?? null,
    placeId: null,
    gameVersion: clip(nonEmpty(str(raw.release)), SHORT_CHARS) ?? null,
    environment: clip(nonEmpty(str(raw.environment)), SHORT_CHARS) ?? null,
    context: contextOf(raw, userRest) ?? null,
    tags: tagsOf(raw.tags) ?? null,
    timestamp: timestampOf(raw.timestamp) ?? null,
    count: 1,
    fingerprint: fingerprint?.length ? fingerprint : null,
    breadcrumbs: breadcrumbsOf(raw.breadcrumbs),
    eventId: clientId ?? crypto.randomUUID().replace(/-/g, ""),
    dedupId: clientId,
    // a NUL or a lone surrogate becomes U+FFFD
    culprit: culprit === undefined ? null : storable(cutText(culprit, SHORT_CHARS)),
  };
}
