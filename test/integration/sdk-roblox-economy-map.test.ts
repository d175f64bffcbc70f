import { describe, expect, it } from "vitest";
import { insertMember } from "../../db/members.js";
import { sdkSuite } from "../support/sdk-suite.js";
import { call, login, makeUser } from "../support/team.js";

/**
 * A ProfileStore game's profile pushed by the SDK in real Luau, read by the service through the
 * project's saved currency map (the Coins/Gems example in docs/economy.md): the game sends its own layout, the
 * server maps it, and a NaN the game saved is reported as a skipped value, not a lost player.
 */
const t = sdkSuite();

describe("Roblox SDK economy push through a currency map", () => {
  it("lands a ProfileStore profile's Coins and Gems as balances, and reports a NaN", async () => {
    const owner = await makeUser(t.app.sql);
    await insertMember(t.app.sql, t.projectId, owner.id, "owner");
    const cookie = await login(t.app, owner.email);
    const map = {
      currencies: [
        { key: "coins", name: "Coins", paths: ["Coins"] },
        { key: "gems", name: "Gems", paths: ["Gems", "Pets[*].Gems"] },
      ],
      names: [],
      data_code: null,
      match: [],
    };
    expect((await call(t.app, "PUT", `/api/team/projects/${t.projectId}/economy-map`, { cookie, body: map })).status).toBe(200);

    expect(await t.start()).toBe(true);
    const pushed = await t.rbx.run(`
      -- what ProfileStore keeps in a data store: the game's table under Data, beside MetaData
      local function profileOf(coins, gems, pets)
        return { Data = { Coins = coins, Gems = gems, Pets = pets, Inventory = { "Sword" } }, MetaData = { ProfileCreateTime = 1763800000, SessionLoadCount = 4 } }
      end
      local a = Monitor.economy.push({ UserId = 5001, Name = "ava" }, profileOf(1250, 40, { { Name = "Cat", Gems = 2 }, { Name = "Dog", Gems = 3 } }))
      local b = Monitor.economy.push({ UserId = 5002, Name = "ben" }, profileOf(0 / 0, 7, {}))
      return a and b and Monitor.flush(10)
    `);
    expect(pushed).toBe(true);
    const economy = t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => r.status)).toEqual([200]);
    const rows = await t.app.sql<any[]>`
      select user_id::text, balances, total::text, cash::text, skipped_values, skipped_count, username
      from economy_snapshots where project_id = ${t.projectId} order by user_id`;
    expect(rows).toEqual([
      { user_id: "5001", balances: { coins: "1250", gems: "45" }, total: "1295", cash: "0", skipped_values: null, skipped_count: 0, username: "ava" },
      {
        user_id: "5002",
        balances: { coins: "0", gems: "7" },
        total: "7",
        cash: "0",
        skipped_values: [{ currency: "coins", path: "Coins", reason: "is NaN" }],
        skipped_count: 1,
        username: "ben",
      },
    ]);
    expect(t.rbx.warnings).toEqual([]);
  });
});
