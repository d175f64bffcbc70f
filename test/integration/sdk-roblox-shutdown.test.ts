import { describe, expect, it } from "vitest";
import { createRobloxServer, notHealth } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/**
 * The Luau SDK on the engine's terms: deferred signals, requests that take time (and can time out),
 * opaque secrets, gzip for large bodies, and a shutdown that Roblox ends 30 s after it begins.
 */
const t = sdkSuite();
const { start, events, groups } = t;

const REMOTE = "RobloxMonitorClientErrors";
const snapshots = () => t.app.sql<{ user_id: string }[]>`select user_id::text from economy_snapshots where project_id = ${t.projectId} order by user_id`;
/** Game code: a PlayerRemoving handler that saves (yielding `saveSeconds`) and then pushes the player's profile. */
const pushOnLeave = (saveSeconds: number) => `
  game:GetService("Players").PlayerRemoving:Connect(function(player)
    task.wait(${saveSeconds})
    Monitor.economy.push(player, { Data = { RPCharacterOne = { Cash = player.UserId } } })
  end)`;

describe("Roblox SDK on the engine's terms", () => {
  it("the test engine fires signals as Workspace.SignalBehavior says, keeps secrets opaque and refuses undocumented request fields", async () => {
    t.rbx = await createRobloxServer({ secrets: { monitor_key: "rbx_secret_value" } });
    const result = await t.rbx.run(`
      local HttpService = game:GetService("HttpService")
      local ScriptContext = game:GetService("ScriptContext")
      local immediate = workspace.SignalBehavior == Enum.SignalBehavior.Immediate
      assert(immediate == (${JSON.stringify(t.rbx.signalBehavior)} == "Immediate"), tostring(workspace.SignalBehavior))
      local seen = {}
      local connection = ScriptContext.Error:Connect(function(message) table.insert(seen, message) end)
      ScriptContext.Error:Fire("first", "", nil)
      if immediate then
        -- immediate: the handler ran inside Fire
        assert(#seen == 1, "did not run inline")
      else
        -- deferred: the handler has not run inside Fire
        assert(#seen == 0, "ran inline")
      end
      task.wait()
      assert(#seen == 1 and seen[1] == "first", "did not run at the resumption point")
      if not immediate then
        ScriptContext.Error:Fire("dropped", "", nil)
        connection:Disconnect()
        task.wait()
        assert(#seen == 1, "Disconnect did not drop the queued invocation")
      end
      local secret = HttpService:GetSecret("monitor_key")
      assert(typeof(secret) == "Secret")
      assert(tostring(secret) == "Secret(monitor_key)", tostring(secret))
      assert(tostring(secret:AddPrefix("Bearer ")) == "Bearer Secret(monitor_key)")
      assert(not string.find(tostring(secret), "rbx_secret_value", 1, true))
      assert(not pcall(function() return "key=" .. secret end), "concatenation worked")
      assert(not pcall(function() return HttpService:JSONEncode({ key = secret }) end), "JSONEncode took a Secret")
      assert(not pcall(function()
        return HttpService:RequestAsync({ Url = "http://127.0.0.1:9/", Method = "POST", Body = secret })
      end), "a Secret went in the body")
      local ok, problem = pcall(function()
        return HttpService:RequestAsync({ Url = "http://127.0.0.1:9/", Method = "POST", Body = "{}", Retries = 5 })
      end)
      assert(not ok and string.find(problem, "Retries", 1, true), problem)
      -- Timeout: whole seconds, over 0, at most the default 30
      for _, timeout in { 0, -1, 2.5, 31, "5" } do
        local ok, problem = pcall(function()
          return HttpService:RequestAsync({ Url = "http://127.0.0.1:9/", Method = "POST", Body = "{}", Timeout = timeout :: any })
        end)
        assert(not ok and string.find(problem, "Timeout", 1, true), tostring(timeout) .. ": " .. tostring(problem))
      end
      return "ok"
    `);
    expect(result).toBe("ok");
    // none of the refused requests left the engine
    expect(t.rbx.requests).toEqual([]);
  });

  it("flush(t) returns by t while a request is still in flight, which then completes in the background", async () => {
    expect(await start("", { httpLatency: 5 })).toBe(true);
    const [delivered, elapsed] = JSON.parse(
      (await t.rbx.run(`
        Monitor.captureMessage("slow network", "error")
        local started = os.clock()
        local delivered = Monitor.flush(1)
        return game:GetService("HttpService"):JSONEncode({ delivered, os.clock() - started })
      `)) as string,
    );
    expect(delivered).toBe(false);
    expect(elapsed).toBeLessThanOrEqual(1);
    expect(t.rbx.requests.filter(notHealth)).toHaveLength(1);
    await t.rbx.advance(10);
    expect(await t.rbx.run(`return Monitor.status().queued`)).toBe(0);
    expect((await events()).map((e) => e.message)).toEqual(["slow network"]);
    expect(t.rbx.requests.filter(notHealth)).toHaveLength(1);
  });

  it("a request that times out is retried with its key, and the batch the service already stored is counted once", async () => {
    expect(await start("", { httpLatency: 40 })).toBe(true);
    await t.rbx.fireError("ServerScriptService.A:1: timed out", "", "ServerScriptService.A", 3);
    await t.rbx.advance(45);
    expect(t.rbx.warnings[0]).toMatch(/HttpError: Timedout/);
    await t.rbx.run(`mock.setHttpLatency(0.1)`);
    await t.rbx.advance(200);
    expect(t.rbx.requests.filter(notHealth).length).toBeGreaterThanOrEqual(2);
    expect(new Set(t.rbx.requests.filter(notHealth).map((r) => r.headers["idempotency-key"])).size).toBe(1);
    expect((await groups()).map((g) => g.count)).toEqual(["3"]);
    expect(await t.rbx.run(`return Monitor.status().queued`)).toBe(0);
  });

  it("sends a push made in PlayerRemoving after the shutdown flush emptied the queue, while another BindToClose keeps the server up", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(`
      ${pushOnLeave(3)}
      -- the game's own shutdown work (saving profiles) keeps the server up for 6 s
      game:BindToClose(function() task.wait(6) end)
    `);
    for (let id = 4001; id <= 4003; id++) await t.rbx.addPlayer(id, `Player${id}`);
    await t.rbx.advance(1);
    expect(await t.rbx.shutdown()).toBe(true);
    expect((await snapshots()).map((s) => s.user_id)).toEqual(["4001", "4002", "4003"]);
  });

  it("the shutdown flush waits for pushes from PlayerRemoving and BindToClose handlers that yield briefly", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(`
      ${pushOnLeave(1)}
      game:BindToClose(function()
        task.wait(1.5)
        Monitor.economy.push({ UserId = 4199, Name = "Offline4199" }, { RPCharacterOne = { Cash = 7 } })
      end)
    `);
    await t.rbx.addPlayer(4101, "Player4101");
    await t.rbx.advance(1);
    expect(await t.rbx.shutdown()).toBe(true);
    expect((await snapshots()).map((s) => s.user_id)).toEqual(["4101", "4199"]);
  });

  it("keeps shutdownTimeout under Roblox's 30 s, so its callback returns before the server is closed", async () => {
    expect(await start("shutdownTimeout = 60")).toBe(true);
    t.mode = { kind: "down" };
    await t.rbx.run(`Monitor.captureMessage("never delivered", "error")`);
    expect(await t.rbx.shutdown()).toBe(true);
    const closedAfter = (await t.rbx.run(`return mock.closedAfter`)) as number;
    expect(closedAfter).toBeLessThan(30);
    expect(closedAfter).toBeGreaterThanOrEqual(25);
    expect(t.rbx.requests.length).toBeGreaterThan(1);
  });

  it("sends a large batch gzipped (Content-Encoding: gzip), which the service stores, and a small one as it is", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(`Monitor.captureMessage("small", "info") return Monitor.flush(10)`);
    await t.rbx.run(`
      for i = 1, 60 do
        Monitor.captureMessage("large " .. i .. " " .. string.rep("inventory desync ", 60), "error")
      end
      return Monitor.flush(10)
    `);
    const [small, large] = t.rbx.requests.filter(notHealth);
    expect(small).toMatchObject({ gzip: false, status: 200 });
    expect(small.headers["Content-Encoding"]).toBeUndefined();
    expect(large).toMatchObject({ gzip: true, status: 200 });
    expect(large.headers["Content-Encoding"]).toBe("gzip");
    expect(large.body.length).toBeGreaterThan(60_000);
    expect(large.bytes).toBeLessThan(large.body.length / 5);
    expect(JSON.parse(large.body).errors).toHaveLength(60);
    // one group (the numbers are normalised away) counting every occurrence the gzipped body carried
    expect((await groups()).map((g) => [g.message.startsWith("large "), g.count])).toEqual([
      [true, "60"],
      [false, "1"],
    ]);
  });

  it("in Studio without sendInStudio, a client finds the RemoteEvent at once and its reports are dropped quietly", async () => {
    t.rbx = await createRobloxServer({ studio: true });
    await t.rbx.addPlayer(555, "Player555");
    expect(await t.rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)} })`)).toBe(false);
    const names = await t.rbx.remoteNames();
    expect(names).toContain(REMOTE);

    // the client sees what replicated from this server
    const client = await createRobloxServer({ client: { userId: 555, name: "Player555", remote: names.includes(REMOTE) } });
    const [started, waited] = JSON.parse(
      (await client.run(`
        local before = os.clock()
        local started = Monitor.startClient()
        return game:GetService("HttpService"):JSONEncode({ started, os.clock() - before })
      `)) as string,
    );
    expect(started).toBe(true);
    expect(waited).toBe(0);
    await client.fireError("Players.Player555.PlayerGui.Hud:3: oops", "Players.Player555.PlayerGui.Hud:3\n", "Players.Player555.PlayerGui.Hud");
    await client.deliverTo(t.rbx);
    await t.rbx.advance(30);
    expect(client.warnings).toEqual([]);
    expect(client.threadErrors).toEqual([]);
    expect(t.rbx.warnings).toEqual([]);
    expect(t.rbx.requests).toEqual([]);
  });

  it("where HTTP requests are off, the RemoteEvent exists too and only the server warns", async () => {
    expect(await start("", { httpEnabled: false })).toBe(false);
    expect(await t.rbx.remoteNames()).toContain(REMOTE);
    await t.rbx.addPlayer(556, "Player556");
    await t.rbx.fireRemote(556, { message: "Players.Player556.PlayerGui.Hud:1: x" });
    await t.rbx.advance(30);
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/Allow HTTP Requests/);
    expect(t.rbx.requests).toEqual([]);
  });
});
