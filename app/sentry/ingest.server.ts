import type { Services } from "~/services.server";
import { knownFingerprints, toEventRow } from "~/ingest/ingest.server";
import { parseIngestBody } from "~/ingest/validate.server";
import { ApiError, errorResponse, invalidPayload, json, methodNotAllowed, readDecodedBody } from "~/http.server";
import { keyFromDsn, keyFromRequest } from "./auth.server";
import { parseJsonPayload, storeBodyJson } from "./body.server";
import { EventTooLarge, MalformedEnvelope, parseEnvelope } from "./envelope.server";
import { mapSentryEvent, normalizeEventId, NotAnEvent } from "./event.server";

export type SentryEndpoint = "envelope" | "store";

/** How long a client should hold back when the backlog is full; Sentry SDKs drop events meanwhile. */
const BACKLOG_RETRY_SECONDS = 10;

// Browser SDKs post cross-origin; the key is public and only allows posting events.
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "POST, OPTIONS",
  "Access-Control-Allow-Headers": "content-type, content-encoding, x-sentry-auth, authorization",
  "Access-Control-Expose-Headers": "x-sentry-error, x-sentry-rate-limits, retry-after",
  "Access-Control-Max-Age": "3600",
};

const tooLarge = (message: string) => new ApiError(413, "payload_too_large", message, undefined, { Connection: "close" });

/**
 * The events of one request, written through the native ingest path (same validation, grouping,
 * throttle, counters, stats and alerts), each carrying the client's event id for deduplication.
 * Before anything is written the request passes, in order: the write backlog with its own events
 * counted, its DSN key's events per minute, and the project's new issues per minute (see
 * SentryLimits). Answers `{id}`: the first event's id, else the envelope's.
 */
async function ingest(services: Services, request: Request, pathProject: string | undefined, endpoint: SentryEndpoint): Promise<Response> {
  const { config, sentryLimits } = services;
  // authenticate before reading the body when the key comes in the query or header
  const early = keyFromRequest(request);
  // a /store/ body has no envelope header to carry a dsn: without a key it is refused unread
  let caller = early || endpoint === "store" ? await services.sentryKeys.projectFor(early, pathProject) : undefined;
  // a key already over its limit in this minute, or a full backlog, is refused before the body is read
  sentryLimits.assertNotRefused(caller?.dsnKey);
  assertBacklogRoom(services, 1);

  const body = await readDecodedBody(request, endpoint === "envelope" ? config.sentryMaxEnvelopeBytes : config.sentryMaxEventBytes);
  let raws: unknown[];
  let envelopeId: string | null = null;
  if (endpoint === "envelope") {
    let envelope;
    try {
      envelope = parseEnvelope(body, config.sentryMaxEventBytes);
    } catch (err) {
      if (err instanceof MalformedEnvelope) throw invalidPayload(`Malformed envelope: ${err.message}`);
      if (err instanceof EventTooLarge) throw tooLarge(err.message);
      throw err;
    }
    caller ??= await services.sentryKeys.projectFor(keyFromDsn(envelope.header.dsn), pathProject);
    envelopeId = normalizeEventId(envelope.header.event_id);
    raws = envelope.events.map((payload, i) => parseJsonPayload(payload, `event item ${i}`));
  } else {
    raws = [await storeBodyJson(body, config.sentryMaxEventBytes)];
  }
  const { projectId, dsnKey } = caller!;

  const receivedAt = Date.now();
  const mapped = raws.map((raw) => {
    try {
      // the envelope's event_id stands in for an event that carries none (one event per envelope)
      return mapSentryEvent(raw, raws.length === 1 ? envelopeId : null);
    } catch (err) {
      if (err instanceof NotAnEvent) throw invalidPayload(err.message);
      throw err;
    }
  });
  const rows = mapped.map((m) => {
    const [valid] = parseIngestBody(m.event);
    const row = toEventRow(projectId, valid, receivedAt, config.retentionDays);
    row.eventId = m.clientEventId ? m.eventId : null;
    // the id answered (the event's own, else the one made for it) is the one stored on the row
    row.storedEventId = m.eventId;
    // frames that are not Roblox script paths (Node, Python…) name their culprit by file
    row.culprit ??= m.culprit;
    return row;
  });
  if (rows.length) {
    // the request's own events count: a backlog one short of full does not take a request of two
    assertBacklogRoom(services, rows.length);
    await sentryLimits.countKeyEvents(projectId, dsnKey, rows.length);
    await sentryLimits.boundNewIssues(projectId, rows);
    await services.writer.submit(rows);
    for (const r of rows) knownFingerprints.add(projectId, r.fingerprint);
  }
  const id = mapped[0]?.eventId ?? envelopeId;
  return json(id ? { id } : {});
}

/** Refuses (429, which Sentry SDKs honour) a request whose events would take the write backlog past its limit. */
function assertBacklogRoom(services: Services, events: number): void {
  if (services.writer.pendingEvents + events <= services.config.sentryMaxPendingEvents) return;
  throw new ApiError(429, "rate_limited", "The server is busy writing earlier events; retry later.", undefined, {
    "Retry-After": String(BACKLOG_RETRY_SECONDS),
    "X-Sentry-Rate-Limits": `${BACKLOG_RETRY_SECONDS}::organization:backlog`,
  });
}

/** One Sentry ingest request, answered with CORS headers and, on errors, `X-Sentry-Error` as Sentry clients log it. */
export async function sentryIngest(services: Services, request: Request, pathProject: string | undefined, endpoint: SentryEndpoint): Promise<Response> {
  if (request.method === "OPTIONS") return new Response(null, { status: 204, headers: CORS });
  let res: Response;
  try {
    if (request.method !== "POST") throw methodNotAllowed(["POST", "OPTIONS"]);
    res = await ingest(services, request, pathProject, endpoint);
  } catch (err) {
    res = errorResponse(err);
    if (ApiError.is(err)) res.headers.set("X-Sentry-Error", err.message.replace(/[^\x20-\x7e]/g, "?"));
  }
  for (const [k, v] of Object.entries(CORS)) res.headers.set(k, v);
  return res;
}
