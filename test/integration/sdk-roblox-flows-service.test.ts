import { describe, expect, it } from "vitest";
import { putEconomyMap } from "../../db/economy-maps.js";
import { sdkSuite } from "../support/sdk-suite.js";
import { getJson } from "../support/server.js";

/**
 * `Monitor.economy.flow` end to end, in real Luau against the real service: a Coins/Gems game
 * records its sources and sinks and pushes its players; the service stores the flows per player
 * and flags the gain they do not explain (docs/economy.md, "Flows").
 */
const t = sdkSuite();

/** A ProfileStore game whose template is `{ Coins = 0, Gems = 0 }`: each currency at its own key. */
const COINS_GEMS = { currencies: ["Coins", "Gems"].map((name) => ({ key: name.toLowerCase(), name, paths: [name] })), names: [], data_code: null, match: [] };

describe("Monitor.economy.flow against the service", () => {
  it("stores each player's flows and flags the gain they do not explain", async () => {
    await putEconomyMap(t.app.sql, t.projectId, COINS_GEMS, null);
    expect(await t.start()).toBe(true);
    const flushed = await t.rbx.run(`
      local ava = { UserId = 7001, Name = "ava" }
      local ben = { UserId = 7002, Name = "ben" }
      local function profile(coins, gems) return { Data = { Coins = coins, Gems = gems }, MetaData = { SessionLoadCount = 1 } } end
      local ok = true
      -- the game records gems flows from before the players' first observations
      ok = ok and Monitor.economy.flow(ava, "gems", 5, "quest", "tutorial")
      ok = ok and Monitor.flush(10)
      ok = ok and Monitor.economy.push(ava, profile(100, 15))
      ok = ok and Monitor.economy.push(ben, profile(0, 0))
      ok = ok and Monitor.flush(10)
      -- ava: a quest gives 50 gems, the shop takes 30 coins; then 2000 gems appear from nowhere
      ok = ok and Monitor.economy.flow(ava, "gems", 50, "quest", "daily_1")
      ok = ok and Monitor.economy.flow(ava, "coins", -30, "Shop", "iron_sword")
      -- ben buys 100 gems with Robux: his gain is explained
      ok = ok and Monitor.economy.flow(ben.UserId, "gems", 100, "purchase", "gem_pack_small")
      ok = ok and Monitor.economy.push(ava, profile(70, 2065))
      ok = ok and Monitor.economy.push(ben, profile(0, 100))
      return ok and Monitor.flush(10)
    `);
    expect(flushed).toBe(true);
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(t.rbx.warnings).toEqual([]);
    expect(await t.rbx.run(`return next(Monitor.status().dropped) == nil`)).toBe(true);

    const stored = await t.app.sql<{ user_id: string; currency: string; amount: string; source: string; item: string | null; timed: boolean }[]>`
      select user_id::text, currency, amount::text, source, item, occurred_at is not null as timed
      from economy_flows where project_id = ${t.projectId} order by id`;
    expect(stored).toEqual([
      { user_id: "7001", currency: "gems", amount: "5", source: "quest", item: "tutorial", timed: true },
      { user_id: "7001", currency: "gems", amount: "50", source: "quest", item: "daily_1", timed: true },
      { user_id: "7001", currency: "coins", amount: "-30", source: "shop", item: "iron_sword", timed: true },
      { user_id: "7002", currency: "gems", amount: "100", source: "purchase", item: "gem_pack_small", timed: true },
    ]);

    // 15 → 2065 gems with 50 recorded: 2000 unexplained; ben's 100 is explained, coins fell
    const unexplained = await getJson(t.app, "/api/v1/economy/unexplained?currency=gems", t.apiKey);
    expect(unexplained.status).toBe(200);
    const rows = listIn(unexplained.body);
    expect(rows).toEqual([expect.objectContaining({ user_id: "7001", currency: "gems", explained: "50", unexplained: "2000" })]);

    const ava = await getJson(t.app, "/api/v1/economy/players/7001", t.apiKey);
    expect(ava.status).toBe(200);
    expect(ava.body.flows).toHaveLength(3);
    expect(ava.body.flows).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ currency: "gems", amount: "50", source: "quest", item: "daily_1" }),
        expect.objectContaining({ currency: "coins", amount: "-30", source: "shop", item: "iron_sword" }),
      ]),
    );
    expect(ava.body.unexplained).toEqual([expect.objectContaining({ currency: "gems", unexplained: "2000" })]);
    const ben = await getJson(t.app, "/api/v1/economy/players/7002", t.apiKey);
    expect(ben.body.flows).toEqual([expect.objectContaining({ currency: "gems", amount: "100", source: "purchase" })]);
    expect(ben.body.unexplained).toEqual([]);
  });
});

/** The list of a paged answer (`data`, as the other economy lists have it, or `items`). */
function listIn(body: any): any[] {
  return body?.data ?? body?.items ?? body?.unexplained;
}
