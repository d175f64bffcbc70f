import { describe, expect, it } from "vitest";
import { createRobloxServer } from "../support/roblox.js";
import { sdkSuite } from "../support/sdk-suite.js";

/**
 * Breadcrumbs in the Luau SDK, end to end: the server's Output lines and `Monitor.addBreadcrumb`
 * kept per server, a copy attached to each event when it is captured, within the SDK's size
 * bound, stored by the service with the event.
 */
const t = sdkSuite();
const { start } = t;

type Crumb = { timestamp?: string; level: string; category?: string; message?: string; data?: Record<string, unknown> };
const crumbsOf = async () =>
  (await t.app.sql<{ message: string; breadcrumbs: Crumb[] | null }[]>`
    select message, breadcrumbs from events where project_id = ${t.projectId} order by id`).map((r) => ({ message: r.message, breadcrumbs: r.breadcrumbs }));
const byMessage = async (message: string) => (await crumbsOf()).find((r) => r.message === message)?.breadcrumbs;

describe("Roblox SDK breadcrumbs", () => {
  it("attaches the server's last Output lines to an event, never the SDK's own, nor an error's stack lines", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(`print("Round 12 started") warn("Low health for", "Builderman")`);
    await t.rbx.mock.messageOut("Shop closed", "MessageInfo");
    // what Roblox prints for a script error: the error, then its stack between Stack Begin/End
    await t.rbx.mock.messageOut("ServerScriptService.Combat:5: attempt to index nil", "MessageError");
    await t.rbx.mock.messageOut("Stack Begin", "MessageInfo");
    await t.rbx.mock.messageOut("Script 'ServerScriptService.Combat', Line 5", "MessageInfo");
    await t.rbx.mock.messageOut("Stack End", "MessageInfo");
    await t.rbx.mock.messageOut("[RobloxMonitor] something the SDK said", "MessageWarning");
    await t.rbx.advance(1);
    // LogService.MessageOut fires Deferred: the line is recorded once the printing thread yields
    await t.rbx.run(`print("last line") task.wait() Monitor.captureMessage("with crumbs", "error") return Monitor.flush(10)`);

    const crumbs = await byMessage("with crumbs");
    expect(crumbs?.map(({ timestamp: _t, ...c }) => c)).toEqual([
      { level: "info", category: "log", message: "Round 12 started" },
      { level: "warning", category: "log", message: "Low health for Builderman" },
      { level: "info", category: "log", message: "Shop closed" },
      { level: "error", category: "log", message: "ServerScriptService.Combat:5: attempt to index nil" },
      { level: "info", category: "log", message: "last line" },
    ]);
    // each line has the time it was printed: the first before the simulated second passed, the last after
    const times = crumbs!.map((c) => Date.parse(c.timestamp!));
    expect(times.every((ms) => Number.isFinite(ms))).toBe(true);
    expect(times[4] - times[0]).toBeGreaterThanOrEqual(1000);
  });

  it("records Monitor.addBreadcrumb JSON-safe, and gives each event a copy of the trail as it was at capture", async () => {
    await start(`beforeSend = function(event)
      if event.message == "first" and event.breadcrumbs then event.breadcrumbs[1].message = "edited by beforeSend" end
      return event
    end`);
    await t.rbx.run(`
      Monitor.addBreadcrumb({ category = "shop", message = "bought Sword", level = "warn", data = { price = 250, nan = 0 / 0, part = game:GetService("ReplicatedStorage"), list = { 1, 2 }, [1] = "one" } })
      Monitor.addBreadcrumb("just text")
      Monitor.addBreadcrumb({ level = "loud", category = "round" })
      Monitor.addBreadcrumb({ message = "huge data", data = { blob = string.rep("x", 1900), more = string.rep("y", 1900) } })
      Monitor.addBreadcrumb({})
      Monitor.addBreadcrumb({ level = "error" })
      Monitor.captureMessage("first", "error")
      Monitor.addBreadcrumb({ message = "after first", level = "debug" })
      Monitor.captureMessage("second", "error")
      return Monitor.flush(10)
    `);
    const first = await byMessage("first");
    const expected = [
      { level: "warning", category: "shop", message: "bought Sword", data: { price: 250, part: "ReplicatedStorage", list: [1, 2], "1": "one" } },
      { level: "info", message: "just text" },
      { level: "info", category: "round" },
      { level: "info", message: "huge data", data: { data_dropped: "larger than 2 KB" } },
    ];
    expect(first?.map(({ timestamp: _t, ...c }) => c)).toEqual([{ ...expected[0], message: "edited by beforeSend" }, ...expected.slice(1)]);
    const second = await byMessage("second");
    // recorded after "first" was captured: only on "second"; and beforeSend's edit of "first" is not on it
    expect(second?.map(({ timestamp: _t, ...c }) => c)).toEqual([...expected, { level: "debug", message: "after first" }]);
  });

  it("gives beforeSend each breadcrumb's data as the event's own: an edit does not change the trail", async () => {
    expect(
      await start(`beforeSend = function(event)
        if event.message == "edited" then
          for _, crumb in event.breadcrumbs or {} do
            if crumb.data then crumb.data.price = 999 crumb.data.item.id = 0 end
          end
        end
        return event
      end`),
    ).toBe(true);
    await t.rbx.run(`
      Monitor.addBreadcrumb({ category = "shop", message = "bought", data = { price = 5, item = { id = 7 } } })
      Monitor.captureMessage("edited", "error")
      Monitor.captureMessage("as recorded", "error")
      return Monitor.flush(10)
    `);
    expect((await byMessage("edited"))?.[0]?.data).toEqual({ price: 999, item: { id: 0 } });
    // the next event is built from the trail, which the edit did not reach
    expect((await byMessage("as recorded"))?.[0]?.data).toEqual({ price: 5, item: { id: 7 } });
  });

  it("keeps the last maxBreadcrumbs lines (a captured warning not its own), and none with maxBreadcrumbs = 0", async () => {
    await start(`maxBreadcrumbs = 3, captureWarnings = true`);
    await t.rbx.run(`for i = 1, 10 do print("line " .. i) end warn("careful now") task.wait() Monitor.captureMessage("three", "error") return Monitor.flush(10)`);
    expect((await byMessage("three"))?.map((c) => c.message)).toEqual(["line 9", "line 10", "careful now"]);
    // a warning captured as an event does not carry its own line
    expect((await byMessage("careful now"))?.map((c) => c.message)).toEqual(["line 8", "line 9", "line 10"]);

    await start(`maxBreadcrumbs = 0`);
    const handlers = await t.rbx.run(`return game:GetService("LogService").MessageOut:HandlerCount()`);
    await t.rbx.run(`print("not kept") Monitor.addBreadcrumb("not kept either") Monitor.captureMessage("none", "error") return Monitor.flush(10)`);
    expect(await byMessage("none")).toBeNull();
    // no LogService connection is made for breadcrumbs: the one left watches for the watchdog's
    // "Script timeout" errors, which reach the Output only
    expect(handlers).toBe(1);
  });

  it("shares one trail between threads, and leaves the server's lines off relayed client errors", async () => {
    await start();
    await t.rbx.addPlayer(555, "Player555");
    await t.rbx.run(`
      local done = false
      task.spawn(function()
        Monitor.withScope({ tags = { "scoped" } }, function()
          Monitor.addBreadcrumb({ category = "thread", message = "from another thread" })
        end)
        done = true
      end)
      while not done do task.wait() end
      Monitor.captureMessage("main thread", "error")
    `);
    const client = await createRobloxServer({ client: { userId: 555, name: "Player555" } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    await client.fireError("client boom", "Players.Player555.PlayerGui.Hud:3\n", "Players.Player555.PlayerGui.Hud");
    await client.deliverTo(t.rbx);
    await t.rbx.advance(1);
    await t.rbx.run(`return Monitor.flush(10)`);
    expect((await byMessage("main thread"))?.map((c) => c.message)).toEqual(["from another thread"]);
    expect(await byMessage("client boom")).toBeNull();
  });
});
