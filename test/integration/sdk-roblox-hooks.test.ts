import { describe, expect, it } from "vitest";
import { notHealth, createRobloxServer } from "../support/roblox.js";
import { sdkSuite } from "../support/sdk-suite.js";

/**
 * The SDK's hooks on the engine's signals, under both signal behaviors (see vitest.config.ts):
 * beforeSend's own output, the watchdog's timeouts, the client module and the client relay,
 * economy pushes from Actors.
 */
const t = sdkSuite();
const { start, events, groups } = t;

describe("Roblox SDK hooks under both signal behaviors", () => {
  // moved from sdk-roblox.test.ts (whose simulated servers, one more than luau-web's fixed heap
  // holds once the SDK grew, share one process)
  it("reports a game script whose name starts with the SDK's (RobloxMonitorConfig), and still ignores the SDK's own errors", async () => {
    expect(await start()).toBe(true);
    // before: the SDK's path matched as a prefix, so every error of such a script was taken for the SDK's own
    await t.rbx.fireError("ReplicatedStorage.RobloxMonitorConfig:5: attempt to index nil with 'Key'", "ReplicatedStorage.RobloxMonitorConfig:5\n", "ReplicatedStorage.RobloxMonitorConfig");
    await t.rbx.fireError("ReplicatedStorage.RobloxMonitor.Transport:12: internal", "ReplicatedStorage.RobloxMonitor.Transport:12\nReplicatedStorage.RobloxMonitor:40\n", "ServerScriptService.Game");
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await groups()).map((g) => g.message)).toEqual(["ReplicatedStorage.RobloxMonitorConfig:5: attempt to index nil with 'Key'"]);
  });

  it("captures every warning printed while beforeSend runs, and not what beforeSend prints itself", async () => {
    await start(`captureWarnings = true, beforeSend = function(e) return e end`);
    await t.rbx.run(`warn("a") warn("b") warn("c")`);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await events()).map((e) => [e.message, e.level])).toEqual([
      ["a", "warn"],
      ["b", "warn"],
      ["c", "warn"],
    ]);

    // a beforeSend that warns: its own line is not captured (it would loop), the game's are
    await start(`captureWarnings = true, beforeSend = function(e) warn("checked " .. e.message) return e end`);
    await t.rbx.run(`warn("d") warn("e")`);
    await t.rbx.advance(1);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await events()).map((e) => e.message)).toEqual(["a", "b", "c", "d", "e"]);
    expect(t.rbx.warnings.filter((w) => w.startsWith("checked"))).toEqual(["checked d", "checked e"]);
  });

  it("captures the watchdog's Script timeout from the Output, and an ordinary error once", async () => {
    await start();
    await t.rbx.fireError("ServerScriptService.Game:3: boom", "ServerScriptService.Game:3\n", "ServerScriptService.Game");
    // Roblox prints a script's error to the Output as well
    await t.rbx.messageOut("ServerScriptService.Game:3: boom", "MessageError");
    await t.rbx.scriptTimeout("ServerScriptService.Loop", 12);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await groups()).map((g) => [g.message, g.level, g.count])).toEqual([
      ["Script timeout: exhausted allowed execution time", "error", "1"],
      ["ServerScriptService.Game:3: boom", "error", "1"],
    ]);
  });

  it("the client hooks errors at once, keeps them until the RemoteEvent appears, and never gives up", async () => {
    await start();
    await t.rbx.addPlayer(701, "Early");
    const client = await createRobloxServer({ client: { userId: 701, name: "Early", remote: false } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    await client.fireError("Players.Early.PlayerGui.Hud:1: first", "Players.Early.PlayerGui.Hud:1\n", "Players.Early.PlayerGui.Hud");
    await client.fireError("Players.Early.PlayerGui.Hud:2: second", "Players.Early.PlayerGui.Hud:2\n", "Players.Early.PlayerGui.Hud");
    await client.advance(100);
    expect(client.warnings).toHaveLength(1);
    expect(client.warnings[0]).toMatch(/RobloxMonitorClientErrors was not found.*kept/);
    expect(client.fired).toEqual([]);
    // the RemoteEvent replicates late
    await client.run(`
      local remote = Instance.new("RemoteEvent")
      remote.Name = "RobloxMonitorClientErrors"
      remote.Parent = game:GetService("ReplicatedStorage")
    `);
    await client.advance(61);
    expect(client.fired).toHaveLength(2);
    await client.deliverTo(t.rbx);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await events()).map((e) => [e.message, e.user_id])).toEqual([
      ["Players.Early.PlayerGui.Hud:1: first", "701"],
      ["Players.Early.PlayerGui.Hud:2: second", "701"],
    ]);
    expect(client.threadErrors).toEqual([]);
  });

  it("the client counts what its throttle drops and sends the count with the next report, or alone", async () => {
    await start();
    await t.rbx.addPlayer(702, "Loop");
    const client = await createRobloxServer({ client: { userId: 702, name: "Loop" } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    // one error every frame for 5 frames: one report, 4 dropped by the 10 s repeat rule
    await client.fireError("Players.Loop.PlayerGui.Hud:1: tick", "Players.Loop.PlayerGui.Hud:1\n", "Players.Loop.PlayerGui.Hud", 5);
    await client.advance(1);
    await client.fireError("Players.Loop.PlayerGui.Hud:9: other", "Players.Loop.PlayerGui.Hud:9\n", "Players.Loop.PlayerGui.Hud");
    await client.fireError("Players.Loop.PlayerGui.Hud:1: tick", "Players.Loop.PlayerGui.Hud:1\n", "Players.Loop.PlayerGui.Hud", 3);
    // nothing else goes: the count goes alone within a minute
    await client.advance(61);
    expect(client.fired.map((p: any) => [p.message ?? null, p.suppressed ?? null])).toEqual([
      ["Players.Loop.PlayerGui.Hud:1: tick", null],
      ["Players.Loop.PlayerGui.Hud:9: other", 4],
      [null, 3],
    ]);
    await client.deliverTo(t.rbx);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect((await events()).map((e) => e.message)).toEqual(["Players.Loop.PlayerGui.Hud:1: tick", "Players.Loop.PlayerGui.Hud:9: other"]);
    expect(client.threadErrors).toEqual([]);
  });

  it("the relay refuses a message the service would find blank, and counts every refusal, limit and client-side drop (capped)", async () => {
    t.rbx = await createRobloxServer();
    const result = JSON.parse(
      (await t.rbx.runModule(
        "ClientRelay",
        `
      return game:GetService("HttpService"):JSONEncode((function()
        local Relay = Module
        local now = 0
        local lost = {}
        local relay = Relay.new(nil, function() return now end, function() return 1 end, function(reason, quantity)
          lost[reason] = (lost[reason] or 0) + quantity
        end)
        local player = { UserId = 7 }
        local accepted = {}
        -- every character JavaScript's trim removes
        for _, blank in { "\\u{3000}", " \\t\\n\\r", "\\u{A0}\\u{FEFF}", "\\u{2028}\\u{2029}", "\\u{2000}\\u{200A}\\u{1680}\\u{202F}\\u{205F}", "\\u{B}\\u{C}", "" } do
          if Relay.accept(relay, player, { message = blank }) then table.insert(accepted, blank) end
        end
        -- characters it keeps: not blank
        for _, text in { "\\u{85}", "\\u{180E}", "\\u{200B}" } do
          if Relay.accept(relay, player, { message = text }) then table.insert(accepted, text) end
        end
        Relay.accept(relay, player, { message = 5 })
        Relay.accept(relay, player, "x")
        -- a burst of 5: two more pass, the third is over the limit
        for i = 1, 3 do
          if Relay.accept(relay, player, { message = "x" .. i }) then table.insert(accepted, "x" .. i) end
        end
        -- what the client's throttle dropped: capped per report and per player a minute
        Relay.accept(relay, player, { suppressed = 5000 })
        Relay.accept(relay, player, { suppressed = 10 })
        for _, bad in { -3, 1.5, 0 / 0, "9" } do
          Relay.accept(relay, player, { suppressed = bad })
        end
        now = 61
        local carried = Relay.accept(relay, player, { message = "y", suppressed = 10 })
        return { #accepted, lost, carried and carried.message }
      end)())
    `,
      )) as string,
    );
    expect(result[0]).toBe(5);
    expect(result[1]).toEqual({ client_invalid: 9, rate_limited: 1, client_throttled: 3610 });
    expect(result[2]).toBe("y");
  });

  it("an exploiter firing a blank-looking message every 6 s does not keep the server's errors from being stored", async () => {
    await start();
    await t.rbx.addPlayer(666, "Exploiter");
    for (let second = 0; second < 120; second += 6) {
      await t.rbx.fireRemote(666, { message: "\u3000" });
      await t.rbx.fireError(`ServerScriptService.Game:${second}: failure ${second}`, `ServerScriptService.Game:${second}\n`, "ServerScriptService.Game");
      await t.rbx.advance(6);
    }
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    const rows = await events();
    expect(rows).toHaveLength(20);
    expect(rows.every((e) => e.message.startsWith("ServerScriptService.Game:"))).toBe(true);
    // the refusals are counted (until the loss report replaces it, also in context.sdk)
    expect(t.rbx.requests.filter(notHealth).every((r) => r.status === 200)).toBe(true);
  });

  it("economy.push in an Actor hands the push to the initialized copy: the Player by reference, the profile as a copy", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(301, "Trader");
    const shop = await t.rbx.actor("Workspace.Shop");
    const pushed = await shop.run(`
      local profile = { Data = { RPCharacterOne = { Cash = 1250, Bank = 0 / 0 } }, MetaData = { ProfileCreateTime = 1 } }
      task.desynchronize()
      local ok = Monitor.economy.push(mock.player(301), profile)
      local none = Monitor.economy.push(mock.player(301), nil)
      task.synchronize()
      -- changed after the push: the copy already left
      profile.Data.RPCharacterOne.Cash = 0
      return tostring(ok) .. " " .. tostring(none)
    `);
    expect(pushed).toBe("true false");
    await t.rbx.advance(0.5);
    expect(await t.rbx.run(`return Monitor.status().economyQueued`)).toBe(1);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    const rows = await t.app.sql<{ user_id: string; cash: string; username: string }[]>`
      select user_id::text, cash::text, username from economy_snapshots where project_id = ${t.projectId}`;
    expect(rows).toEqual([{ user_id: "301", cash: "1250", username: "Trader" }]);
  });
});
