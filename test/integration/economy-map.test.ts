import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { PROFILESTORE_MAP } from "../support/economy-maps.js";
import { call, projectWithRoles, signedInRoles, type RoleUsers } from "../support/team.js";

/**
 * A project's currency map through the Team API, and pushes read through it: every currency stored,
 * values that are not amounts skipped with their reasons, a map change applying to new observations
 * only, and the preview of a pasted or the last pushed profile.
 */
let app: TestApp;
let users: RoleUsers;
let projectId: string;
let apiKey: string;

const mapPath = (pid = projectId) => `/api/team/projects/${pid}/economy-map`;
const push = (players: unknown[], key = apiKey) => postJson(app, "/api/economy/ingest", { players }, key);

/** A ProfileStore game with Coins and Gems. */
const GEMS_MAP = PROFILESTORE_MAP;
const wrapped = (data: Record<string, unknown>) => ({ Data: data, MetaData: { ProfileCreateTime: 1, SessionLoadCount: 2 } });

async function snapshot(userId: string) {
  const [s] = await app.sql<any[]>`
    select balances, total::text, cash::text, bank::text, dark_coin::text, skipped_values, skipped_count,
      first_observed_at, observed_at, day_start
    from economy_snapshots where project_id = ${projectId} and user_id = ${userId}`;
  return s;
}
async function history(userId: string) {
  return app.sql<any[]>`
    select balances, total::text, prev_balances, prev_total::text, day_start from economy_history
    where project_id = ${projectId} and user_id = ${userId} order by id`;
}

beforeAll(async () => {
  app = await startTestApp();
  users = await signedInRoles(app);
}, 60_000);
afterAll(() => app?.close());
beforeEach(async () => {
  ({ projectId, apiKey } = await projectWithRoles(app.sql, users));
});

describe("Team API: /economy-map", () => {
  it("starts with the seed's map, which every member can read", async () => {
    const r = await call(app, "GET", mapPath(), { cookie: users.member.cookie });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ is_default: true, updated_at: null });
    expect(r.body.map.currencies.map((c: any) => c.key)).toEqual(["cash", "bank", "dark_coin"]);
    expect(r.body.map.currencies[0].paths).toEqual(["RPCharacterOne.Cash", "RPCharacterTwo.Cash"]);
    expect((await call(app, "GET", mapPath(), { cookie: users.outsider.cookie })).status).toBe(404);
    expect((await call(app, "GET", mapPath())).status).toBe(401);
  });

  it("saves a map for an owner or admin, in canonical form, and resets it to the seed's", async () => {
    const body = { ...GEMS_MAP, currencies: [{ key: "gems", name: "Gems", paths: [" Slots[*].Gems ", 'Bank["Gem Vault"]'] }] };
    const put = await call(app, "PUT", mapPath(), { cookie: users.admin.cookie, body });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ is_default: false, map: { currencies: [{ key: "gems", paths: ["Slots[*].Gems", 'Bank["Gem Vault"]'] }] } });
    expect(typeof put.body.updated_at).toBe("string");
    const got = await call(app, "GET", mapPath(), { cookie: users.member.cookie });
    expect(got.body).toEqual(put.body);
    const [row] = await app.sql`select updated_by::text from economy_maps where project_id = ${projectId}`;
    expect(row.updated_by).toBe(users.admin.id);

    const reset = await call(app, "DELETE", mapPath(), { cookie: users.owner.cookie });
    expect(reset.status).toBe(200);
    expect(reset.body).toMatchObject({ is_default: true, updated_at: null });
    expect(reset.body.map.currencies.map((c: any) => c.key)).toEqual(["cash", "bank", "dark_coin"]);
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
  });

  it("refuses a member's change (403) and writes nothing", async () => {
    expect((await call(app, "PUT", mapPath(), { cookie: users.member.cookie, body: GEMS_MAP })).status).toBe(403);
    expect((await call(app, "DELETE", mapPath(), { cookie: users.member.cookie })).status).toBe(403);
    expect((await call(app, "PUT", mapPath(), { cookie: users.outsider.cookie, body: GEMS_MAP })).status).toBe(404);
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
  });

  it("answers 400 naming each bad field and writes nothing", async () => {
    const cases: [unknown, string][] = [
      [{ currencies: [] }, "currencies"],
      [{ currencies: [{ key: "total", name: "Total", paths: ["Coins"] }] }, "currencies[0].key"],
      [{ currencies: [{ key: "Coins", name: "Coins", paths: ["Coins"] }] }, "currencies[0].key"],
      [{ currencies: [{ key: "coins", name: "Coins", paths: ["Coins..Gold"] }] }, "currencies[0].paths[0]"],
      [{ currencies: [{ key: "coins", name: "Coins", paths: ["Slots[0].Gems"] }] }, "currencies[0].paths[0]"],
      [{ currencies: [{ key: "coins", name: "Coins", paths: ["My Coins"] }] }, "currencies[0].paths[0]"],
      [{ currencies: [{ key: "coins", name: "Coins", paths: [] }] }, "currencies[0].paths"],
      [{ currencies: [{ key: "a", name: "A", paths: ["A"] }, { key: "a", name: "B", paths: ["B"] }] }, "currencies[1].key"],
      [{ ...GEMS_MAP, extra: 1 }, ""],
      [{ ...GEMS_MAP, data_code: "Data[" }, "data_code"],
      ["not a map", ""],
    ];
    for (const [body, path] of cases) {
      const r = await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(typeof r.body.message).toBe("string");
      if (path) expect(r.body.details.map((d: any) => d.path)).toContain(path);
    }
    const words = await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body: { currencies: [{ key: "coins", name: "Coins", paths: ["My Coins"] }] } });
    expect(words.body.details[0].message).toContain('["My Coins"]');
    expect((await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body: "{not json" })).status).toBe(400);
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
  });
});

describe("pushes through a project's map", () => {
  it("stores every currency, the exact total, and the seed fields as 0 when the map lacks them", async () => {
    expect((await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body: GEMS_MAP })).status).toBe(200);
    const r = await push([{ user_id: 1, profile: wrapped({ Coins: 9007199254740993, Gems: 12.5 }) }]);
    expect(r.body).toEqual({ stored: 1, skipped: 0, skipped_values: 0, skipped_reasons: [] });
    const s = await snapshot("1");
    expect(s).toMatchObject({
      // 2^53 + 1 is not a double: it arrives as 2^53
      balances: { coins: "9007199254740992", gems: "12.5" },
      total: "9007199254741004.5",
      cash: "0",
      bank: "0",
      dark_coin: "0",
      skipped_values: null,
      skipped_count: 0,
    });
    // a new player's day starts at their opening balance
    const opening = { coins: "9007199254740992", gems: "12.5", total: "9007199254741004.5" };
    expect(s.day_start).toEqual(opening);
    expect(s.first_observed_at).toEqual(s.observed_at);
    expect(await history("1")).toEqual([
      { balances: { coins: "9007199254740992", gems: "12.5" }, total: "9007199254741004.5", prev_balances: null, prev_total: null, day_start: opening },
    ]);
    // the v1 player read carries the three seed fields whatever the map
    const player = await getJson(app, "/api/v1/economy/players/1", apiKey);
    expect(player.body.player).toMatchObject({ cash: "0", bank: "0", dark_coin: "0", total: "9007199254741004.5" });
  });

  it("skips NaN, infinite and non-numeric values with their reasons; the batch is stored", async () => {
    expect((await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body: GEMS_MAP })).status).toBe(200);
    const r = await push([
      { user_id: 10, profile: { Coins: "NaN", Gems: 5 } },
      { user_id: "x", profile: { Coins: 1 } },
      { user_id: 11, profile: { Coins: "Infinity", Gems: "lots" } },
      { user_id: 12, profile: { Coins: 7, Gems: true } },
      { user_id: 13, profile: { Level: 3 } },
      { user_id: 14, profile: { Coins: 1e308, Gems: { Amount: 1 } } },
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      stored: 4,
      skipped: 2,
      skipped_values: 5,
      skipped_reasons: [
        { index: 1, user_id: null, reason: expect.stringContaining("user_id") },
        { index: 4, user_id: "13", reason: "no path of the currency map is in the profile" },
        { index: 0, user_id: "10", currency: "coins", path: "Coins", reason: "is NaN" },
        { index: 2, user_id: "11", currency: "coins", path: "Coins", reason: "is infinite" },
        { index: 2, user_id: "11", currency: "gems", path: "Gems", reason: "is a string, not a number" },
        { index: 3, user_id: "12", currency: "gems", path: "Gems", reason: "is a boolean, not a number" },
        { index: 5, user_id: "14", currency: "gems", path: "Gems", reason: "is a table, not a number" },
      ],
    });
    expect(await snapshot("10")).toMatchObject({
      balances: { coins: "0", gems: "5" },
      total: "5",
      skipped_values: [{ currency: "coins", path: "Coins", reason: "is NaN" }],
      skipped_count: 1,
    });
    expect(await snapshot("11")).toMatchObject({ balances: { coins: "0", gems: "0" }, total: "0", skipped_count: 2 });
    expect((await snapshot("14")).balances.coins).toBe(`1${"0".repeat(308)}`);
    // the next clean push clears them
    await push([{ user_id: 10, profile: { Coins: 1, Gems: 5 } }]);
    expect(await snapshot("10")).toMatchObject({ skipped_values: null, skipped_count: 0, total: "6" });
  });

  it("applies a map change to new observations only; history keeps what it was read with", async () => {
    // seed map first: cash and bank of the RP layout
    const rp = (cash: number, bank: number, extra: Record<string, unknown> = {}) => ({ RPCharacterOne: { Cash: cash, InATM: bank }, ...extra });
    await push([{ user_id: 20, profile: rp(100, 50, { Gems: 7 }) }, { user_id: 21, profile: rp(10, 0) }]);
    const first = await snapshot("20");
    expect(first.balances).toEqual({ cash: "100", bank: "50", dark_coin: "0" });

    const map = { currencies: [{ key: "cash", name: "Cash", paths: ["RPCharacterOne.Cash"] }, { key: "gems", name: "Gems", paths: ["Gems"] }] };
    expect((await call(app, "PUT", mapPath(), { cookie: users.owner.cookie, body: map })).status).toBe(200);
    // nothing stored is recomputed by the change
    expect((await snapshot("20")).balances).toEqual({ cash: "100", bank: "50", dark_coin: "0" });

    await push([{ user_id: 20, profile: rp(100, 50, { Gems: 7 }) }]);
    const s = await snapshot("20");
    expect(s).toMatchObject({ balances: { cash: "100", gems: "7" }, total: "107", bank: "0" });
    expect(s.first_observed_at).toEqual(first.first_observed_at);
    // the player's first observation is their opening balance: the day starts there
    const opening = { cash: "100", bank: "50", dark_coin: "0", total: "150" };
    expect(await history("20")).toEqual([
      { balances: { cash: "100", bank: "50", dark_coin: "0" }, total: "150", prev_balances: null, prev_total: null, day_start: opening },
      {
        balances: { cash: "100", gems: "7" },
        total: "107",
        prev_balances: { cash: "100", bank: "50", dark_coin: "0" },
        prev_total: "150",
        // the same UTC day as the player's first observation: the day started at the opening balance
        day_start: opening,
      },
    ]);
    // the same values read the same: no history row
    await push([{ user_id: 20, profile: rp(100, 50, { Gems: 7 }) }]);
    expect(await history("20")).toHaveLength(2);

    // the money supply is still the sum of the latest totals (21 still holds what the seed map read)
    const summary = await getJson(app, "/api/v1/economy/summary?days=1", apiKey);
    expect(summary.body.money_supply.at(-1).supply).toBe("117");
    const [{ sum }] = await app.sql`select sum(total)::text as sum from economy_snapshots where project_id = ${projectId}`;
    expect(sum).toBe("117");

    // back to the seed's map: the next push reads cash, bank and dark coin again
    expect((await call(app, "DELETE", mapPath(), { cookie: users.owner.cookie })).status).toBe(200);
    await push([{ user_id: 20, profile: rp(100, 50, { Gems: 7 }) }]);
    expect(await snapshot("20")).toMatchObject({ balances: { cash: "100", bank: "50", dark_coin: "0" }, total: "150" });
  });

  it("carries the day's starting point from the previous day's balances", async () => {
    await push([{ user_id: 30, profile: { RPCharacterOne: { Cash: 10 } } }]);
    // the first observation moves to yesterday, as if pushed then
    await app.sql`
      update economy_snapshots set history_observed_at = history_observed_at - interval '1 day'
      where project_id = ${projectId} and user_id = 30`;
    await push([{ user_id: 30, profile: { RPCharacterOne: { Cash: 25 } } }]);
    await push([{ user_id: 30, profile: { RPCharacterOne: { Cash: 40 } } }]);
    const h = await history("30");
    const yesterday = { cash: "10", bank: "0", dark_coin: "0", total: "10" };
    // the first row's day starts at itself (the opening balance)
    expect(h.map((r) => r.day_start)).toEqual([yesterday, yesterday, yesterday]);
    expect((await snapshot("30")).day_start).toEqual(yesterday);
  });
});

describe("preview", () => {
  const previewPath = (pid = projectId) => `/api/team/projects/${pid}/economy-map/preview`;

  it("reads a pasted profile through a posted map without saving either; any member", async () => {
    const r = await call(app, "POST", previewPath(), {
      cookie: users.member.cookie,
      body: { map: GEMS_MAP, profile: wrapped({ Coins: 3, Gems: "NaN" }) },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      profile_source: "posted",
      sample: null,
      result: {
        ok: true,
        profile: { balances: { coins: "3", gems: "0" }, total: "3", skipped_values: [{ currency: "gems", path: "Gems", reason: "is NaN" }] },
        matches: [{ currency: "coins", path: "Coins", value: "3" }],
      },
    });
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
    expect(await app.sql`select 1 from economy_snapshots where project_id = ${projectId}`).toHaveLength(0);
  });

  it("reads the last pushed profile with the saved map, and answers 400 when none was pushed", async () => {
    const none = await call(app, "POST", previewPath(), { cookie: users.member.cookie, body: {} });
    expect(none.status).toBe(400);
    expect(none.body).toMatchObject({ error: "invalid_payload", details: [{ path: "profile" }] });

    await push([{ user_id: 40, profile: { RPCharacterOne: { Cash: 5, InATM: 6, DarkCoin: 1 }, Coins: 4 } }]);
    const seed = await call(app, "POST", previewPath(), { cookie: users.member.cookie, body: {} });
    expect(seed.status).toBe(200);
    expect(seed.body).toMatchObject({
      profile_source: "last_pushed",
      sample: { user_id: "40" },
      result: { ok: true, profile: { balances: { cash: "5", bank: "6", dark_coin: "1" }, total: "12" } },
    });
    const gems = await call(app, "POST", previewPath(), { cookie: users.member.cookie, body: { map: GEMS_MAP } });
    expect(gems.body.result.profile).toMatchObject({ balances: { coins: "4", gems: "0" }, total: "4" });
    // a pasted value that is not a profile: the reason, not an error
    const bad = await call(app, "POST", previewPath(), { cookie: users.member.cookie, body: { profile: "text" } });
    expect(bad.body.result).toEqual({ ok: false, reason: expect.stringContaining("table") });
    // a bad map is a 400 naming it
    const badMap = await call(app, "POST", previewPath(), { cookie: users.member.cookie, body: { map: { currencies: [] } } });
    expect(badMap.status).toBe(400);
    expect((await call(app, "POST", previewPath(), { cookie: users.outsider.cookie, body: {} })).status).toBe(404);
  });

  it("does not keep a pushed profile past 256 KB", async () => {
    const big = { RPCharacterOne: { Cash: 1 }, Inventory: "x".repeat(300 * 1024) };
    expect((await push([{ user_id: 50, profile: big }])).body.stored).toBe(1);
    expect(await app.sql`select 1 from economy_profile_samples where project_id = ${projectId}`).toHaveLength(0);
  });
});
