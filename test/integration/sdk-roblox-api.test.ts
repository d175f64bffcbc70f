import { describe, expect, it } from "vitest";
import { LuauState } from "luau-web";
import { createRobloxServer, notHealth } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/** The SDK's API (scopes, secrets, shaping, client module, download) in real Luau against the real service. */

/** Rows ordered by which of `messages` each message ends with (rows of one message keep their order). */
const inOrder = <T extends { message: string }>(rows: T[], messages: string[]) => {
  const rank = (e: T) => messages.findIndex((m) => e.message.endsWith(m));
  return [...rows].sort((a, b) => rank(a) - rank(b));
};
const t = sdkSuite();
const { start, events, groups } = t;

describe("Roblox SDK API", () => {
  it("attaches scope, user, trace id and tags, and reads the key from a Roblox secret", async () => {
    const key = t.apiKey;
    t.apiKey = "unused";
    t.rbx = await createRobloxServer({ placeId: 7, secrets: { monitor_key: key } });
    await t.rbx.addPlayer(261, "Builderman");
    const traceId = await t.rbx.run(`
      assert(Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKeySecret = "monitor_key", release = "1.4.2", environment = "staging" }))
      local player = mock.player(261)
      local traceId = Monitor.newTraceId()
      Monitor.setTag("region", "eu")
      local ok, err = Monitor.withScope({ user = player, traceId = traceId, extra = { item = "Sword" } }, function()
        Monitor.captureMessage("purchase started", "info")
        error("purchase failed")
      end)
      assert(ok == false and string.find(err, "purchase failed"))
      Monitor.captureMessage("outside the scope", "warn", { shop = "Armory" })
      -- a misspelt member raises at once
      local misspelt, problem = pcall(function() return Monitor.captureError end)
      assert(not misspelt and string.find(problem, "Monitor.captureError is not a member of Monitor", 1, true), problem)
      assert(Monitor.flush(10))
      return traceId
    `);
    // a batch is written per fingerprint shard: ids follow the batch's order only within a group
    const rows = inOrder(await events(), ["purchase started", "purchase failed", "outside the scope"]);
    expect(rows.map((e) => [e.message.replace(/^.*:\d+: /, ""), e.level])).toEqual([
      ["purchase started", "info"],
      ["purchase failed", "error"],
      ["outside the scope", "warn"],
    ]);
    const [started, failed, outside] = rows;
    const trace = String(traceId).replace(/[{}]/g, "").toLowerCase();
    for (const e of [started, failed]) expect(e).toMatchObject({ user_id: "261", player_name: "Builderman", trace_id: trace, context: { item: "Sword" } });
    expect(failed.stack_trace).toMatch(/ServerScriptService\.Test/);
    expect(outside).toMatchObject({ user_id: null, trace_id: null, context: { shop: "Armory" }, tags: ["region:eu"], game_version: "1.4.2", environment: "staging", place_id: "7" });
    expect(t.rbx.requests[0].headers["x-api-key"]).toBe(key);
    const [trace_row] = await t.app.sql`select event_count from traces where project_id = ${t.projectId} and trace_id = ${trace}`;
    expect(trace_row.event_count).toBe(2);
  });

  it("never reports its own failures or warnings, and sends nothing from Studio unless asked", async () => {
    await start(`captureWarnings = true, beforeSend = function(event)
      if event.message == "drop me" then return nil end
      if event.message == "break me" then error("beforeSend bug") end
      event.tags = { "checked" }
      return event
    end`);
    await t.rbx.run(`
      Monitor.captureMessage("drop me", "error")
      Monitor.captureMessage("break me", "error")
      Monitor.captureMessage("break me", "error")
      warn("Infinite yield possible on 'Workspace:WaitForChild(\\"Map\\")'")
    `);
    // an error raised inside the SDK module is the SDK's, not the game's
    await t.rbx.fireError("ReplicatedStorage.RobloxMonitor:10: internal", "ReplicatedStorage.RobloxMonitor:10\n", "ReplicatedStorage.RobloxMonitor");
    await t.rbx.run(`return Monitor.flush(10)`);
    expect(t.rbx.warnings.filter((w) => w.startsWith("[RobloxMonitor]"))).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/beforeSend raised an error/);
    expect((await events()).map((e) => [e.message, e.level, e.tags])).toEqual([
      ["break me", "error", null],
      ["Infinite yield possible on 'Workspace:WaitForChild(\"Map\")'", "warn", ["checked"]],
    ]);
    expect((await groups()).find((g) => g.message === "break me")?.count).toBe("2");

    t.rbx = await createRobloxServer({ studio: true });
    expect(await t.rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)} })`)).toBe(false);
    await t.rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await t.rbx.advance(30);
    expect(t.rbx.requests).toEqual([]);
    expect(t.rbx.prints.join("\n")).toMatch(/sendInStudio/);

    t.rbx = await createRobloxServer({ studio: true });
    await t.rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)}, sendInStudio = true })`);
    await t.rbx.fireError("ServerScriptService.A:1: studio error", "", "ServerScriptService.A");
    await t.rbx.run(`return Monitor.flush(10)`);
    expect((await events()).at(-1)).toMatchObject({ message: "ServerScriptService.A:1: studio error", environment: "studio", place_id: null, job_id: null });
  });

  it("shapes what the API would refuse, so one odd event never costs its batch", async () => {
    await start();
    await t.rbx.run(`
      local blob = {}
      for i = 1, 50 do blob["k" .. i] = string.rep("x", 1999) end
      Monitor.captureMessage("   ", "error")
      Monitor.captureMessage("bad trace", "warn", { traceId = "not-a-uuid" })
      Monitor.captureMessage("huge context", "info", { blob = blob })
      Monitor.captureMessage("bytes \\255\\254 here", "info", { tags = { string.rep("t", 300) } })
      Monitor.captureMessage("fine", "info")
      return Monitor.flush(10)
    `);
    expect(t.rbx.requests.filter(notHealth).map((r) => r.status)).toEqual([200]);
    // invalid UTF-8 bytes become U+FFFD each; a context over 16 KiB loses its largest entries, named
    const order = ["(empty message)", "bad trace", "huge context", "bytes \ufffd\ufffd here", "fine"];
    const rows = inOrder(await events(), order);
    expect(rows.map((e) => e.message)).toEqual(order);
    expect(rows[1]).toMatchObject({ trace_id: null, context: { trace: "not-a-uuid" } });
    expect(rows[2].context).toEqual({ context_dropped: "larger than 16 KiB: blob" });
    expect(rows[3].tags).toEqual(["t".repeat(200)]);
    expect(t.rbx.warnings).toEqual([]);
  });

  it("the client module reports client errors through the server, which attaches the real player", async () => {
    await start();
    await t.rbx.addPlayer(555, "Player555");
    const client = await createRobloxServer({ client: { userId: 555, name: "Player555" } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    const hud = "Players.Player555.PlayerGui.Hud.Controller";
    for (let i = 0; i < 3; i++) await client.fireError(`${hud}:8: attempt to call a nil value`, `${hud}:8\n`, hud);
    await client.fireError(`${hud}:20: bad argument`, `${hud}:20\n`, hud);
    // a repeat of the same error after 10 s is sent again
    await client.advance(11);
    await client.fireError(`${hud}:8: attempt to call a nil value`, `${hud}:8\n`, hud);
    await client.deliverTo(t.rbx);
    expect(client.threadErrors).toEqual([]);
    await t.rbx.run(`return Monitor.flush(10)`);
    const rows = inOrder(await events(), [`${hud}:8: attempt to call a nil value`, `${hud}:20: bad argument`]);
    expect(rows.map((e) => [e.message, e.count, e.user_id, e.player_name, e.tags, e.context?.script, e.stack_trace])).toEqual([
      [`${hud}:8: attempt to call a nil value`, 2, "555", "Player555", ["origin:client"], hud, `${hud}:8\n`],
      [`${hud}:20: bad argument`, 1, "555", "Player555", ["origin:client"], hud, `${hud}:20\n`],
    ]);
  });

  it("serves the bundled SDK, which loads in Luau and returns the public API", async () => {
    const res = await t.app.request("/sdk/RobloxMonitor.luau");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const source = await res.text();
    expect(source).toMatch(/^--!nocheck\n-- RobloxMonitor /);
    const state = await LuauState.createAsync({});
    try {
      const chunk = state.loadstring(`${source.replace(/\nreturn __require\("init"\)\n$/, "\n")}\nlocal keys = {} for k in __require("init") do table.insert(keys, k) end table.sort(keys) return table.concat(keys, ",")`, "=bundle", true);
      expect(await chunk()).toEqual(["addBreadcrumb,captureException,captureMessage,close,economy,flush,init,newTraceId,setContext,setExtra,setTag,setUser,startClient,status,withScope,wrapPlayerHandler"]);
    } finally {
      state.destroy();
    }
  });
});
