import { describe, expect, it } from "vitest";
import { createRobloxServer } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/**
 * Actors (each with its own copy of the module) and per-player attribution, in real Luau against
 * the real service.
 */
const t = sdkSuite();
const { start, events, groups } = t;

const byMessage = <T extends { message: string }>(rows: T[], ending: string) => rows.filter((row) => row.message.endsWith(ending));

describe("Roblox SDK in Actors", () => {
  it("forwards captures from an Actor's copy to the initialized one: its player and scope, one queue, counted once", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(261, "Builderman");
    await t.rbx.addPlayer(262, "Noob");
    const guard = await t.rbx.actor("Workspace.Guard");

    const traceId = await guard.run(`
      -- a shared bootstrap that also calls init in the Actor: no second queue, no second error hook
      assert(Monitor.init({ url = "http://unused.invalid", apiKey = "unused" }) == true)
      assert(Monitor.status().forwarding == true)
      local traceId = Monitor.newTraceId() -- GetService: serial code only
      task.desynchronize()
      for _ = 1, 2 do
        Monitor.captureException("Guard lost its target", { player = mock.player(261), npc = "Guard", onHit = function() end })
      end
      Monitor.captureMessage("Guard path blocked", "warn", { cell = { 3, 4 } })
      local ok = Monitor.withScope({ user = mock.player(262), traceId = traceId, tags = { "npc" } }, function()
        Monitor.captureMessage("Guard greeted", "info")
        task.wait(1)
        error("Guard fell over")
      end)
      assert(ok == false)
      task.synchronize()
      -- the engine calls the handler, which raises: the error is captured with the player, raised
      -- again, and Roblox's own report of it is not counted a second time
      mock.callHandler(script, Monitor.wrapPlayerHandler(function(player, item)
        error("Guard cannot sell " .. item)
      end), mock.player(262), "Sword")
      return traceId
    `);
    // an error Roblox reports through ScriptContext.Error is counted by the initialized copy alone
    await t.rbx.fireError("Workspace.Guard.Brain:7: attempt to index nil with 'Humanoid'", "Workspace.Guard.Brain:7\n", "Workspace.Guard.Brain");
    await t.rbx.advance(0.5);

    // everything waits in the initialized copy's queue, dedup included
    expect(await t.rbx.run(`return Monitor.status().queued`)).toBe(6);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect(t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"))).toHaveLength(1);

    const rows = await events();
    const trace = String(traceId).replace(/[{}]/g, "").toLowerCase();
    const [lost] = byMessage(rows, "Guard lost its target");
    expect(lost).toMatchObject({ level: "error", user_id: "261", player_name: "Builderman", count: 2, context: { npc: "Guard" } });
    expect(lost.context.onHit).toMatch(/^function/);
    expect(lost.stack_trace).toMatch(/Workspace\.Guard\.Script1/);
    expect(byMessage(rows, "Guard path blocked")[0]).toMatchObject({ level: "warn", user_id: null, context: { cell: [3, 4] } });
    for (const message of ["Guard greeted", "Guard fell over"]) {
      expect(byMessage(rows, message)[0]).toMatchObject({ user_id: "262", player_name: "Noob", trace_id: trace, tags: ["npc"] });
    }
    expect(byMessage(rows, "Guard cannot sell Sword")[0]).toMatchObject({ level: "error", user_id: "262", player_name: "Noob" });
    expect(byMessage(rows, "attempt to index nil with 'Humanoid'")[0]).toMatchObject({ context: { script: "Workspace.Guard.Brain" } });

    const counts = Object.fromEntries((await groups()).map((g) => [g.message.replace(/^.*:\d+: /, ""), g.count]));
    expect(counts).toEqual({
      "Guard lost its target": "2",
      "Guard path blocked": "1",
      "Guard greeted": "1",
      "Guard fell over": "1",
      "Guard cannot sell Sword": "1",
      "attempt to index nil with 'Humanoid'": "1",
    });
    expect(t.rbx.warnings).toEqual([]);
  });

  it("drops an Actor's captures while no copy is initialized, and after close", async () => {
    t.rbx = await createRobloxServer({ placeId: 1818 });
    const guard = await t.rbx.actor("Workspace.Guard");
    expect(await guard.run(`Monitor.captureMessage("before init") return Monitor.status().forwarding`)).toBe(false);
    await t.rbx.run(`assert(Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)} }))`);
    await guard.run(`Monitor.captureMessage("while running")`);
    await t.rbx.advance(0.5);
    expect(await t.rbx.run(`return Monitor.close(10)`)).toBe(true);
    expect(await guard.run(`Monitor.captureMessage("after close") return Monitor.status().forwarding`)).toBe(false);
    await t.rbx.advance(0.5);
    expect((await events()).map((e) => e.message)).toEqual(["while running"]);
  });
});

describe("Roblox SDK player scope", () => {
  it("attributes each capture to its own player on a shared server: extra.player, scopes, wrapped handlers", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(261, "Builderman");
    await t.rbx.addPlayer(262, "Noob");
    await t.rbx.addPlayer(263, "Guest");
    const traceId = await t.rbx.run(`
      Monitor.setUser(mock.player(263)) -- a server-wide default: any scope's user wins over it
      Monitor.captureException("default user", { region = "eu" })
      Monitor.captureException("explicit player", nil, { player = mock.player(261) })
      Monitor.captureException("explicit player, no traceback", { player = mock.player(262) })
      local traceId = Monitor.newTraceId()

      local buy = Monitor.wrapPlayerHandler(function(player, item)
        Monitor.captureMessage("buying " .. item)
        Monitor.withScope({ traceId = traceId }, function()
          Monitor.captureMessage("inner scope keeps the player")
        end)
        task.wait(2)
        error("out of stock: " .. item)
      end)
      mock.callHandler(script, buy, mock.player(261), "Sword")
      -- while that handler waits, this thread's captures are not the handler's player's
      Monitor.captureMessage("meanwhile")

      -- OnServerInvoke: the results come back unchanged
      local add = Monitor.wrapPlayerHandler(function(player, a, b)
        return a + b, player.Name
      end)
      local sum, name = add(mock.player(262), 2, 3)
      assert(sum == 5 and name == "Noob")

      -- a thread spawned with the wrapper carries the player; a bare task.spawn does not
      task.spawn(Monitor.wrapPlayerHandler(function()
        Monitor.captureMessage("spawned with the player")
      end), mock.player(262))
      task.wait(3)
      assert(Monitor.flush(10))
      return traceId
    `);
    const rows = await events();
    const user = (message: string) => {
      const [row] = byMessage(rows, message);
      return [row.user_id, row.player_name];
    };
    expect(user("default user")).toEqual(["263", "Guest"]);
    expect(byMessage(rows, "default user")[0].context).toEqual({ region: "eu" });
    expect(user("explicit player")).toEqual(["261", "Builderman"]);
    expect(user("explicit player, no traceback")).toEqual(["262", "Noob"]);
    expect(user("buying Sword")).toEqual(["261", "Builderman"]);
    expect(user("inner scope keeps the player")).toEqual(["261", "Builderman"]);
    expect(byMessage(rows, "inner scope keeps the player")[0].trace_id).toBe(String(traceId).replace(/[{}]/g, "").toLowerCase());
    expect(user("out of stock: Sword")).toEqual(["261", "Builderman"]);
    expect(user("meanwhile")).toEqual(["263", "Guest"]);
    expect(user("spawned with the player")).toEqual(["262", "Noob"]);
    // raised again by the wrapper and reported by Roblox: one occurrence
    const [outOfStock] = (await groups()).filter((g) => g.message.endsWith("out of stock: Sword"));
    expect(outOfStock.count).toBe("1");
    expect(t.rbx.warnings).toEqual([]);
  });
});
