import { createHash } from "node:crypto";
import type { Sql } from "../../db/client.js";
import type { EventRow } from "../../db/events.js";
import { IdempotencyClash, recordedParts } from "../../db/idempotency.js";
import { ApiError, conflict, contentCoding, methodNotAllowed, readJson } from "~/http.server";
import { withinDatabaseDeadline } from "~/db-deadline.server";
import type { Services } from "~/services.server";
import type { EventWriter } from "./writer.server";

export const IDEMPOTENCY_HEADER = "idempotency-key";

/**
 * The request's idempotency key, or null without one (an empty header is none: proxies and the
 * Express adapter drop empty headers anyway). Stripe's form (a bare token) and the IETF draft's (a
 * quoted string) are both taken; 1 to 255 printable ASCII characters.
 */
export function idempotencyKey(request: Request): string | null {
  const raw = request.headers.get(IDEMPOTENCY_HEADER)?.trim();
  if (!raw) return null;
  const key = /^"(.*)"$/.exec(raw)?.[1] ?? raw;
  if (!/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new ApiError(400, "invalid_payload", "The Idempotency-Key header must be 1 to 255 printable ASCII characters (a UUID is a good key).");
  }
  return key;
}

/** A request sent with an Idempotency-Key: the key, and a hash of the body it was first sent with. */
export type KeyedRequest = { key: string; bodyHash: Buffer };

/** The body's hash as a key is recorded with (the parsed JSON, so spacing and encoding do not matter). */
export const bodyHash = (body: unknown) => createHash("sha256").update(JSON.stringify(body)).digest();

/**
 * Writes a keyed request exactly once. What earlier attempts committed under the key is read first
 * and left out; the rest is written, each part recording itself under the key in its own
 * transaction. The answer's `throttled` sums every part, this attempt's and earlier ones', so a
 * retry answers what the first complete attempt would have. A concurrent duplicate that committed a
 * part first makes this attempt's part roll back (IdempotencyClash): then the parts are read again.
 */
export async function writeOnce(deps: { sql: Sql; writer: EventWriter }, projectId: string, request: KeyedRequest, rows: EventRow[]): Promise<number> {
  const { key, bodyHash: hash } = request;
  // each clash means another attempt committed a part this one had not seen: rounds end
  let seen = -1;
  for (;;) {
    const recorded = await recordedParts(deps.sql, projectId, key);
    if (recorded.some((p) => !hash.equals(p.bodyHash))) {
      throw conflict("This Idempotency-Key was already used with a different body; send a new batch with a new key.");
    }
    const written = new Set(recorded.flatMap((p) => p.events));
    const before = recorded.reduce((n, p) => n + p.throttled, 0);
    const missing = rows.flatMap((_, i) => (written.has(i) ? [] : [i]));
    if (missing.length === 0) return before;
    if (written.size <= seen) throw conflict("A request with this Idempotency-Key is being written at the same time; retry it shortly.");
    seen = written.size;
    try {
      const { throttled } = await deps.writer.submit(
        missing.map((i) => rows[i]),
        { key, bodyHash: hash, indexes: missing },
      );
      return before + throttled;
    } catch (err) {
      if (!IdempotencyClash.is(err)) throw err;
    }
  }
}

/**
 * The front of an ingest-key POST (native ingest, economy pushes, client reports): the coding
 * judged on the header, then the key looked up (bounded by the database deadline), then the
 * Idempotency-Key and the JSON body within `max` bytes, in that order, so a refusal costs least.
 */
export async function keyedIngestPost(
  services: Services,
  request: Request,
  max: number,
  allowed = ["POST"],
): Promise<{ projectId: string; key: string | null; body: unknown }> {
  if (request.method !== "POST") throw methodNotAllowed(allowed);
  // stacked or unknown codings are refused on the header, before the key is looked up
  contentCoding(request);
  // a key this process has cached answers at once; only a look-up waits on the database
  const { projectId } = services.apiKeys.cachedProjectFor(request) ?? (await withinDatabaseDeadline(services.sql, services.apiKeys.projectFor(request)));
  const key = idempotencyKey(request);
  const body = await readJson(request, max, services.bodies);
  return { projectId, key, body };
}
