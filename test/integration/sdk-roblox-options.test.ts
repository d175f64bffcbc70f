import { describe, expect, it } from "vitest";
import { luaString, sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";
import { notHealth } from "../support/roblox.js";

/** The SDK's options and calls that no other file covers, in real Luau against the real service. */
const t = sdkSuite();
const { start, events, groups } = t;

const json = async (source: string) => JSON.parse((await t.rbx.run(source)) as string);
const occurrences = async () => (await groups()).reduce((sum, g) => sum + Number(g.count), 0);

describe("Roblox SDK options", () => {
  it("sampleRate 0 sends no event, only the count of what it sampled out, and 1 sends everything", async () => {
    expect(await start("sampleRate = 0")).toBe(true);
    await t.rbx.fireError("ServerScriptService.A:1: sampled out", "", "ServerScriptService.A", 50);
    await t.rbx.run(`for i = 1, 50 do Monitor.captureMessage("sampled out " .. i, "error") end return Monitor.flush(10)`);
    await t.rbx.advance(30);
    // a count of 0 must mean nothing was lost: the 100 occurrences sampled out are reported, alone
    expect(t.rbx.requests.filter(notHealth).map((r) => new URL(r.url).pathname)).toEqual(["/api/client-reports"]);
    expect(await t.app.sql`select category, reason, quantity::int from sdk_discards where project_id = ${t.projectId}`).toEqual([
      { category: "error", reason: "sample_rate", quantity: 100 },
    ]);
    expect(await occurrences()).toBe(0);

    expect(await start("sampleRate = 1")).toBe(true);
    await t.rbx.fireError("ServerScriptService.A:1: kept", "", "ServerScriptService.A", 50);
    await t.rbx.run(`for i = 1, 50 do Monitor.captureMessage("kept " .. i, "error") end return Monitor.flush(10)`);
    expect(await occurrences()).toBe(100);
  });

  it("sampleRate 0.25 keeps about a quarter of many occurrences", async () => {
    expect(await start("sampleRate = 0.25")).toBe(true);
    await t.rbx.run(`
      math.randomseed(1818)
      for i = 1, 800 do Monitor.captureMessage("sampled " .. i, "error") end
      return Monitor.flush(30)
    `);
    const kept = await occurrences();
    // seeded: 800 draws at 0.25 give 200 on average, with a standard deviation of about 12
    expect(kept).toBeGreaterThan(140);
    expect(kept).toBeLessThan(260);
  });

  it("close flushes what is queued, stops capturing, and a later init starts again", async () => {
    expect(await start()).toBe(true);
    await t.rbx.fireError("ServerScriptService.A:1: before close", "", "ServerScriptService.A");
    expect(await t.rbx.run(`return Monitor.close(10)`)).toBe(true);
    expect((await events()).map((e) => e.message)).toEqual(["ServerScriptService.A:1: before close"]);
    const sent = t.rbx.requests.length;
    await t.rbx.fireError("ServerScriptService.A:1: after close", "", "ServerScriptService.A");
    await t.rbx.run(`Monitor.captureMessage("after close") Monitor.economy.push({ UserId = 5, Name = "p" }, { Cash = 1 })`);
    await t.rbx.advance(60);
    expect(t.rbx.requests).toHaveLength(sent);
    expect(await t.rbx.run(`return Monitor.status().running`)).toBe(false);
    // flush and close without init are harmless
    expect(await t.rbx.run(`return Monitor.flush(1) and Monitor.close(1)`)).toBe(true);

    expect(await t.rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)} })`)).toBe(true);
    await t.rbx.run(`Monitor.captureMessage("after a new init", "info") return Monitor.flush(10)`);
    expect((await events()).map((e) => e.message)).toEqual(["ServerScriptService.A:1: before close", "after a new init"]);
    expect(t.rbx.warnings).toEqual([]);
  });

  it("captureException takes the caller's traceback by default, or the one given, and extra's player, tags, traceId and context", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(900, "Trader");
    const traceId = await t.rbx.run(`
      local function handlePurchase()
        Monitor.captureException("ServerScriptService.Shop:12: purchase failed")
      end
      handlePurchase()
      local traceId = Monitor.newTraceId()
      Monitor.captureException(setmetatable({}, { __tostring = function() return "custom error object" end }), "Given.Traceback:1\\n", {
        player = mock.player(900), tags = { "shop" }, traceId = traceId, item = "Sword", price = 0 / 0,
      })
      assert(Monitor.flush(10))
      return traceId
    `);
    const rows = await events();
    const byDefault = rows.find((e) => e.message === "ServerScriptService.Shop:12: purchase failed");
    expect(byDefault.stack_trace).toMatch(/ServerScriptService\.Test\d+:\d+ function handlePurchase/);
    expect(byDefault.stack_trace).not.toMatch(/RobloxMonitor/);
    expect(byDefault).toMatchObject({ level: "error", user_id: null, context: null, tags: null });
    const given = rows.find((e) => e.message === "custom error object");
    expect(given).toMatchObject({
      stack_trace: "Given.Traceback:1\n",
      user_id: "900",
      player_name: "Trader",
      tags: ["shop"],
      trace_id: String(traceId).replace(/[{}]/g, "").toLowerCase(),
      context: { item: "Sword" },
    });
  });

  it("setUser and setContext apply to later events until cleared", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(901, "Builder");
    await t.rbx.run(`
      Monitor.setUser(mock.player(901))
      Monitor.setContext("round", { number = 3, map = "Harbor" })
      Monitor.setContext("mode", "ranked")
      Monitor.captureMessage("with user and context", "warn")
      Monitor.setUser(nil)
      Monitor.setContext("round", nil)
      Monitor.captureMessage("cleared", "warn")
      return Monitor.flush(10)
    `);
    const rows = await events();
    expect(rows.find((e) => e.message === "with user and context")).toMatchObject({
      user_id: "901",
      player_name: "Builder",
      context: { round: { number: 3, map: "Harbor" }, mode: "ranked" },
    });
    const cleared = rows.find((e) => e.message === "cleared");
    expect(cleared).toMatchObject({ user_id: null, player_name: null, context: { mode: "ranked" } });
  });

  it("shutdownTimeout bounds the shutdown flush while the service is down", async () => {
    expect(await start("shutdownTimeout = 3")).toBe(true);
    t.mode = { kind: "down" };
    await t.rbx.run(`Monitor.captureMessage("kept while down", "error")`);
    expect(await t.rbx.shutdown()).toBe(true);
    const closedAfter = (await t.rbx.run(`return mock.closedAfter`)) as number;
    expect(closedAfter).toBeGreaterThanOrEqual(3);
    expect(closedAfter).toBeLessThan(4);
    expect(t.rbx.requests.length).toBeGreaterThanOrEqual(1);
  });

  it("clientLimits sets the per-player and server buckets", async () => {
    expect(await start("clientLimits = { perPlayerBurst = 2, perPlayerPerMinute = 1, serverBurst = 3, serverPerMinute = 1 }")).toBe(true);
    for (const [id, name] of [
      [301, "A"],
      [302, "B"],
      [303, "C"],
    ] as const) {
      await t.rbx.addPlayer(id, name);
      for (let i = 0; i < 10; i++) await t.rbx.fireRemote(id, { message: `Players.${name}.PlayerGui.Hud:${i}: report ${i}` });
    }
    await t.rbx.advance(1);
    await t.rbx.run(`return Monitor.flush(10)`);
    const rows = await events();
    const perPlayer = [301, 302, 303].map((id) => rows.filter((e) => e.user_id === String(id)).length);
    // defaults are 5 a player and 30 for the server
    expect(Math.max(...perPlayer)).toBeLessThanOrEqual(2);
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.length).toBeLessThanOrEqual(3);
    await t.rbx.run(`Monitor.captureMessage("reports the rest", "info") return Monitor.flush(10)`);
    expect(reportedLosses(t.rbx.requests)).toEqual({ "error:rate_limited": 30 - rows.length });
  });
});
