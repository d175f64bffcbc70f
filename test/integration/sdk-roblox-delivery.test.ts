import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";
import { notHealth } from "../support/roblox.js";

/**
 * The Luau SDK against the real service, continued (sdk-roblox.test.ts): economy pushes and the
 * shutdown flush, the economy queue's bound and keys, and a refused API key. In a file of its own:
 * luau-web's heap is fixed, so one file holds about a dozen simulated servers.
 */
const t = sdkSuite();
const { start, groups } = t;

describe("Roblox SDK against the real service: economy, shutdown and a refused key", () => {
  it("flushes the queue and economy pushes when the server closes", async () => {
    await start();
    await t.rbx.run(`
      local Players = game:GetService("Players")
      Players.PlayerRemoving:Connect(function(player)
        -- a ProfileStore profile: the SDK sends profile.Data
        local profile = { Data = { RPCharacterOne = { Name = "Char " .. player.Name, Cash = player.UserId, InATM = 5, DarkCoin = 1 } },
          MetaData = { SessionLoadCount = 3 } }
        Monitor.economy.push(player, profile)
      end)
    `);
    for (let id = 3001; id <= 3150; id++) await t.rbx.addPlayer(id, `Player${id}`);
    await t.rbx.fireError("ServerScriptService.Save:3: save failed", "ServerScriptService.Save:3\n", "ServerScriptService.Save");
    for (let id = 3001; id <= 3150; id++) await t.rbx.removePlayer(id);
    expect(t.rbx.requests).toEqual([]);
    expect(await t.rbx.shutdown()).toBe(true);
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => JSON.parse(r.body).players.length)).toEqual([100, 50]);
    expect(t.rbx.requests.filter(notHealth).every((r) => r.status === 200)).toBe(true);
    expect((await groups()).map((g) => g.count)).toEqual(["1"]);
    const snapshots = await t.app.sql<{ user_id: string; cash: string; bank: string; username: string; display_names: string[] }[]>`
      select user_id::text, cash::text, bank::text, username, display_names from economy_snapshots where project_id = ${t.projectId} order by user_id`;
    expect(snapshots).toHaveLength(150);
    expect(snapshots[0]).toMatchObject({ user_id: "3001", cash: "3001", bank: "5", username: "Player3001", display_names: ["Char Player3001"] });
  });

  it("drops the oldest economy pushes past the bound and reports how many", async () => {
    await start("maxEconomyQueueSize = 3");
    await t.rbx.run(`
      for id = 701, 705 do
        assert(Monitor.economy.push({ UserId = id, Name = "p" .. id }, { RPCharacterOne = { Cash = id } }))
      end
      Monitor.captureMessage("after the pushes", "info")
      return Monitor.flush(10)
    `);
    const users = await t.app.sql<{ user_id: string }[]>`select user_id::text from economy_snapshots where project_id = ${t.projectId} order by user_id`;
    expect(users.map((u) => u.user_id)).toEqual(["703", "704", "705"]);
    expect(reportedLosses(t.rbx.requests)).toEqual({ "economy:queue_overflow": 2 });
  });

  it("sends each economy batch with its own Idempotency-Key, the same on its retries, so a late retry writes no old balances", async () => {
    await start();
    t.mode = { kind: "lose-response", times: 1 };
    await t.rbx.run(`
      assert(Monitor.economy.push({ UserId = 801, Name = "p801" }, { RPCharacterOne = { Cash = 10 } }))
      return Monitor.flush(10)
    `);
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => r.status)).toEqual(["network error", 200]);
    const key = economy[0].headers["idempotency-key"];
    expect(key).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/i);
    expect(economy[1].headers["idempotency-key"]).toBe(key);
    // the first attempt was written; its retry was answered from the key
    const [{ n }] = await t.app.sql<{ n: number }[]>`select count(*)::int as n from economy_idempotency where project_id = ${t.projectId} and key = ${key}`;
    expect(n).toBe(1);
    const [snapshot] = await t.app.sql<{ cash: string }[]>`select cash::text from economy_snapshots where project_id = ${t.projectId} and user_id = 801`;
    expect(snapshot.cash).toBe("10");
  });

  it("keeps what is queued with one warning when the key is refused, retries minutes apart, and tries each lane once more at shutdown", async () => {
    t.apiKey = "rbx_not_a_key";
    await start();
    await t.rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await t.rbx.advance(12);
    expect(t.rbx.requests.filter(notHealth).map((r) => r.status)).toEqual([401]);
    for (let i = 0; i < 10; i++) await t.rbx.fireError(`ServerScriptService.A:1: y${i}`, "", "ServerScriptService.A");
    await t.rbx.run(`Monitor.captureMessage("after") Monitor.economy.push({ UserId = 5, Name = "p" }, { RPCharacterOne = {} })`);
    await t.rbx.advance(120);
    // a refused key backs off for minutes, not seconds (each lane on its own)
    const path = (r: { url: string; status: unknown }) => [new URL(r.url).pathname, r.status];
    expect(t.rbx.requests.filter(notHealth).map(path)).toEqual([
      ["/api/ingest", 401],
      ["/api/economy/ingest", 401],
    ]);
    expect(await t.rbx.run(`return Monitor.status().queued`)).toBe(12);
    expect(await t.rbx.shutdown()).toBe(true);
    expect(t.rbx.requests.filter(notHealth).slice(2).map(path)).toEqual([
      ["/api/ingest", 401],
      ["/api/economy/ingest", 401],
    ]);
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/the API key was refused \(HTTP 401/);
  });
});
