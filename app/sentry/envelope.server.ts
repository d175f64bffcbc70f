/**
 * Sentry envelopes (https://develop.sentry.dev/sdk/data-model/envelopes/): a JSON header line, then
 * items, each a JSON header line and a payload. A payload with `length` is that many bytes (it may
 * hold newlines or binary data); without it the payload runs to the next newline. `event` items
 * are kept, and the first `client_report` (what the SDK dropped, stored as native client reports
 * are); every other type is skipped.
 *
 * Like Sentry's Relay, an envelope carries at most one event (SDKs send one per envelope) and a
 * bounded number of items; past either it is refused whole (413), before any of it is written.
 */

/** Event items per envelope (Relay's limit for event-like items). */
export const MAX_ENVELOPE_EVENTS = 1;
/** Items of any type per envelope (Relay's default count limit for attachments and sessions). */
export const MAX_ENVELOPE_ITEMS = 100;

/** A `client_report` item larger than this is skipped (SDKs send a few hundred bytes). */
export const MAX_CLIENT_REPORT_BYTES = 64 * 1024;
/** A `session` or `sessions` item larger than this is skipped (SDKs send well under a kilobyte). */
export const MAX_SESSION_ITEM_BYTES = 64 * 1024;

export type Envelope = {
  header: Record<string, unknown>;
  /** the payload bytes of each `event` item, in order */
  events: Buffer[];
  /** the payload bytes of the first `client_report` item, if any */
  clientReport: Buffer | null;
  /** the payloads of `session` (one session) and `sessions` (aggregates) items, in order */
  sessions: { type: "session" | "sessions"; payload: Buffer }[];
  /** item types that were skipped, for the count in logs and tests */
  skipped: string[];
};

export class MalformedEnvelope extends Error {}
/** An event item over the size limit, or an envelope over its item limits: a 413. */
export class EventTooLarge extends Error {}

const NEWLINE = 0x0a;

function jsonLine(buf: Buffer, start: number, what: string): { value: Record<string, unknown>; next: number } {
  let end = buf.indexOf(NEWLINE, start);
  if (end === -1) end = buf.length;
  const text = buf.subarray(start, end).toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new MalformedEnvelope(`The ${what} is not a JSON object on one line.`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new MalformedEnvelope(`The ${what} is not a JSON object.`);
  return { value: value as Record<string, unknown>, next: end + 1 };
}

export function parseEnvelope(buf: Buffer, maxEventBytes: number): Envelope {
  const { value: header, next } = jsonLine(buf, 0, "envelope header");
  const events: Buffer[] = [];
  let clientReport: Buffer | null = null;
  const sessions: Envelope["sessions"] = [];
  const skipped: string[] = [];
  let pos = next;
  let index = 0;
  while (pos < buf.length) {
    // blank lines between items are tolerated (some clients end the envelope with one)
    if (buf[pos] === NEWLINE || (buf[pos] === 0x0d && buf[pos + 1] === NEWLINE)) {
      pos += buf[pos] === NEWLINE ? 1 : 2;
      continue;
    }
    if (index >= MAX_ENVELOPE_ITEMS) throw new EventTooLarge(`The envelope holds more than ${MAX_ENVELOPE_ITEMS} items.`);
    const what = `header of item ${index}`;
    const { value: item, next: payloadStart } = jsonLine(buf, pos, what);
    if (typeof item.type !== "string" || item.type === "") throw new MalformedEnvelope(`The ${what} has no type.`);
    let payloadEnd: number;
    if (item.length !== undefined && item.length !== null) {
      const n = item.length;
      if (typeof n !== "number" || !Number.isSafeInteger(n) || n < 0) throw new MalformedEnvelope(`The ${what} has an invalid length.`);
      payloadEnd = payloadStart + n;
      if (payloadEnd > buf.length) throw new MalformedEnvelope(`Item ${index} is shorter than its length of ${n} bytes: the envelope is truncated.`);
      if (payloadEnd < buf.length && buf[payloadEnd] !== NEWLINE) throw new MalformedEnvelope(`Item ${index} is longer than its length of ${n} bytes.`);
    } else {
      payloadEnd = buf.indexOf(NEWLINE, Math.min(payloadStart, buf.length));
      if (payloadEnd === -1) payloadEnd = buf.length;
    }
    if (payloadStart > buf.length) throw new MalformedEnvelope(`Item ${index} has a header but no payload: the envelope is truncated.`);
    if (item.type === "event") {
      if (events.length >= MAX_ENVELOPE_EVENTS) {
        throw new EventTooLarge(`The envelope holds more than ${MAX_ENVELOPE_EVENTS} event item; send each event in its own envelope, as Sentry SDKs do.`);
      }
      if (payloadEnd - payloadStart > maxEventBytes) throw new EventTooLarge(`Event item ${index} is larger than ${maxEventBytes} bytes.`);
      events.push(buf.subarray(payloadStart, payloadEnd));
    } else if (item.type === "client_report" && clientReport === null && payloadEnd - payloadStart <= MAX_CLIENT_REPORT_BYTES) {
      clientReport = buf.subarray(payloadStart, payloadEnd);
    } else if ((item.type === "session" || item.type === "sessions") && payloadEnd - payloadStart <= MAX_SESSION_ITEM_BYTES) {
      sessions.push({ type: item.type, payload: buf.subarray(payloadStart, payloadEnd) });
    } else {
      skipped.push(item.type);
    }
    pos = payloadEnd + 1;
    index++;
  }
  return { header, events, clientReport, sessions, skipped };
}
