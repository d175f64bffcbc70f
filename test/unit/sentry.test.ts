import { describe, expect, it } from "vitest";
import { mapSentryEvent, normalizeEventId, NotAnEvent } from "../../app/sentry/event.server.js";
import { EventTooLarge, MalformedEnvelope, MAX_ENVELOPE_ITEMS, parseEnvelope } from "../../app/sentry/envelope.server.js";
import { keyFromDsn, parseSentryAuth } from "../../app/sentry/auth.server.js";
import { BREADCRUMBS, toEventRow, type IncomingEvent } from "../../app/ingest/accept.server.js";
import { defaultFingerprint, KnownFingerprints } from "../../app/ingest/fingerprint.server.js";
import type { EventRow } from "../../db/events.js";

/** The limits every incoming event keeps, whatever its protocol (the native ones: a native event over them is a 400). */
function expectWithinLimits(e: IncomingEvent) {
  const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
  expect(e.message.trim()).not.toBe("");
  if (e.context) expect(bytes(e.context)).toBeLessThanOrEqual(16 * 1024);
  for (const s of [e.playerName, e.jobId, e.gameVersion, e.environment]) expect((s ?? "").length).toBeLessThanOrEqual(256);
  expect(e.tags?.length ?? 0).toBeLessThanOrEqual(50);
  for (const t of e.tags ?? []) expect(t.length).toBeLessThanOrEqual(200);
  const parts = typeof e.fingerprint === "string" ? [e.fingerprint] : (e.fingerprint ?? []);
  expect(parts.length).toBeLessThanOrEqual(20);
  for (const p of parts) expect(p.length).toBeLessThanOrEqual(500);
  const crumbs = e.breadcrumbs ?? [];
  expect(crumbs.length).toBeLessThanOrEqual(BREADCRUMBS.count);
  if (crumbs.length) expect(bytes(crumbs)).toBeLessThanOrEqual(BREADCRUMBS.bytes);
  for (const c of crumbs) {
    expect(c.message !== undefined || c.category !== undefined || c.data !== undefined).toBe(true);
    expect((c.category ?? "").length).toBeLessThanOrEqual(BREADCRUMBS.category);
    expect((c.message ?? "").length).toBeLessThanOrEqual(BREADCRUMBS.message);
    if (c.data) expect(bytes(c.data)).toBeLessThanOrEqual(BREADCRUMBS.dataBytes);
  }
}

describe("mapSentryEvent", () => {
  it("maps every level", () => {
    const level = (l: string) => mapSentryEvent({ message: "m", level: l }).level;
    expect(["fatal", "error", "warning", "info", "debug", "log", "nonsense"].map(level)).toEqual(["error", "error", "warn", "info", "info", "info", "error"]);
    expect(mapSentryEvent({ message: "m" }).level).toBe("error");
  });

  it("takes the last exception as the raised one and appends the causes, most recent first", () => {
    const frames = (f: string) => ({ frames: [{ filename: f, lineno: 1, function: "outer" }, { filename: f, lineno: 2, function: "inner" }] });
    const m = mapSentryEvent({
      exception: {
        values: [
          { type: "IOError", value: "disk full", stacktrace: frames("a.js") },
          { type: "DbError", value: "write failed", stacktrace: frames("b.js") },
          { type: "Error", value: "save failed", stacktrace: frames("c.js") },
        ],
      },
    });
    expect(m.message).toBe("Error: save failed");
    expect(m.stackTrace!.split("\n")).toEqual([
      "c.js:2 function inner",
      "c.js:1 function outer",
      "Caused by: DbError: write failed",
      "b.js:2 function inner",
      "b.js:1 function outer",
      "Caused by: IOError: disk full",
      "a.js:2 function inner",
      "a.js:1 function outer",
    ]);
  });

  it("groups by the native rule (grouping v4): moved lines keep the fingerprint; a function or an anonymous top frame's line does not", () => {
    const event = (top: { lineno: number; function?: string }, callerLine: number) =>
      mapSentryEvent({
        exception: {
          values: [
            {
              type: "Error",
              value: "attempt to index nil with 'Price'",
              stacktrace: {
                frames: [
                  { filename: "ServerScriptService.Main", lineno: callerLine, function: "?" },
                  { filename: "ServerScriptService.Shop", ...top },
                ],
              },
            },
          ],
        },
      });
    const fp = (m: IncomingEvent) => defaultFingerprint(m.message, m.stackTrace);
    expect(fp(event({ lineno: 52, function: "buy" }, 17))).toBe(fp(event({ lineno: 40, function: "buy" }, 5)));
    expect(fp(event({ lineno: 40, function: "sell" }, 5))).not.toBe(fp(event({ lineno: 40, function: "buy" }, 5)));
    expect(fp(event({ lineno: 52, function: "?" }, 5))).not.toBe(fp(event({ lineno: 40, function: "?" }, 5)));
  });

  it("uses logentry or message when there is no exception, and a placeholder when there is neither", () => {
    expect(mapSentryEvent({ logentry: { message: "a %s", formatted: "a b" } }).message).toBe("a b");
    expect(mapSentryEvent({ logentry: { message: "raw only" } }).message).toBe("raw only");
    expect(mapSentryEvent({ message: "plain" }).message).toBe("plain");
    expect(mapSentryEvent({ message: { formatted: "from object" } }).message).toBe("from object");
    expect(mapSentryEvent({ exception: { values: [{ type: "OnlyType" }] } }).message).toBe("OnlyType");
    expect(mapSentryEvent({}).message).toBe("<unlabeled event>");
  });

  it("maps user, tags, trace, release, environment, server and timestamps", () => {
    const m = mapSentryEvent({
      message: "m",
      user: { id: 261, username: "Builderman", ip_address: "1.2.3.4" },
      tags: { a: "1", b: 2, c: { nested: true } },
      contexts: { trace: { trace_id: "4BF92F3577B34DA6A3CE929D0E0E4736" } },
      release: 42,
      environment: "",
      server_name: "srv",
      timestamp: "2026-11-20T10:00:00.5+02:00",
    });
    expect(m).toMatchObject({
      userId: "261",
      playerName: "Builderman",
      tags: ["a:1", "b:2"],
      traceId: "4bf92f35-77b3-4da6-a3ce-929d0e0e4736",
      gameVersion: "42",
      jobId: "srv",
      timestamp: Date.parse("2026-11-20T08:00:00.500Z"),
    });
    expect(m.environment).toBeNull();
    expect(m.context).toEqual({ contexts: { trace: { trace_id: "4BF92F3577B34DA6A3CE929D0E0E4736" } }, user: { ip_address: "1.2.3.4" } });
    expect(mapSentryEvent({ message: "m", user: { id: "abc" } }).userId).toBeNull();
    // a user id in digits is read as a native one is: without leading zeros
    expect(mapSentryEvent({ message: "m", user: { id: "00261" } }).userId).toBe("261");
    expect(mapSentryEvent({ message: "m", user: { id: "abc" } }).context).toEqual({ user: { id: "abc" } });
    expect(mapSentryEvent({ message: "m", timestamp: "yesterday" }).timestamp).toBeNull();
    expect(mapSentryEvent({ message: "m", contexts: { trace: { trace_id: "short" } } }).traceId).toBeNull();
  });

  it("keeps the context within 16 KiB, dropping whole parts and saying what went", () => {
    const m = mapSentryEvent({ message: "m", extra: { big: "x".repeat(17_000) }, contexts: { os: { name: "Windows" } } });
    const ctx = m.context as any;
    expect(Buffer.byteLength(JSON.stringify(ctx))).toBeLessThanOrEqual(16 * 1024);
    expect(ctx._dropped).toEqual(["extra"]);
    expect(ctx.contexts).toEqual({ os: { name: "Windows" } });
    expectWithinLimits(m);
  });

  it("maps breadcrumbs (both forms) onto the native field, out of the context", () => {
    const crumbs = [
      { timestamp: 1795429990.5, category: "log", level: "warning", message: "Round 12 started", data: { round: 12 } },
      { timestamp: "2026-11-23T07:53:19Z", type: "http", level: "CRITICAL", data: { url: "/buy" } },
      { level: "log", message: "no time" },
      { level: "trace", category: "odd" },
      { timestamp: "soon", data: 5 },
      "not a crumb",
    ];
    const expected = [
      { timestamp: "2026-11-23T10:33:10.500Z", level: "warning", category: "log", message: "Round 12 started", data: { round: 12 } },
      { timestamp: "2026-11-23T07:53:19.000Z", level: "fatal", category: "http", data: { url: "/buy" } },
      { level: "info", message: "no time" },
      { level: "info", category: "odd" },
    ];
    for (const form of [crumbs, { values: crumbs }]) {
      const m = mapSentryEvent({ message: "m", breadcrumbs: form });
      expect(m.breadcrumbs).toEqual(expected);
      expect(m.context).toBeNull();
      expectWithinLimits(m);
    }
    expect(mapSentryEvent({ message: "m", breadcrumbs: { values: [] } }).breadcrumbs).toBeNull();
    expect(mapSentryEvent({ message: "m", breadcrumbs: "junk" }).breadcrumbs).toBeNull();
  });

  it("keeps breadcrumbs within the native bounds: the newest 100, cut, older ones first out of 32 KiB", () => {
    const many = Array.from({ length: 150 }, (_, i) => ({ message: `crumb ${i} ${"x".repeat(400)}`, category: "c".repeat(300), data: i === 149 ? { big: "y".repeat(5000) } : { i } }));
    const m = mapSentryEvent({ message: "m", breadcrumbs: { values: many } });
    const out = m.breadcrumbs!;
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(32 * 1024);
    expect(out.length).toBeLessThan(100);
    expect(out.at(-1)!.message).toMatch(/^crumb 149 /);
    expect(out.at(-1)!.data).toBeUndefined();
    expect(out.at(-2)!.data).toEqual({ i: 148 });
    expect(out[0].category).toHaveLength(128);
    const long = mapSentryEvent({ message: "m", breadcrumbs: [{ message: "z".repeat(5000) }] });
    expect(long.breadcrumbs![0].message).toHaveLength(2048);
    expectWithinLimits(m);
    expectWithinLimits(long);
  });

  it("clips what is over the native limits instead of refusing the event", () => {
    const m = mapSentryEvent({
      message: "m",
      tags: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, "v".repeat(300)])),
      release: "r".repeat(1000),
      fingerprint: Array.from({ length: 30 }, () => "f".repeat(600)),
      user: { username: "u".repeat(400) },
    });
    expect(m.tags).toHaveLength(50);
    expectWithinLimits(m);
  });

  it("normalizes event ids and makes one when the client sent none", () => {
    expect(normalizeEventId("9E957FF3-3EE3-48AC-9434-503FEEEA25A6")).toBe("9e957ff33ee348ac9434503feeea25a6");
    expect(normalizeEventId("0".repeat(32))).toBeNull();
    expect(normalizeEventId("xyz")).toBeNull();
    expect(normalizeEventId("9e957ff33ee348ac9434503feeea25a6")).toBe("9e957ff33ee348ac9434503feeea25a6");
    expect(normalizeEventId(" {9e957ff3-3ee3-48ac-9434-503feeea25a6} ")).toBe("9e957ff33ee348ac9434503feeea25a6");
    expect(normalizeEventId("9e957ff33ee348ac9434503feeea25a")).toBeNull();
    const m = mapSentryEvent({ message: "m" });
    // made here, so not a deduplication key
    expect(m.dedupId).toBeNull();
    expect(m.eventId).toMatch(/^[0-9a-f]{32}$/);
    expect(mapSentryEvent({ message: "m" }, "9e957ff33ee348ac9434503feeea25a6")).toMatchObject({ dedupId: "9e957ff33ee348ac9434503feeea25a6", eventId: "9e957ff33ee348ac9434503feeea25a6" });
  });

  it("refuses what is not an object", () => {
    expect(() => mapSentryEvent([])).toThrow(NotAnEvent);
    expect(() => mapSentryEvent("event")).toThrow(NotAnEvent);
  });
});

describe("parseEnvelope", () => {
  const b = (s: string) => Buffer.from(s);

  it("reads length-delimited, newline-delimited and empty items, keeps the first client report and the sessions, and skips other types", () => {
    const env = parseEnvelope(b('{"event_id":"x"}\n{"type":"event","length":10}\n{"a":"\n\n"}\n{"type":"profile"}\n{}\n{"type":"session"}\n{"sid":"s"}\n\n{"type":"client_report"}\n{"b":1}'), 1024);
    expect(env.header).toEqual({ event_id: "x" });
    expect(env.events.map((e) => e.toString())).toEqual(['{"a":"\n\n"}']);
    expect(env.clientReport?.toString()).toBe('{"b":1}');
    expect(env.sessions.map((s) => [s.type, s.payload.toString()])).toEqual([["session", '{"sid":"s"}']]);
    expect(env.skipped).toEqual(["profile"]);
    const last = parseEnvelope(b('{}\n{"type":"profile"}\n{}\n{"type":"event"}\n{"b":1}'), 1024);
    expect(last.events.map((e) => e.toString())).toEqual(['{"b":1}']);
  });

  it("refuses, like Relay, a second event item and more than 100 items", () => {
    expect(() => parseEnvelope(b('{}\n{"type":"event"}\n{"a":1}\n{"type":"event"}\n{"b":1}'), 1024)).toThrow(EventTooLarge);
    expect(() => parseEnvelope(b('{}\n{"type":"event"}\n{}\n{"type":"attachment"}\nx\n{"type":"event","length":2}\n{}'), 1024)).toThrow(/more than 1 event item/);
    const items = (n: number) => b("{}\n" + '{"type":"profile"}\n{}\n'.repeat(n));
    expect(parseEnvelope(items(MAX_ENVELOPE_ITEMS), 1024).skipped).toHaveLength(MAX_ENVELOPE_ITEMS);
    expect(() => parseEnvelope(items(MAX_ENVELOPE_ITEMS + 1), 1024)).toThrow(/more than 100 items/);
  });

  it("accepts a header with no items", () => {
    expect(parseEnvelope(b("{}"), 10).events).toEqual([]);
    expect(parseEnvelope(b("{}\n"), 10).events).toEqual([]);
  });

  it("refuses truncated or malformed envelopes", () => {
    for (const s of ["", "[]", "{}\n{\"type\":\"event\",\"length\":50}\n{}", "{}\n{\"length\":1}\n{", "{}\n{\"type\":\"event\",\"length\":\"2\"}\n{}", "{}\n{\"type\":\"event\"}"]) {
      expect(() => parseEnvelope(b(s), 100), s).toThrow(MalformedEnvelope);
    }
  });

  it("refuses an event item over the per-event limit", () => {
    expect(() => parseEnvelope(b(`{}\n{"type":"event"}\n{"m":"${"x".repeat(100)}"}`), 50)).toThrow(EventTooLarge);
    // other items are not held to it
    expect(parseEnvelope(b(`{}\n{"type":"attachment","length":100}\n${"x".repeat(100)}`), 50).skipped).toEqual(["attachment"]);
  });
});

describe("Sentry auth", () => {
  it("reads X-Sentry-Auth in any order and spacing", () => {
    expect(parseSentryAuth("Sentry sentry_version=7, sentry_client=raven-node/2.6.4, sentry_key=abc, sentry_secret=def").sentry_key).toBe("abc");
    expect(parseSentryAuth("Sentry sentry_key=abc,sentry_version=7").sentry_key).toBe("abc");
    expect(parseSentryAuth(null)).toEqual({});
  });

  it("takes the public key from a DSN", () => {
    expect(keyFromDsn("https://abc123@errors.example.com/42")).toBe("abc123");
    expect(keyFromDsn("https://abc123:secret@errors.example.com/42")).toBe("abc123");
    expect(keyFromDsn("not a url")).toBeUndefined();
    expect(keyFromDsn(7)).toBeUndefined();
  });
});

describe("a Sentry event's row", () => {
  const known = new KnownFingerprints();
  const rowOf = (raw: unknown) => toEventRow("00000000-0000-4000-8000-000000000001", mapSentryEvent(raw), Date.now(), 30, known) as EventRow;

  it("keeps context and breadcrumb data as sent when every text in them can be stored", () => {
    const contexts = { os: { name: "Roblox", nested: [{ a: "😀" }, 1, null, true] } };
    const row = rowOf({ message: "m", contexts, breadcrumbs: [{ message: "b", data: { k: ["v", { deep: "w" }] } }] });
    expect(row.context).toEqual({ contexts });
    expect(row.breadcrumbs).toEqual([{ level: "info", message: "b", data: { k: ["v", { deep: "w" }] } }]);
  });

  it("replaces NUL and unpaired surrogates at any depth of context and breadcrumb data, in keys and values", () => {
    const row = rowOf({
      message: "m",
      contexts: { os: { name: "ok", list: ["fine", { ["k\ud800"]: "v\u0000" }] } },
      extra: { plain: 1, ["\udc00"]: ["x\u0000y"] },
      breadcrumbs: [{ message: "b", data: { ok: "ok", bad: ["a", { b: "\ud800" }] } }],
    });
    expect(row.context).toEqual({ contexts: { os: { name: "ok", list: ["fine", { "k\ufffd": "v\ufffd" }] } }, extra: { plain: 1, "\ufffd": ["x\ufffdy"] } });
    expect(row.breadcrumbs).toEqual([{ level: "info", message: "b", data: { ok: "ok", bad: ["a", { b: "\ufffd" }] } }]);
  });
});
