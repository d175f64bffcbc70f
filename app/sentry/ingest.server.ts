import type { Config } from "~/env.server";
import { accept, type AcceptDeps } from "~/ingest/accept.server";
import { parseClientReport, recordClientReport } from "~/ingest/client-report.server";
import type { ClientReport } from "../../db/client-reports.js";
import { withinDatabaseDeadline } from "~/db-deadline.server";
import { ApiError, contentCoding, errorResponse, invalidPayload, json, methodNotAllowed, withBody } from "~/http.server";
import type { BodyBudget } from "~/body-budget.server";
import { keyFromDsn, keyFromRequest, type SentryKeyAuth } from "./auth.server";
import { parseJsonPayload, storeBodyJson } from "./body.server";
import { EventTooLarge, MalformedEnvelope, parseEnvelope } from "./envelope.server";
import { mapSentryEvent, normalizeEventId, NotAnEvent } from "./event.server";
import { mapSentrySessions, writeSentrySessions } from "./sessions.server";
import type { ExternalSession } from "../../db/health.js";
import { countIngestRefusal } from "../../db/metrics.js";
import type { SentryLimits } from "./limits.server";

/** What the Sentry endpoints use (the process's Services hold all of it). */
export type SentryDeps = AcceptDeps & {
  config: AcceptDeps["config"] & Pick<Config, "sentryMaxEnvelopeBytes" | "sentryMaxEventBytes" | "sentryMaxPendingEvents">;
  sentryKeys: SentryKeyAuth;
  sentryLimits: SentryLimits;
  bodies: BodyBudget;
};

export type SentryEndpoint = "envelope" | "store";

/** How long a client should hold back when the backlog is full; Sentry SDKs drop events meanwhile. */
const BACKLOG_RETRY_SECONDS = 10;

// Browser SDKs post cross-origin; the key is public and only allows posting events. A browser
// reads the allowed methods and headers and their max age from the preflight (OPTIONS) answer
// only: the other answers carry the origin and the headers a script may read, as Relay's do.
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "x-sentry-error, x-sentry-rate-limits, retry-after",
};
const PREFLIGHT = {
  ...CORS,
  "Access-Control-Allow-Methods": "POST, OPTIONS",
  "Access-Control-Allow-Headers": "content-type, content-encoding, x-sentry-auth, authorization",
  "Access-Control-Max-Age": "3600",
};

const tooLarge = (message: string) => new ApiError(413, "payload_too_large", message, undefined, { Connection: "close" });

/**
 * The events of one request, read into IncomingEvents and accepted like native ones (same grouping,
 * throttle, counters, stats, alerts, database deadline), each written at most once under the
 * client's event id. Before anything is written the request passes, in order: the write backlog
 * with its own events counted, its DSN key's events per minute, and the project's new issues per
 * minute (see SentryLimits). Answers `{id}`: the first event's id, else the envelope's.
 */
async function ingest(deps: SentryDeps, request: Request, pathProject: string | undefined, endpoint: SentryEndpoint): Promise<Response> {
  const { config, sentryLimits } = deps;
  // stacked or unknown codings are refused on the header, before the key is looked up
  contentCoding(request);
  // a key this process has cached answers at once; only a look-up waits on the database
  const projectFor = async (key: string | undefined) =>
    deps.sentryKeys.cachedProjectFor(key, pathProject) ?? (await withinDatabaseDeadline(deps.sql, deps.sentryKeys.projectFor(key, pathProject)));
  // authenticate before reading the body when the key comes in the query or a header
  const early = keyFromRequest(request);
  // a /store/ body has no envelope header to carry a dsn: without a key it is refused unread
  let caller = early || endpoint === "store" ? await projectFor(early) : undefined;
  // a key already over its limit in this minute, or a full backlog, is refused before the body is read
  sentryLimits.assertNotRefused(caller?.dsnKey);
  assertBacklogRoom(deps, 1);

  // An envelope keyed only by its header's dsn is read and decoded before anyone is known: it may
  // hold one event's bytes, not a whole envelope's. Its other items are skipped anyway.
  const max =
    endpoint === "store" ? config.sentryMaxEventBytes : caller ? config.sentryMaxEnvelopeBytes : Math.min(config.sentryMaxEventBytes, config.sentryMaxEnvelopeBytes);
  let envelopeId: string | null = null;
  let report: ClientReport | null = null;
  let sessions: ExternalSession[] = [];
  const raws = await withBody(request, max, deps.bodies, async (body, hold): Promise<unknown[]> => {
    if (endpoint === "store") return [await storeBodyJson(body, config.sentryMaxEventBytes, hold)];
    let envelope;
    try {
      envelope = parseEnvelope(body, config.sentryMaxEventBytes);
    } catch (err) {
      if (err instanceof MalformedEnvelope) throw invalidPayload(`Malformed envelope: ${err.message}`);
      if (err instanceof EventTooLarge) throw tooLarge(err.message);
      throw err;
    }
    // the key is checked before any event in the envelope is parsed
    caller ??= await projectFor(keyFromDsn(envelope.header.dsn));
    envelopeId = normalizeEventId(envelope.header.event_id);
    report = envelope.clientReport && sentryClientReport(envelope.clientReport);
    sessions = mapSentrySessions(envelope.sessions, envelope.header, config.retentionDays);
    return envelope.events.map((payload, i) => parseJsonPayload(payload, `event item ${i}`));
  });
  const { projectId, dsnKey } = caller!;

  const events = raws.map((raw) => {
    try {
      // the envelope's event_id stands in for an event that carries none (one event per envelope)
      return mapSentryEvent(raw, raws.length === 1 ? envelopeId : null);
    } catch (err) {
      if (err instanceof NotAnEvent) throw invalidPayload(err.message);
      throw err;
    }
  });
  await accept(deps, projectId, events, {
    admit: async (rows) => {
      // the request's own events count: a backlog one short of full does not take a request of two
      assertBacklogRoom(deps, rows.length);
      await sentryLimits.countKeyEvents(projectId, dsnKey, rows.length);
      await sentryLimits.boundNewIssues(projectId, rows);
    },
  });
  // after the events were written, as a native batch's report (no key: Sentry SDKs do not resend)
  if (report) await recordClientReport(deps, projectId, report, null);
  // release health (docs/sentry.md "Sessions"); a resent envelope counts nothing twice
  await writeSentrySessions(deps, projectId, sessions);
  const id = events[0]?.eventId ?? envelopeId;
  return json(id ? { id } : {}, { headers: CORS });
}

/**
 * A Sentry `client_report` payload (`{timestamp, discarded_events: [{reason, category, quantity}]}`)
 * as a client report, or null when it does not hold a valid one: like Relay, an invalid report is
 * dropped without failing the envelope's events.
 */
function sentryClientReport(payload: Buffer): ClientReport | null {
  let value: unknown;
  try {
    value = JSON.parse(payload.toString("utf8"));
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const parsed = parseClientReport({ discarded_events: (value as { discarded_events?: unknown }).discarded_events }, []);
  return "report" in parsed ? parsed.report : null;
}

/** Refuses (429, which Sentry SDKs honour) a request whose events would take the write backlog past its limit. */
function assertBacklogRoom(deps: SentryDeps, events: number): void {
  if (deps.writer.pendingEvents + events <= deps.config.sentryMaxPendingEvents) return;
  throw new ApiError(429, "rate_limited", "The server is busy writing earlier events; retry later.", undefined, {
    "Retry-After": String(BACKLOG_RETRY_SECONDS),
    "X-Sentry-Rate-Limits": `${BACKLOG_RETRY_SECONDS}::organization:backlog`,
  });
}

/** One Sentry ingest request, answered with CORS headers and, on errors, `X-Sentry-Error` as Sentry clients log it. */
export async function sentryIngest(deps: SentryDeps, request: Request, pathProject: string | undefined, endpoint: SentryEndpoint): Promise<Response> {
  if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: PREFLIGHT });
  try {
    if (request.method !== "POST") throw methodNotAllowed(["POST", "OPTIONS"]);
    // an answer carries the CORS headers from the start
    return await ingest(deps, request, pathProject, endpoint);
  } catch (err) {
    countIngestRefusal("sentry", err);
    const res = errorResponse(err);
    if (ApiError.is(err)) res.headers.set("X-Sentry-Error", err.message.replace(/[^\x20-\x7e]/g, "?"));
    for (const [k, v] of Object.entries(CORS)) res.headers.set(k, v);
    return res;
  }
}
