import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { LuauState } from "luau-web";
import { parseNativeBody } from "../../app/ingest/native.server.js";
import { bundleSdk } from "../../app/sdk/bundle.js";
import { readSdkSources } from "../../app/sdk/sources.server.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/**
 * One rule set: the SDK makes every event what the service takes (Validate.luau), whatever the game
 * or its beforeSend hands it. A corpus of hostile events runs through the SDK (as what beforeSend
 * returns, and as what the game passes to captureException/captureMessage) and through the service's
 * validator; no request may be refused, every event sent must pass the validator, and every captured
 * event must be stored.
 */
const t = sdkSuite({ THROTTLE_LIMIT: "100000" });
const { start } = t;

/** Luau source for a string of any bytes (JS strings are written as UTF-8; `bytes` as they are). */
const luaBytes = (bytes: Uint8Array) => `"${Array.from(bytes, (b) => `\\${b}`).join("")}"`;
const lua = (s: string) => luaBytes(Buffer.from(s, "utf8"));

// the characters String.prototype.trim removes, and two Unicode spaces it keeps (U+0085, U+180E)
const JS_BLANKS = ["\t", "\n", "\v", "\f", "\r", " ", "\u00a0", "\u1680", ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i)), "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff"];
const UUID = "0F8FAD5B-D9CB-469F-A165-70867728950E";

/** Context entries `a1`…`a9` whose JSON (as the service measures it) is exactly `bytes`. */
function contextOf(bytes: number): string {
  const entries = Array.from({ length: 9 }, (_, i) => `a${i + 1}`);
  // {"a1":"…",…}: 2 braces, 8 commas, and per entry the key, 2 quotes, a colon, 2 quotes
  const overhead = 2 + 8 + entries.length * (2 + 2 + 1 + 2);
  const text = bytes - overhead;
  const per = Math.floor(text / entries.length);
  const sizes = entries.map((_, i) => (i === 0 ? text - per * (entries.length - 1) : per));
  // the first entry holds a quote and a control character: 2 and 6 bytes of JSON each
  return `{ ${entries.map((k, i) => `${k} = ${i === 0 ? `"\\"\\1" .. string.rep("x", ${sizes[i] - 8})` : `string.rep("é", ${sizes[i] / 2})`}`).join(", ")} }`;
}
/** Levels of a table, each pointing 4 times at the next (shared, not cyclic). */
const sharedLevels = (depth: number) =>
  `(function() local node = { leaf = "x" } for d = 1, ${depth} do local parent = {} for r = 1, 4 do parent["r" .. r] = node end node = parent end return node end)()`;
const SHARED = sharedLevels(7);
const CYCLE = `(function() local a = { name = "a" } a.self = a a.list = { a, a } return a end)()`;
const DEEP = `(function() local root = {} local node = root for i = 1, 40 do node.next = {} node = node.next end return root end)()`;

/** beforeSend edits, each a Luau statement on the event `e` (or returning another event). */
const EDITS: string[] = [
  // item 5 of the issue: a level the service does not have, a NaN in context
  `e.level = "fatal"`,
  `e.level = "critical"`,
  `e.level = 5`,
  `e.level = ${lua("\u3000 WARNING\u00a0")}`,
  `e.context = { hp = 0 / 0, inf = math.huge, ninf = -math.huge, list = { 1, 0 / 0, 3 } }`,
  // messages blank by Unicode, or not (U+0085 and U+180E are not trimmed by the service)
  ...JS_BLANKS.map((c) => `e.message = ${lua(c.repeat(3))}`),
  `e.message = ${lua(JS_BLANKS.join(""))}`,
  `e.message = ${lua("\u0085")}`,
  `e.message = ${lua("\u180e")}`,
  `e.message = nil`,
  `e.message = 42`,
  `e.message = {}`,
  `e.message = "bad \\255\\254 bytes"`,
  `e.message = "lone surrogate \\237\\160\\128 and overlong \\192\\128"`,
  `e.message = string.rep("é", 5000)`,
  `e.message = string.rep(" ", 8192) .. "x"`,
  `e.message = string.rep(" ", 8191) .. "é"`,
  // ids
  ...["-1", "1.5", "2^53", "2^63", "2^64", "2^63 - 1024", `"  123  "`, `"9223372036854775807"`, `"9223372036854775808"`, `"00012"`, `"12a"`, `""`, `"\\u{3000}7\\u{3000}"`, "0 / 0", "math.huge", "{}", "true"].flatMap((v) => [`e.user_id = ${v}`, `e.place_id = ${v}`]),
  // UUIDs
  ...[`"not-a-uuid"`, `"{${UUID}"`, `"{${UUID}}"`, `" ${UUID} "`, `"${UUID}}"`, "5", "{}"].flatMap((v) => [`e.trace_id = ${v}`, `e.event_id = ${v}`]),
  `e.event_id = nil`,
  // short texts at their limits, counted in UTF-16 units (é: 1 unit, 2 bytes; 😀: 2 units, 4 bytes)
  ...["player_name", "job_id", "game_version", "environment"].flatMap((f) => [
    `e.${f} = string.rep("é", 256)`,
    `e.${f} = string.rep("é", 257)`,
    `e.${f} = string.rep("x", 255) .. "😀"`,
    `e.${f} = string.rep("😀", 129)`,
    `e.${f} = 5`,
    `e.${f} = {}`,
    `e.${f} = "\\255"`,
  ]),
  `e.game_version = 0 / 0`,
  `e.game_version = 1.5`,
  `e.environment = ""`,
  `e.environment = ${lua("\u3000\ufeff")}`,
  // context
  `e.context = "a string"`,
  `e.context = { 1, 2, 3 }`,
  `e.context = {}`,
  `e.context = { [game:GetService("ReplicatedStorage")] = 1, [true] = 2, [1.5] = 3, [1] = "one" }`,
  `e.context = { f = print, inst = game:GetService("ReplicatedStorage"), th = coroutine.create(print), mixed = { 1, 2, a = 1 } }`,
  `e.context = { shared = ${SHARED} }`,
  `e.context = { cycle = ${CYCLE} }`,
  `e.context = { deep = ${DEEP} }`,
  `e.context = (function() local c = {} for i = 1, 100 do c["k" .. i] = string.rep("y", 1000) end return c end)()`,
  `e.context = ${contextOf(16 * 1024)}`,
  `e.context = ${contextOf(16 * 1024 + 1)}`,
  `e.context = ${contextOf(16 * 1024 - 1)}`,
  `e.context = setmetatable({ a = 1 }, { __index = function() error("no") end, __iter = function() error("no") end })`,
  // tags
  `e.tags = "one"`,
  `e.tags = { 5, true, {}, "ok", print }`,
  `e.tags = { shop = "Armory", [1] = "a" }`,
  `e.tags = (function() local t = {} for i = 1, 60 do t[i] = "t" .. i end return t end)()`,
  `e.tags = { string.rep("é", 200), string.rep("é", 201), string.rep("😀", 100), string.rep("😀", 101), "\\255" }`,
  `e.tags = { [1] = "a", [3] = "c" }`,
  // timestamps
  ...[`"bad"`, `"2026-02-30T10:00:00Z"`, `"1969-12-31T23:59:59Z"`, `"1970-01-01T00:30:00+01:00"`, `"2026-11-29 10:00:00Z"`, "5", `"2026-11-29T10:00:00+05:00"`, `"0000-01-01T00:00:00Z"`, `"9999-12-31T23:59:59.999Z"`, `"2026-11-29T24:00:00Z"`, `"2026-11-29T10:00:00.1234567891Z"`].map((v) => `e.timestamp = ${v}`),
  // counts
  ...["0", "1001", "0 / 0", `"5"`, "-3", "2.7", "math.huge", "{}", `"abc"`].map((v) => `e.count = ${v}`),
  // fingerprints
  ...[`""`, "{}", `{ "a", 5 }`, `string.rep("x", 501)`, `(function() local t = {} for i = 1, 21 do t[i] = "p" .. i end return t end)()`, "{ a = 1 }", "{ {} }", "5", `{ "", string.rep("é", 500) }`].map((v) => `e.fingerprint = ${v}`),
  // breadcrumbs
  ...[
    `"x"`,
    "{ 1, 2 }",
    `(function() local t = {} for i = 1, 150 do t[i] = { message = "m" .. i } end return t end)()`,
    `{ { message = "a", level = "bogus", timestamp = "yesterday" }, { category = "c", level = ${lua(" WARN\u3000")} } }`,
    `{ { data = { x = 0 / 0, f = print } }, { data = "string" }, { data = {} }, {} }`,
    `{ { data = (function() local d = {} for i = 1, 10 do d["k" .. i] = string.rep("z", 500) end return d end)() } }`,
    `{ { message = string.rep("é", 2049), category = string.rep("é", 129) } }`,
    `(function() local t = {} for i = 1, 100 do t[i] = { message = string.rep("w", 2000) } end return t end)()`,
    `{ { data = { shared = ${SHARED} } } }`,
  ].map((v) => `e.breadcrumbs = ${v}`),
  // whole events
  `e = { message = "replaced" }`,
  `e = {}`,
  `e = setmetatable({ message = "with a metatable", level = "info" }, { __index = function() error("no") end })`,
  `e = table.freeze({ message = "frozen", level = "warning", count = 2 })`,
  `e.unknown = print e.also = { 0 / 0 }`,
  `do return "a string" end`,
  `do return 5 end`,
];

/** Each sent event checked against the service's validator; every request answered 2xx. */
function checkSent() {
  const ingest = t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"));
  expect(ingest.length).toBeGreaterThan(0);
  expect(ingest.map((r) => r.status).filter((s) => typeof s !== "number" || s < 200 || s >= 300)).toEqual([]);
  const sent = ingest.flatMap((r) => JSON.parse(r.body).errors as Record<string, unknown>[]);
  for (const event of sent) expect(() => parseNativeBody(event), JSON.stringify(event).slice(0, 300)).not.toThrow();
  return sent;
}

/** Every id a capture returned is an event stored on the service. */
async function expectStored(ids: string[]) {
  expect(ids.every((id) => typeof id === "string")).toBe(true);
  const rows = await t.app.sql<{ event_id: string }[]>`select event_id::text from events where project_id = ${t.projectId}`;
  const stored = new Set(rows.map((r) => r.event_id));
  expect(ids.filter((id) => !stored.has(id))).toEqual([]);
}

describe("Roblox SDK and the service agree on what an event may hold", () => {
  it("sends nothing the service refuses, whatever beforeSend returns", async () => {
    await start(`beforeSend = (function()
      local edits = { ${EDITS.map((edit) => `function(e) ${edit} return e end`).join(",\n")} }
      return function(e)
        local i = tonumber(string.match(e.message, "^case (%d+)$"))
        return if i then edits[i](e) else e
      end
    end)()`);
    const ids = (await t.rbx.run(`
      local ids = {}
      for i = 1, ${EDITS.length} do
        ids[i] = Monitor.captureMessage("case " .. i, "error") or "dropped"
      end
      assert(Monitor.flush(30))
      return table.concat(ids, ",")
    `)) as string;
    const sent = checkSent();
    expect(sent.length).toBeGreaterThan(EDITS.length / 2);
    await expectStored(ids.split(","));
    // blank by Unicode is "(empty message)"; U+0085 and U+180E are text to the service, and are kept
    const messages = sent.map((e) => e.message);
    expect(messages).toContain("(empty message)");
    expect(messages).toContain("\u0085");
    expect(messages).toContain("\u180e");
    expect(sent.find((e) => (e.tags as string[] | undefined)?.includes("level:fatal"))).toMatchObject({ level: "error" });
    expect(t.rbx.warnings.filter((w) => !w.includes("beforeSend raised"))).toEqual([]);
  });

  it("sends nothing the service refuses, whatever the game passes to captureException and captureMessage", async () => {
    await start();
    await t.rbx.addPlayer(555, "Player555");
    const ids = (await t.rbx.run(`
      local storage = game:GetService("ReplicatedStorage")
      local ids = {}
      local function keep(id) table.insert(ids, id or "dropped") end
      -- item 1 of the issue: a message blank by Unicode only
      for _, blank in { ${JS_BLANKS.map(lua).join(", ")} } do
        keep(Monitor.captureMessage(blank, "error"))
        keep(Monitor.captureException(blank .. blank))
      end
      keep(Monitor.captureMessage(nil))
      keep(Monitor.captureMessage({}, "FATAL"))
      keep(Monitor.captureMessage("level of another kind", 5))
      keep(Monitor.captureException(setmetatable({}, { __tostring = function() error("no") end })))
      keep(Monitor.captureException("bad \\255 bytes", "stack \\254"))
      keep(Monitor.captureException("traceback of another kind", 5, "extra of another kind"))
      keep(Monitor.captureException("hostile extra", {
        nan = 0 / 0, inst = storage, fn = print, [storage] = 1, [1] = "a", mixed = { 1, 2, a = 3 },
        tags = { {}, 5, string.rep("é", 300), "\\255" }, traceId = "not-a-uuid",
        player = { UserId = -5, Name = string.rep("n", 300) },
      }))
      keep(Monitor.captureException("player of another kind", { player = { UserId = 2 ^ 60, Name = {} } }))
      keep(Monitor.captureException("shared subtables", { shared = ${SHARED} }))
      keep(Monitor.captureException("few shared subtables", { shared = ${sharedLevels(3)} }))
      keep(Monitor.captureException("cycle", { cycle = ${CYCLE}, deep = ${DEEP} }))
      keep(Monitor.captureException("huge", (function() local c = {} for i = 1, 100 do c["k" .. i] = string.rep("y", 1000) end return c end)()))
      keep(Monitor.captureMessage("context one over", "info", ${contextOf(16 * 1024 + 1)}))
      Monitor.setContext("server", { nan = 0 / 0 })
      Monitor.setTag(${lua("k\u3000")}, string.rep("é", 300))
      local _, scoped = Monitor.withScope({ traceId = "bad", tags = { string.rep("😀", 150) }, extra = { f = print } }, function()
        return Monitor.captureMessage("in a scope", "debug")
      end)
      keep(scoped)
      -- a client relaying a blank message (item 1 through the RemoteEvent)
      local remote = storage:FindFirstChild("RobloxMonitorClientErrors")
      local player = game:GetService("Players"):FindFirstChild("Player555")
      remote.OnServerEvent:Fire(player, { message = "\\u{3000}" })
      remote.OnServerEvent:Fire(player, { message = "client \\u{3000}" })
      task.wait(1)
      assert(Monitor.flush(30))
      return table.concat(ids, ",")
    `)) as string;
    checkSent();
    await expectStored(ids.split(","));
    const rows = await t.app.sql<{ message: string; context: any }[]>`select message, context from events where project_id = ${t.projectId}`;
    expect(rows.find((r) => r.message === "client \u3000")).toBeDefined();
    // item 9 of the issue: a context whose levels point 4 times at the next is copied once a level
    // (4^7 leaves are far over 16 KiB of JSON: left out, named; 4^3 are written out in full)
    expect(rows.find((r) => r.message === "shared subtables")!.context).toEqual({ context_dropped: "larger than 16 KiB: shared" });
    expect(rows.find((r) => r.message === "few shared subtables")!.context.shared.r1.r4).toEqual({ r1: { leaf: "x" }, r2: { leaf: "x" }, r3: { leaf: "x" }, r4: { leaf: "x" } });
    expect(rows.find((r) => r.message === "context one over")!.context.context_dropped).toMatch(/^larger than 16 KiB: a\d(, a\d)*$/);
    expect(t.rbx.warnings).toEqual([]);
  });

  it("agrees with the service's validator on generated events, fixing what it would refuse and keeping what it takes", async () => {
    // JSON-shaped events with fields of every kind: what the service refuses, the SDK fixes; what it
    // takes, the SDK sends as the service reads it
    const text = fc.oneof(
      fc.string({ unit: "grapheme", maxLength: 20 }),
      fc.constantFrom(...JS_BLANKS, "\u0085", "\u180e", "WARNING", " info ", "fatal", UUID, `{${UUID}}`, "123", " 42 ", "9223372036854775808"),
      fc.array(fc.constantFrom(...JS_BLANKS, "x", "é", "😀"), { maxLength: 8 }).map((a) => a.join("")),
    );
    const scalar = fc.oneof(text, fc.integer({ min: -5, max: 2 ** 40 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
    const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.dictionary(text, scalar, { maxKeys: 4 }));
    const event = fc.record(
      {
        message: value, level: value, stack_trace: value, user_id: value, place_id: value, player_name: value, job_id: value,
        game_version: value, environment: value, trace_id: value, event_id: value, context: value, tags: value,
        timestamp: fc.oneof(value, fc.date({ noInvalidDate: true }).map((d) => d.toISOString())), count: value, fingerprint: value,
        breadcrumbs: fc.array(fc.dictionary(fc.constantFrom("message", "category", "level", "timestamp", "data"), value), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    const generated = fc.sample(event, { numRuns: 120, seed: 38 });
    const toLua = (v: unknown): string => {
      if (typeof v === "string") return lua(v);
      if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
      if (typeof v === "boolean") return String(v);
      if (Array.isArray(v)) return `{ ${v.map(toLua).join(", ")} }`;
      return `{ ${Object.entries(v as object).map(([k, x]) => `[${lua(k)}] = ${toLua(x)}`).join(", ")} }`;
    };
    const refusedRaw = generated.filter((e) => {
      try {
        parseNativeBody({ message: "m", ...e });
        return false;
      } catch {
        return true;
      }
    }).length;
    expect(refusedRaw).toBeGreaterThan(generated.length / 2);
    await start(`beforeSend = (function()
      local generated = { ${generated.map((e) => `function() return ${toLua(e)} end`).join(",\n")} }
      return function(e)
        local i = tonumber(string.match(e.message, "^generated (%d+)$"))
        return if i then generated[i]() else e
      end
    end)()`);
    const ids = ((await t.rbx.run(`
      local ids = {}
      for i = 1, ${generated.length} do ids[i] = Monitor.captureMessage("generated " .. i) or "dropped" end
      assert(Monitor.flush(30))
      return table.concat(ids, ",")
    `)) as string).split(",");
    const sent = checkSent();
    await expectStored(ids);
    // what the service takes as it is, the SDK sends as the service reads it
    const byId = new Map(sent.map((e) => [e.event_id as string, e]));
    generated.forEach((raw, i) => {
      // a repeat folded into another generated event is that event
      if (ids.indexOf(ids[i]) !== ids.lastIndexOf(ids[i])) return;
      const mine = byId.get(ids[i]);
      if (!mine || typeof raw.message !== "string") return;
      let theirs;
      try {
        [theirs] = parseNativeBody(raw);
      } catch {
        return;
      }
      const [ours] = parseNativeBody(mine);
      if (Buffer.byteLength(raw.message) <= 8192) expect(ours.message, `generated ${i + 1}`).toBe(theirs.message);
      expect(ours.level, `generated ${i + 1}`).toBe(theirs.level);
      expect(ours.userId, `generated ${i + 1}`).toBe(theirs.userId);
      expect(ours.traceId, `generated ${i + 1}`).toBe(theirs.traceId);
    });
  });

  it("measures as the service does: JSON sizes in bytes, lengths in UTF-16 units, blanks as JavaScript trims", async () => {
    // the SDK's own modules, in plain Luau: a bundle whose entry hands out Validate and JsonSafe
    const sources = { ...readSdkSources(), init: `--!strict\nreturn { Validate = require(script.Validate), JsonSafe = require(script.JsonSafe) }` };
    const state = await LuauState.createAsync({});
    const run = async (source: string) => {
      const loaded = (await state.loadstring(bundleSdk(sources, "test"), "=sdk", true)()) as [unknown];
      return (await state.loadstring(`local sdk = ...\nlocal Validate, JsonSafe = sdk.Validate, sdk.JsonSafe\n${source}`, "=check", true)(loaded[0])) as unknown[];
    };
    // numbers: JSON.stringify's length from Luau's digits
    const numbers = fc.sample(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.constantFrom(1e21, 1e-7, 1e-6, 123456789012345680, 2 ** 53, -0, 5e-324)), { numRuns: 300, seed: 38 });
    const [numberSizes] = await run(`local out = {} for i, n in { ${numbers.map((n) => (Object.is(n, -0) ? "-0" : String(n))).join(", ")} } do out[i] = JsonSafe.numberSize(n) end return table.concat(out, ",")`);
    expect(String(numberSizes).split(",").map(Number)).toEqual(numbers.map((n) => JSON.stringify(n).length));
    // strings: valid UTF-8 as JSON.stringify writes it, cut by UTF-16 units, blank as trim() says
    const texts = fc.sample(fc.oneof(fc.string({ unit: "binary", maxLength: 30 }), fc.array(fc.constantFrom(...JS_BLANKS, "\u0085", "\u180e", "x", "é", "😀", "\"", "\\", "\u0001", "\n"), { maxLength: 10 }).map((a) => a.join(""))), { numRuns: 300, seed: 38 }).map((x) => Buffer.from(x, "utf8").toString("utf8"));
    const [measured] = await run(`local out = {} for i, s in { ${texts.map(lua).join(", ")} } do
      out[i] = JsonSafe.stringSize(s) .. ":" .. JsonSafe.cutUnits(s, 7) .. ":" .. tostring(Validate.isBlank(s)) .. ":" .. Validate.trim(s)
    end return table.concat(out, "\\0")`);
    const cutUnits = (x: string, max: number) => {
      let out = "";
      for (const ch of x) {
        if (out.length + ch.length > max) break;
        out += ch;
      }
      return out;
    };
    expect(String(measured).split("\0")).toEqual(texts.map((x) => `${Buffer.byteLength(JSON.stringify(x))}:${cutUnits(x, 7)}:${x.trim() === ""}:${x.trim()}`));
    // a context at the service's limit is kept whole, one byte over loses its largest entry
    const [kept, over, under] = await run(`
      local function keys(c) local n = 0 for _ in c do n += 1 end return n end
      return keys(Validate.event({ message = "m", context = ${contextOf(16 * 1024)} }).context),
        Validate.event({ message = "m", context = ${contextOf(16 * 1024 + 1)} }).context.context_dropped,
        keys(Validate.event({ message = "m", context = ${contextOf(16 * 1024 - 1)} }).context)`);
    // (what is left out makes room for the entry naming it)
    expect([kept, over, under]).toEqual([9, "larger than 16 KiB: a1, a2", 9]);
    // timestamps the SDK keeps are timestamps the service takes, and at or after 1970
    const times = fc.sample(fc.oneof(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()), fc.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,10})?)?(Z|[+-]\d{2}:\d{2})$/)), { numRuns: 400, seed: 38 });
    const [keptTimes] = await run(`local out = {} for i, s in { ${times.map(lua).join(", ")} } do out[i] = tostring(Validate.isTimestamp(s)) end return table.concat(out, ",")`);
    String(keptTimes).split(",").forEach((k, i) => {
      if (k === "true") expect(() => parseNativeBody({ message: "m", timestamp: times[i] }), times[i]).not.toThrow();
    });
  });
});
