import { describe, expect, it } from "vitest";
import { createRobloxServer } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";

/**
 * Economy requests and queue bounded by bytes, captures while a beforeSend yields, event ids,
 * ignoreErrors, the debug option, Sentry's level names and setExtra, in real Luau against the real
 * service. The service here takes economy bodies of up to 300,000 bytes (ECONOMY_MAX_BODY_BYTES),
 * so the SDK's byte bounds can be shown with profiles small enough for luau-web's memory.
 */
const ECONOMY_LIMIT = 300_000;
const t = sdkSuite({ ECONOMY_MAX_BODY_BYTES: String(ECONOMY_LIMIT) });
const { start, events } = t;

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Luau pushing players first..last, each with a profile of about `bytes` bytes of JSON. */
const pushPlayers = (first: number, last: number, bytes: number) => `
  local pushed = {}
  for id = ${first}, ${last} do
    pushed[id] = Monitor.economy.push({ UserId = id, Name = "p" .. id }, { RPCharacterOne = { Cash = id, Notes = string.rep("x", ${bytes}) } })
  end`;

const snapshots = async () =>
  (await t.app.sql<{ user_id: string }[]>`select user_id::text from economy_snapshots where project_id = ${t.projectId} order by user_id::bigint`).map((r) =>
    Number(r.user_id),
  );

const range = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);

describe("Roblox SDK economy bounds", () => {
  it("keeps each economy request under the body limit, so large profiles are not lost to a 413", async () => {
    // 100 profiles of ~5 KB: one request of ~500 KB would be over the service's limit
    await start(`maxEconomyRequestBytes = 250000`);
    expect(await t.rbx.run(`${pushPlayers(1, 100, 5000)} return Monitor.flush(10)`)).toBe(true);
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => r.status)).toEqual([200, 200, 200]);
    for (const r of economy) expect(Buffer.byteLength(r.body)).toBeLessThanOrEqual(250_000);
    expect(economy.map((r) => JSON.parse(r.body).players.length).reduce((a, b) => a + b)).toBe(100);
    expect(await snapshots()).toEqual(range(1, 100));
    expect(t.rbx.warnings).toEqual([]);
  });

  it("bounds the economy queue by bytes (oldest dropped and counted) and refuses a profile no request could carry", async () => {
    await start(`maxEconomyRequestBytes = 250000, maxEconomyQueueBytes = 100000`);
    const result = (await t.rbx.run(`
      ${pushPlayers(1, 40, 5000)}
      local huge = Monitor.economy.push({ UserId = 99, Name = "big" }, { RPCharacterOne = { Cash = 1, Notes = string.rep("y", 260000) } })
      local status = Monitor.status()
      Monitor.captureMessage("after the economy", "info")
      return { huge = tostring(huge), all = pushed[1] and pushed[40], queued = status.economyQueued, flushed = Monitor.flush(10) }
    `)) as Record<string, unknown>;
    expect([result.huge, result.all, result.flushed]).toEqual(["false", true, true]);
    const kept = await snapshots();
    // the newest pushes that fit in 100,000 bytes, in one request
    expect(kept.length).toBe(result.queued);
    expect(kept.length).toBeGreaterThanOrEqual(15);
    expect(kept.length).toBeLessThan(20);
    expect(kept).toEqual(range(41 - kept.length, 40));
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => r.status)).toEqual([200]);
    expect(Buffer.byteLength(economy[0].body)).toBeLessThanOrEqual(100_000 + 100);
    // one warning, for the refused profile; the pushes dropped from the queue and the refused one are reported
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/economy profile of 99 is \d+ bytes of JSON, over the 100000 a push may take, and was not pushed/);
    expect(reportedLosses(t.rbx.requests)).toEqual({ "economy:queue_overflow": 40 - kept.length, "economy:too_large": 1 });
  });
});

describe("Roblox SDK captures", () => {
  it("keeps capturing on other threads while a beforeSend yields, and ignores a capture made inside beforeSend", async () => {
    await start(`beforeSend = function(event)
      if event.message == "slow" then
        task.wait(5)
        -- a capture from inside beforeSend, on the same thread, is ignored (no loop)
        event.context = { inner = Monitor.captureMessage("from beforeSend", "error") == nil }
      end
      return event
    end`);
    const ids = (await t.rbx.run(`
      local slowId
      task.spawn(function() slowId = Monitor.captureMessage("slow", "error") end)
      local meanwhile = Monitor.captureMessage("meanwhile", "error")
      local exception = Monitor.captureException("meanwhile too", "ServerScriptService.Shop:3\\n")
      task.wait(6)
      assert(Monitor.flush(10))
      return { slow = slowId, meanwhile = meanwhile, exception = exception }
    `)) as Record<string, string>;
    const rows = await t.app.sql<{ message: string; event_id: string; context: any }[]>`
      select message, event_id::text, context from events where project_id = ${t.projectId} order by message`;
    expect(rows.map((e) => e.message)).toEqual(["meanwhile", "meanwhile too", "slow"]);
    expect(Object.fromEntries(rows.map((e) => [e.message, e.event_id]))).toEqual({ meanwhile: ids.meanwhile, "meanwhile too": ids.exception, slow: ids.slow });
    expect(rows[2].context).toEqual({ inner: true });
  });

  it("returns event ids the service stores (a folded repeat gets its event's id; a dropped one nil)", async () => {
    await start(`beforeSend = function(event) if event.message == "drop me" then return nil end return event end`);
    const ids = (await t.rbx.run(`
      local first = Monitor.captureException("boom", "ServerScriptService.Game:1\\n")
      local second = Monitor.captureException("boom", "ServerScriptService.Game:1\\n")
      local other = Monitor.captureMessage("other", "info")
      local dropped = Monitor.captureMessage("drop me", "error")
      assert(Monitor.flush(10))
      local later = Monitor.captureException("boom", "ServerScriptService.Game:1\\n")
      assert(Monitor.flush(10))
      return { first = first, second = second, other = other, dropped = dropped == nil, later = later }
    `)) as Record<string, any>;
    expect(ids.first).toMatch(GUID);
    expect(ids.second).toBe(ids.first);
    expect(ids.other).toMatch(GUID);
    expect(ids.later).toMatch(GUID);
    expect(new Set([ids.first, ids.other, ids.later]).size).toBe(3);
    expect(ids.dropped).toBe(true);
    const rows = await t.app.sql<{ message: string; event_id: string; count: number; group_id: string }[]>`
      select message, event_id::text, count, group_id from events where project_id = ${t.projectId} order by id`;
    expect(rows.map((e) => [e.message, e.event_id, e.count]).sort()).toEqual(
      [
        ["boom", ids.first, 2],
        ["boom", ids.later, 1],
        ["other", ids.other, 1],
      ].sort(),
    );
    const page = await t.app.request(`/api/v1/errors/${rows.find((e) => e.message === "boom")!.group_id}/events`, { headers: { "x-api-key": t.apiKey } });
    expect(new Set((await page.json()).data.map((e: any) => e.event_id))).toEqual(new Set([ids.first, ids.later]));
  });

  it("drops events matching ignoreErrors (plain substrings and { pattern = ... }), wherever they come from", async () => {
    await start(`ignoreErrors = { "Infinite yield", "a.b", "", { pattern = "^Timeout %d+" }, { pattern = "[" }, 42 }`);
    const results = (await t.rbx.run(`
      return table.concat({
        Monitor.captureMessage("Infinite yield possible on 'Workspace:WaitForChild(\\"Map\\")'", "warn") == nil and "ignored" or "kept",
        Monitor.captureMessage("Timeout 30 s", "error") == nil and "ignored" or "kept",
        Monitor.captureMessage("a Timeout 30 s", "error") == nil and "ignored" or "kept",
        Monitor.captureMessage("axb happened", "error") == nil and "ignored" or "kept",
        Monitor.captureMessage("a.b happened", "error") == nil and "ignored" or "kept",
      }, " ")
    `)) as string;
    expect(results).toBe("ignored ignored kept kept ignored");
    await t.rbx.fireError("ServerScriptService.Map:4: Infinite yield possible on 'X'", "ServerScriptService.Map:4\n", "ServerScriptService.Map");
    await t.rbx.fireError("ServerScriptService.Map:5: kept", "ServerScriptService.Map:5\n", "ServerScriptService.Map");
    await t.rbx.addPlayer(555, "Player555");
    await t.rbx.fireRemote(555, { message: "Timeout 5 from the client" });
    await t.rbx.fireRemote(555, { message: "client kept" });
    await t.rbx.advance(1);
    await t.rbx.run(`return Monitor.flush(10)`);
    expect((await events()).map((e) => e.message).sort()).toEqual(["ServerScriptService.Map:5: kept", "a Timeout 30 s", "axb happened", "client kept"]);
    // the invalid pattern and the entry of another kind, once each
    expect(t.rbx.warnings).toHaveLength(2);
    expect(t.rbx.warnings.join("\n")).toMatch(/ignoreErrors: the pattern "\[" is skipped/);
    expect(t.rbx.warnings.join("\n")).toMatch(/ignoreErrors takes strings and \{ pattern = "\.\.\." \} tables/);
  });

  it("sends Sentry's level names as the service's levels (fatal and debug kept in a tag), and setExtra sets context", async () => {
    await start();
    await t.rbx.run(`
      Monitor.setExtra("round", 3)
      Monitor.setExtra("gone", "soon")
      Monitor.setExtra("gone", nil)
      for _, level in { "fatal", "error", "warning", "warn", "info", "debug", "WARNING", "Fatal", "bogus" } do
        Monitor.captureMessage("level " .. level, level :: any)
      end
      Monitor.captureMessage("level none")
      Monitor.captureMessage("fatal with tags", "fatal", { tags = { "shop" }, item = "Sword" })
      return Monitor.flush(10)
    `);
    const rows = Object.fromEntries((await events()).map((e) => [e.message, [e.level, e.tags, e.context]]));
    const round = { round: 3 };
    expect(rows).toEqual({
      "level fatal": ["error", ["level:fatal"], round],
      "level error": ["error", null, round],
      "level warning": ["warn", null, round],
      "level warn": ["warn", null, round],
      "level info": ["info", null, round],
      "level debug": ["info", ["level:debug"], round],
      "level WARNING": ["warn", null, round],
      "level Fatal": ["error", ["level:fatal"], round],
      "level bogus": ["info", null, round],
      "level none": ["info", null, round],
      "fatal with tags": ["error", ["level:fatal", "shop"], { round: 3, item: "Sword" }],
    });
  });

  it("prints, with debug, what is sent and why each drop happened, and captures none of it", async () => {
    await start(`debug = true, captureWarnings = true, maxQueueSize = 3, ignoreErrors = { "ignored" },
      beforeSend = function(event)
        if event.message == "vetoed" then return nil end
        -- a trace id the service would refuse: sent in the context instead
        if event.message == "bad trace" then event.trace_id = "not-a-uuid" end
        return event
      end`);
    await t.rbx.run(`
      Monitor.captureMessage("ignored here", "error")
      Monitor.captureMessage("vetoed", "error")
      local id = Monitor.captureMessage("twice", "error")
      Monitor.captureMessage("twice", "error")
      Monitor.captureMessage("one", "error")
      Monitor.captureMessage("two", "error")
      Monitor.captureMessage("three", "error")
      assert(Monitor.flush(10))
      Monitor.captureMessage("bad trace", "error")
      Monitor.flush(10)
      Monitor.economy.push({ UserId = 7, Name = "p7" }, { RPCharacterOne = { Cash = 1 } })
      Monitor.flush(10)
    `);
    const prints = t.rbx.prints.filter((p) => p.startsWith("[RobloxMonitor]"));
    const has = (re: RegExp) => expect(prints.some((p) => re.test(p)), `${re} in\n${prints.join("\n")}`).toBe(true);
    has(/dropped \(ignoreErrors "ignored"\): "ignored here"/);
    has(/dropped \(beforeSend returned nil\): "vetoed"/);
    has(/queued event [0-9a-f-]{36} \(error\): "twice"/);
    has(/folded into waiting event [0-9a-f-]{36} \(count 2\): "twice"/);
    has(/queue full \(maxQueueSize 3\): dropped 1 oldest event\(s\)/);
    has(/POST \/api\/ingest \(3 events, 3 occurrences, \d+ bytes\): sent$/);
    has(/POST \/api\/ingest \(1 event, 1 occurrence, \d+ bytes\): sent$/);
    has(/POST \/api\/economy\/ingest \(1 economy snapshot, \d+ bytes\): sent$/);
    // prints are not warnings: nothing of the SDK's own output became an event
    expect((await events()).map((e) => e.message).sort()).toEqual(["bad trace", "one", "three", "two"]);
    expect((await events()).find((e) => e.message === "bad trace")).toMatchObject({ trace_id: null, context: { trace: "not-a-uuid" } });

    // sampled out, on a server that keeps nothing
    t.rbx = await createRobloxServer();
    await t.rbx.run(`Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)}, debug = true, sampleRate = 0 })
      return Monitor.captureMessage("sampled", "error") == nil`);
    expect(t.rbx.prints).toContain("[RobloxMonitor] dropped an occurrence: sampled out (sampleRate)");
  });
});
