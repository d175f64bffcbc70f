import type { EventRow } from "../../db/events.js";
import type { Services } from "~/services.server";
import { groupEvent, KnownFingerprints } from "./fingerprint.server";
import { parseIngestBody, type ValidEvent } from "./validate.server";
import { storable } from "~/text.server";
import { writeOnce } from "./idempotency.server";

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

const storableOpt = (s: string | null | undefined) => (s == null ? null : storable(s));

function storableJson(v: unknown): unknown {
  if (typeof v === "string") return storable(v);
  if (Array.isArray(v)) return v.map(storableJson);
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [storable(k), storableJson(x)]));
  }
  return v;
}

/** Breadcrumbs as stored: the time as ISO 8601, the level filled in, absent fields left out; none is null. */
export function storedBreadcrumbs(crumbs: ValidEvent["breadcrumbs"]): unknown[] | null {
  if (!crumbs?.length) return null;
  return crumbs.map((c) => {
    const out: Record<string, unknown> = {};
    if (c.timestamp !== undefined) out.timestamp = new Date(c.timestamp).toISOString();
    out.level = c.level ?? "info";
    if (c.category !== undefined) out.category = storable(c.category);
    if (c.message !== undefined) out.message = storable(c.message);
    if (c.data !== undefined) out.data = storableJson(c.data);
    return out;
  });
}

/** Fingerprints this process knows to have a group (shared with the Sentry endpoints' new-issue bound). */
export const knownFingerprints = new KnownFingerprints();
const known = knownFingerprints;

/**
 * A timestamp more than 5 minutes ahead is the receive time. One from before the retention window
 * (`retentionDays` back from the receive time) is kept on the event, but its issue counts it as the
 * window's start, so a bogus or ancient clock cannot make an issue years old.
 */
export function toEventRow(projectId: string, e: ValidEvent, receivedAt: number, retentionDays: number): EventRow {
  const message = truncateUtf8(storable(e.message), MESSAGE_BYTES);
  const stackTrace = e.stack_trace == null ? null : truncateUtf8(storable(e.stack_trace), STACK_BYTES);
  const ts = e.timestamp ?? receivedAt;
  const playerName = storableOpt(e.player_name);
  const { fingerprint, secondary, culprit } = groupEvent(message, stackTrace, e.fingerprint, playerName, (fp) => !known.has(projectId, fp), e.user_id);
  return {
    projectId,
    fingerprint,
    secondaryFingerprint: secondary,
    message,
    level: e.level ?? "error",
    stackTrace,
    userId: e.user_id ?? null,
    playerName,
    traceId: e.trace_id ?? null,
    jobId: storableOpt(e.job_id),
    placeId: e.place_id ?? null,
    gameVersion: storableOpt(e.game_version),
    environment: storable(e.environment?.trim() || "production"),
    context: e.context == null ? null : storableJson(e.context),
    tags: e.tags?.map(storable) ?? null,
    breadcrumbs: storedBreadcrumbs(e.breadcrumbs),
    timestamp: ts > receivedAt + FUTURE_TOLERANCE_MS ? receivedAt : ts,
    notBefore: receivedAt - retentionDays * DAY_MS,
    count: e.count ?? 1,
    culprit,
    storedEventId: e.event_id ?? null,
  };
}

export type IngestResult = { success: true; count: number; occurrences: number; throttled: number };

/**
 * Validates the whole body first (nothing is written if any event is invalid), then writes it
 * through the writer (one transaction per fingerprint shard). With an idempotency key, parts an
 * earlier attempt committed are not written again (see writeOnce).
 */
export async function ingestEvents(services: Services, projectId: string, body: unknown, key: string | null = null): Promise<IngestResult> {
  const events = parseIngestBody(body);
  const receivedAt = Date.now();
  const rows = events.map((e) => toEventRow(projectId, e, receivedAt, services.config.retentionDays));
  const throttled = key === null ? (await services.writer.submit(rows)).throttled : await writeOnce(services, projectId, key, body, rows);
  for (const r of rows) known.add(projectId, r.fingerprint);
  return {
    success: true,
    count: rows.length,
    occurrences: rows.reduce((n, r) => n + r.count, 0),
    throttled,
  };
}
