import { describe, expect, it } from "vitest";
import { countersApplied } from "../support/counters.js";
import { sdkSuite, type ProxyMode } from "../support/sdk-suite.js";

/**
 * A soak of the Luau SDK: one server through a quarter of an hour of simulated time with an
 * exploiter, honest clients, a flapping service (5xx, 429, a WAF's 403, timeouts, a long outage,
 * lost answers), sampling, ignoreErrors and a beforeSend that drops and edits, then 30 players
 * leaving during an outage and the server shutting down in it. Every occurrence the game handed
 * the SDK must end stored or counted as lost by reason, summing exactly to what was raised; once
 * the service is back the counts must have reached it, exactly.
 */
const t = sdkSuite();

const PLAYERS = 30;
const EXPLOITER = 666;

const SOAK_SECONDS = 760;

/** The proxy's mode at simulated second `s` of the soak (after SOAK_SECONDS: the outage the server closes in). */
function modeAt(s: number): ProxyMode | "timeouts" {
  if (s >= SOAK_SECONDS) return { kind: "down" };
  if (s < 60) return { kind: "pass" };
  if (s < 100) return { kind: "503" };
  if (s < 130) return { kind: "pass" };
  if (s < 160) return { kind: "429", retryAfter: "40", times: 1_000 };
  if (s < 190) return { kind: "403" };
  if (s < 220) return { kind: "pass" };
  if (s < 250) return "timeouts";
  if (s < 270) return { kind: "lose-response", times: 1_000 };
  if (s < 300) return { kind: "pass" };
  // longer than maxRetryTime, with more distinct errors than the queue holds
  if (s < 560) return { kind: "down" };
  if (s < 640) return s % 20 < 10 ? { kind: "503" } : { kind: "pass" };
  return { kind: "pass" };
}

describe("Roblox SDK soak", () => {
  it("ends with every occurrence stored or counted as lost by reason, and the counts reach the service", async () => {
    expect(
      await t.start(`
        captureWarnings = true,
        sampleRate = 0.9,
        maxQueueSize = 150,
        -- each queued event holds its own copy of the trail: 10 keep the queue within luau-web's
        -- fixed 16 MB whatever the machine's load makes of the run
        maxBreadcrumbs = 10,
        maxRetryTime = 180,
        flushInterval = 5,
        ignoreErrors = { "IGNORED" },
        beforeSend = function(event)
          if string.find(event.message, "DROPME", 1, true) then return nil end
          -- an edit the service would refuse as it stands
          event.level = "fatal"
          event.context = { ratio = 0 / 0, note = "edited" }
          return event
        end,
      `),
    ).toBe(true);
    // the game: pushes a player's economy as they leave, and every 3 s captures a shop message
    // (kept, ignored by ignoreErrors, or dropped by beforeSend), counting what it captured. One
    // script for the whole soak: luau-web's heap does not give back what each script run holds.
    await t.rbx.run(`
      game:GetService("Players").PlayerRemoving:Connect(function(player)
        Monitor.economy.push(player, { Data = { Coins = player.UserId, Gems = 0 / 0 } })
      end)
      local kinds = { "plain", "IGNORED by the game", "DROPME in beforeSend" }
      local captured = Instance.new("IntValue", game:GetService("ServerStorage"))
      captured.Name = "ShopCaptures"
      captured.Value = 0
      task.spawn(function()
        local s = 0
        while not game:GetService("ServerStorage"):FindFirstChild("ShopClosed") do
          if s % 3 == 0 then
            Monitor.captureMessage("shop: " .. kinds[(s // 3) % 3 + 1] .. " " .. (s % 12), "warning", { price = s })
            captured.Value += 1
          end
          s += 1
          task.wait(1)
        end
      end)
    `);
    const shopCaptures = async () => (await t.rbx.run(`return game:GetService("ServerStorage"):FindFirstChild("ShopCaptures").Value`)) as number;
    for (let i = 1; i <= PLAYERS; i++) await t.rbx.addPlayer(1000 + i, `Player${i}`);
    await t.rbx.addPlayer(EXPLOITER, "Exploiter");

    // every occurrence handed to the SDK: script errors, captures, warnings, client reports
    let raised = 0;
    let timeouts = false;
    const step = async (s: number) => {
      const mode = modeAt(s);
      const wantTimeouts = mode === "timeouts";
      if (wantTimeouts !== timeouts) {
        timeouts = wantTimeouts;
        // requests take longer than the SDK's Timeout: they reach the service, the answer is too late
        await t.rbx.mock.setHttpLatency(wantTimeouts ? 40 : 0.1);
      }
      const next = wantTimeouts ? ({ kind: "pass" } as ProxyMode) : mode;
      if (next.kind !== t.mode.kind) t.mode = next;

      // a repeating error, and (in the long outage) ones never seen before
      const n = 1 + (s % 3);
      await t.rbx.fireError(`ServerScriptService.Combat:${10 + (s % 7)}: attempt to index nil with 'Health'`, "ServerScriptService.Combat:10\n", "ServerScriptService.Combat", n);
      raised += n;
      if (s >= 300 && s < 560) {
        await t.rbx.fireError(`ServerScriptService.Spawner:5: no spawn for wave ${s}`, "", "ServerScriptService.Spawner", 1);
        raised += 1;
      }
      if (s % 5 === 0) {
        await t.rbx.messageOut(`DataStore request queue is filling (${s % 4})`, "MessageWarning");
        raised += 1;
      }
      if (s % 6 === 0) {
        // the exploiter: a blank-by-Unicode message, then a flood past the relay's buckets
        await t.rbx.fireRemote(EXPLOITER, { message: "\u3000" });
        await t.rbx.fireRemote(EXPLOITER, { message: "fake error", stack: "" }, 10);
        raised += 11;
      }
      if (s % 17 === 0) {
        await t.rbx.fireRemote(1000 + (s % PLAYERS) + 1, { message: `PlayerGui.Hud:3: nil value ${s % 5}`, stack: "" });
        raised += 1;
      }
      await t.rbx.advance(1);
    };

    for (let s = 0; s < SOAK_SECONDS; s++) await step(s);
    await t.rbx.run(`Instance.new("Folder", game:GetService("ServerStorage")).Name = "ShopClosed" task.wait(2)`);
    const shop = await shopCaptures();
    // the service has been answering for two minutes: everything went, and the counts with it
    t.mode = { kind: "pass" };
    expect(await t.rbx.run(`return Monitor.flush(60)`)).toBe(true);
    await t.rbx.advance(30);

    const stored = async () => {
      await countersApplied(t.app.sql);
      const [{ n }] = await t.app.sql<{ n: number }[]>`select coalesce(sum(count), 0)::int as n from error_groups where project_id = ${t.projectId}`;
      return n;
    };
    const discards = async () =>
      Object.fromEntries(
        (
          await t.app.sql<{ key: string; n: number }[]>`
            select category || ':' || reason as key, sum(quantity)::int as n from sdk_discards where project_id = ${t.projectId} group by 1`
        ).map((r) => [r.key, r.n]),
      );
    const dropped = async () => JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status().dropped)`)) as string) as Record<string, number>;
    const sum = (counts: Record<string, number>, category: string) =>
      Object.entries(counts).reduce((total, [key, n]) => total + (key.startsWith(`${category}:`) ? n : 0), 0);

    const lost = await dropped();
    // every way of losing was met, and each reached the service exactly
    for (const reason of ["sample_rate", "ignored", "before_send", "queue_overflow", "retry_expired", "rate_limited", "client_invalid"])
      expect(lost[`error:${reason}`], reason).toBeGreaterThan(0);
    expect(await discards()).toEqual(lost);
    expect((await stored()) + sum(lost, "error")).toBe(raised + shop);
    // the edits beforeSend made were sent as the service takes them, never refused
    expect(lost["error:refused"]).toBeUndefined();
    const [{ level }] = await t.app.sql<{ level: string }[]>`select level from events where project_id = ${t.projectId} and message like 'shop: plain%' limit 1`;
    expect(level).toBe("error");

    // then an outage, the players leave with their snapshots, more errors, and the server closes in it
    t.mode = { kind: "down" };
    await t.rbx.advance(5);
    for (let s = SOAK_SECONDS; s < SOAK_SECONDS + 20; s++) await step(s);
    expect(t.mode.kind).toBe("down");
    expect(await t.rbx.shutdown("DeveloperUpdate")).toBe(true);

    const final = await dropped();
    expect(final["error:unsent_at_close"]).toBeGreaterThan(0);
    expect((await stored()) + sum(final, "error")).toBe(raised + shop);
    const [{ snapshots }] = await t.app.sql<{ snapshots: number }[]>`select count(*)::int as snapshots from economy_snapshots where project_id = ${t.projectId}`;
    expect(snapshots + sum(final, "economy")).toBe(PLAYERS + 1);
    // nothing was lost without a word
    expect(t.rbx.warnings.every((w) => w.startsWith("[RobloxMonitor]"))).toBe(true);
  }, 300_000);
});
