/**
 * The native protocol: `POST /api/ingest` with one event or `{errors: [...]}`, as the Luau SDK sends
 * it. The body is validated whole (zod) and read into IncomingEvents; nothing is written when any
 * event is invalid. Writing is the accept step's (accept.server.ts).
 */
import { z } from "zod";
import { invalidPayload, issuePath, type ErrorDetail } from "~/http.server";
import type { ClientReport } from "../../db/client-reports.js";
import { parseClientReport, recordClientReport } from "./client-report.server";
import { clipNesting, jsonDepth, MAX_JSON_DEPTH, tooDeep } from "~/text.server";
import { bodyHash } from "./idempotency.server";
import { nullsAbsent, safeParse, timestamp } from "./fields.server";
import {
  accept,
  BREADCRUMB_LEVELS,
  BREADCRUMBS,
  LEVELS,
  type AcceptDeps,
  type Accepted,
  type BreadcrumbLevel,
  type IncomingEvent,
  type Level,
} from "./accept.server";

export const MAX_BATCH = 100;

const MAX_INT64 = 9223372036854775807n;
const UUID_RE = /^(\{)?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\})?$/i;

const opt = <T extends z.ZodType>(schema: T) => schema.optional();

const shortString = (max: number) => z.string().max(max, `must be at most ${max} characters`);

const nonNegativeId = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = typeof v === "number" ? (Number.isSafeInteger(v) && v >= 0 ? String(v) : "") : v.trim();
  if (!/^\d{1,19}$/.test(s) || BigInt(s) > MAX_INT64) {
    ctx.addIssue({ code: "custom", message: "must be a non-negative integer or a string of digits" });
    return z.NEVER;
  }
  return String(BigInt(s));
});

const level = z.string().transform((v, ctx): Level => {
  const l = v.trim().toLowerCase();
  if (l === "warning") return "warn";
  if ((LEVELS as readonly string[]).includes(l)) return l as Level;
  ctx.addIssue({ code: "custom", message: "must be one of error, warn, info" });
  return z.NEVER;
});

const uuid = z.string().transform((v, ctx) => {
  const m = UUID_RE.exec(v.trim());
  if (!m || Boolean(m[1]) !== Boolean(m[3])) {
    ctx.addIssue({ code: "custom", message: "must be a UUID, with or without braces" });
    return z.NEVER;
  }
  return m[2].toLowerCase();
});

const count = z.number().transform((v) => Math.min(1000, Math.max(1, Math.trunc(v))));

/** A JSON object nested at most MAX_JSON_DEPTH levels and at most `maxBytes` when serialized. */
const boundedObject = (maxBytes: number) =>
  z.record(z.string(), z.unknown()).superRefine((v, ctx) => {
    // checked first: serializing (here, and again for PostgreSQL) recurses once per level
    if (jsonDepth(v, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      ctx.addIssue({ code: "custom", message: `must not nest objects or arrays more than ${MAX_JSON_DEPTH} levels deep` });
    } else if (Buffer.byteLength(JSON.stringify(v)) > maxBytes) {
      ctx.addIssue({ code: "custom", message: `must be at most ${maxBytes / 1024} KiB when serialized` });
    }
  });

const context = boundedObject(16 * 1024);

const breadcrumbLevel = z.string().transform((v, ctx): BreadcrumbLevel => {
  const l = v.trim().toLowerCase();
  if (l === "warn") return "warning";
  if ((BREADCRUMB_LEVELS as readonly string[]).includes(l)) return l as BreadcrumbLevel;
  ctx.addIssue({ code: "custom", message: `must be one of ${BREADCRUMB_LEVELS.join(", ")}` });
  return z.NEVER;
});

const breadcrumb = z
  .preprocess(
    nullsAbsent,
    z.object({
      timestamp: opt(timestamp),
      level: opt(breadcrumbLevel),
      category: opt(shortString(BREADCRUMBS.category)),
      message: opt(shortString(BREADCRUMBS.message)),
      data: opt(boundedObject(BREADCRUMBS.dataBytes)),
    }),
  )
  .refine((c) => c.message !== undefined || c.category !== undefined || c.data !== undefined, "must have a message, a category or data");

const breadcrumbs = z
  .array(z.unknown())
  .max(BREADCRUMBS.count, `must have at most ${BREADCRUMBS.count} breadcrumbs`)
  // the count is checked before any breadcrumb is parsed
  .pipe(z.array(breadcrumb))
  .superRefine((v, ctx) => {
    if (Buffer.byteLength(JSON.stringify(v)) > BREADCRUMBS.bytes) {
      ctx.addIssue({ code: "custom", message: `must be at most ${BREADCRUMBS.bytes / 1024} KiB when serialized` });
    }
  });

const fingerprint = z.union([
  shortString(500).min(1, "must not be empty"),
  z.array(shortString(500)).min(1, "must not be empty").max(20, "must have at most 20 parts"),
]);

export const EventSchema = z.preprocess(
  nullsAbsent,
  z.object({
    message: z.string({ error: "is required and must be a string" }).refine((m) => m.trim() !== "", "must not be empty"),
    level: opt(level),
    stack_trace: opt(z.string()),
    user_id: opt(nonNegativeId),
    player_name: opt(shortString(256)),
    trace_id: opt(uuid),
    job_id: opt(shortString(256)),
    place_id: opt(nonNegativeId),
    game_version: opt(z.union([shortString(256), z.number().transform(String)])),
    environment: opt(shortString(256).refine((e) => e.trim() !== "", "must not be empty")),
    context: opt(context),
    tags: opt(z.array(shortString(200)).max(50, "must have at most 50 tags")),
    timestamp: opt(timestamp),
    count: opt(count),
    fingerprint: opt(fingerprint),
    event_id: opt(uuid),
    breadcrumbs: opt(breadcrumbs),
  }),
);

type ValidEvent = z.output<typeof EventSchema>;

/** A validated native event as the accept step takes it. */
function incoming(e: ValidEvent): IncomingEvent {
  return {
    message: e.message,
    level: e.level ?? "error",
    stackTrace: e.stack_trace ?? null,
    userId: e.user_id ?? null,
    playerName: e.player_name ?? null,
    traceId: e.trace_id ?? null,
    jobId: e.job_id ?? null,
    placeId: e.place_id ?? null,
    gameVersion: e.game_version ?? null,
    environment: e.environment ?? null,
    context: e.context ?? null,
    tags: e.tags ?? null,
    timestamp: e.timestamp ?? null,
    count: e.count ?? 1,
    fingerprint: e.fingerprint ?? null,
    breadcrumbs: e.breadcrumbs?.length
      ? e.breadcrumbs.map(({ timestamp, level, ...rest }) => ({
          ...(timestamp === undefined ? {} : { timestamp: new Date(timestamp).toISOString() }),
          level: level ?? "info",
          ...rest,
        }))
      : null,
    eventId: e.event_id ?? null,
    // a native batch is made safe to retry by its Idempotency-Key, not per event
    dedupId: null,
    culprit: null,
  };
}

/**
 * At most this many details in a 400 for the events (the client report's come on top). Every
 * invalid event is named by at least one of them, so a client can drop exactly those and resend the
 * rest (SPEC section 2); the rest of the room goes to further problems, in event order.
 */
export const MAX_EVENT_DETAILS = 100;

/** One detail per invalid event first, then the others while there is room, in event order. */
export function eventDetails(perEvent: ErrorDetail[][]): ErrorDetail[] {
  const invalid = perEvent.filter((d) => d.length > 0);
  let room = MAX_EVENT_DETAILS - invalid.length;
  return invalid.flatMap(([first, ...more]) => {
    const extra = more.slice(0, Math.max(0, room));
    room -= extra.length;
    return [first, ...extra];
  });
}

export type NativeBody = { events: IncomingEvent[]; report: ClientReport | null };

/**
 * The body is one event, or `{errors: [...]}` with 1..100 events and an optional `client_report`.
 * Any invalid event, or an invalid report, rejects the request.
 */
export function parseNativeRequest(input: unknown): NativeBody {
  // every event is validated clipped to MAX_BODY_DEPTH: a field nested deeper fails its own rule
  const { value: body, cut } = clipNesting(input);
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send one event object, or an object with an `errors` array of events.");
  }
  const batch = "errors" in body;
  const raw: unknown[] = batch ? ((body as { errors: unknown }).errors as unknown[]) : [body];
  if (batch) {
    if (!Array.isArray(raw)) throw invalidPayload("`errors` must be an array of events.", [{ path: "errors", message: "must be an array" }]);
    if (raw.length === 0) throw invalidPayload("The batch is empty; send 1 to 100 events.", [{ path: "errors", message: "must not be empty" }]);
    if (raw.length > MAX_BATCH) {
      throw invalidPayload(`The batch holds ${raw.length} events; send at most ${MAX_BATCH} per request.`, [
        { path: "errors", message: `must have at most ${MAX_BATCH} events` },
      ]);
    }
  }
  const out: IncomingEvent[] = [];
  const perEvent = raw.map((item, i): ErrorDetail[] => {
    const prefix: PropertyKey[] = batch ? ["errors", i] : [];
    if (typeof item !== "object" || item === null || Array.isArray(item)) return [{ path: issuePath(prefix), message: "must be an event object" }];
    const r = safeParse(EventSchema, item);
    if (!r.success) return r.error.issues.map((issue) => ({ path: issuePath([...prefix, ...issue.path]), message: issue.message }));
    out.push(incoming(r.data));
    return [];
  });
  const details = eventDetails(perEvent);
  const reportInput = batch ? (body as { client_report?: unknown }).client_report : undefined;
  const parsedReport = reportInput === undefined || reportInput === null ? null : parseClientReport(reportInput, ["client_report"]);
  if (parsedReport && "details" in parsedReport) details.push(...parsedReport.details);
  if (details.length) {
    const first = details[0];
    const bad = perEvent.filter((d) => d.length > 0).length;
    const what = bad > 1 ? `${bad} invalid events, the first: ` : first.path.startsWith("client_report") ? "Invalid client report: " : "Invalid event: ";
    throw invalidPayload(`${what}${first.path} ${first.message}.`, details);
  }
  if (cut) throw tooDeep(cut);
  return { events: out, report: parsedReport && "report" in parsedReport ? parsedReport.report : null };
}

/** The events of a native body (see parseNativeRequest). */
export const parseNativeBody = (input: unknown): IncomingEvent[] => parseNativeRequest(input).events;

export type IngestResult = { success: true } & Accepted;

/**
 * A native ingest request's body, accepted whole or not at all. With an Idempotency-Key, parts an
 * earlier attempt committed are not written again (see writeOnce).
 */
export async function ingestNative(deps: AcceptDeps, projectId: string, body: unknown, key: string | null): Promise<IngestResult> {
  const { events, report } = parseNativeRequest(body);
  const hash = key === null ? null : bodyHash(body);
  const accepted = await accept(deps, projectId, events, { idempotency: key === null ? null : { key, bodyHash: hash! } });
  // after the events committed: a request whose events were refused or not written counted no report,
  // and a retry under the same key, after an answer lost here, adds it once (db/client-reports.ts)
  if (report) await recordClientReport(deps, projectId, report, key === null ? null : { via: "ingest", key, bodyHash: hash! });
  return { success: true, ...accepted };
}
