import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putEconomyMap } from "../../db/economy-maps.js";
import { createProject, getJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * Reads per currency on a Coins/Gems map. The data is written with SQL, as any writer leaves it:
 * history rows with their balances and total (the triggers fill the previous observation, the day's
 * starting point, the per-currency rises and the per-day faucet/sink aggregates) and one snapshot per
 * player with its latest balances and when it was first observed.
 */

const COINS_GEMS = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Data.Wallet.Coins"] },
    { key: "gems", name: "Gems", paths: ["Data.Wallet.Gems"] },
  ],
  names: [],
  data_code: null,
  match: ["Data"],
};

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

type Obs = [user: number, daysAgo: number, second: number, balances: Record<string, string | number>];

/** Writes each observation as a history row (one statement each, in order) and the players' latest snapshots. */
async function seed(projectId: string, observations: Obs[]) {
  const sql = app.sql;
  const at = (daysAgo: number, second: number) =>
    sql`date_trunc('day', now(), 'UTC') - make_interval(days => ${daysAgo}) + make_interval(secs => ${second})`;
  const latest = new Map<number, { daysAgo: number; second: number; balances: Record<string, string>; total: string; first: [number, number] }>();
  for (const [user, daysAgo, second, raw] of observations) {
    const balances = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
    const total = Object.values(balances).reduce((a, v) => a + BigInt(v), 0n).toString();
    const [cash, bank, dark] = [balances.cash ?? "0", balances.bank ?? "0", balances.dark_coin ?? "0"];
    await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source)
      values (${projectId}, ${user}, ${cash}, ${bank}, ${dark}, ${total}, ${sql.json(balances)}, ${at(daysAgo, second)}, 'push')`;
    latest.set(user, { daysAgo, second, balances, total, first: latest.get(user)?.first ?? [daysAgo, second] });
  }
  for (const [user, l] of latest) {
    await sql`insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
        history_observed_at, first_observed_at, username)
      values (${projectId}, ${user}, ${l.balances.cash ?? "0"}, ${l.balances.bank ?? "0"}, ${l.balances.dark_coin ?? "0"}, ${l.total},
        ${sql.json(l.balances)}, ${at(l.daysAgo, l.second)}, 'push', ${at(l.daysAgo, l.second)}, ${at(...l.first)}, ${`player${user}`})
      on conflict (project_id, user_id) do update set cash = excluded.cash, bank = excluded.bank, dark_coin = excluded.dark_coin,
        total = excluded.total, balances = excluded.balances, observed_at = excluded.observed_at, history_observed_at = excluded.history_observed_at`;
  }
}

describe("a Coins/Gems economy read per currency", () => {
  let apiKey: string;
  let projectId: string;
  const get = (path: string) => getJson(app, path, apiKey);

  beforeAll(async () => {
    ({ apiKey, projectId } = await createProject(app.sql, "Coins and Gems"));
    await putEconomyMap(app.sql, projectId, COINS_GEMS, null);
    await seed(projectId, [
      // two days ago: both first observed (their opening balances: new players' wealth, not a gain)
      [1, 2, 60, { coins: 100, gems: 5 }],
      [2, 2, 60, { coins: 1000, gems: 0 }],
      // yesterday: 1 gains 200 then loses 50 (net +150); 2 gains 4,000 then loses 4,300 (net -300: a loser)
      [1, 1, 60, { coins: 300, gems: 5 }],
      [2, 1, 120, { coins: 5000, gems: 0 }],
      [1, 1, 180, { coins: 250, gems: 5 }],
      [2, 1, 240, { coins: 700, gems: 0 }],
      // today: 1 spends 200 coins and dupes gems 5 -> 1,000; 3 is first observed (opens with 10 coins, 2 gems)
      [1, 0, 1, { coins: 50, gems: 1000 }],
      [3, 0, 2, { coins: 10, gems: 2 }],
    ]);
  });

  it("sums every currency and answers the selected one's median, p99, top players and histogram", async () => {
    const r = await get("/api/v1/economy/summary?days=3&currency=coins");
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b.currency).toBe("coins");
    expect(b.currencies).toEqual([{ key: "coins", name: "Coins" }, { key: "gems", name: "Gems" }]);
    expect(b.players).toBe(3);
    expect(b.sums).toEqual({ cash: "0", bank: "0", dark_coin: "0", total: "1762", balances: { coins: "760", gems: "1002" } });
    // coins 10, 50, 700; totals 12, 700, 1050
    expect([b.median, b.p99, b.median_total, b.p99_total]).toEqual(["50", "700", "700", "1050"]);
    expect(b.top_players.map((p: any) => [p.user_id, p.balances])).toEqual([
      ["2", { coins: "700", gems: "0" }],
      ["1", { coins: "50", gems: "1000" }],
      ["3", { coins: "10", gems: "2" }],
    ]);
    expect(b.wealth_histogram).toEqual([
      { min: "10", max: "100", count: 2 },
      { min: "100", max: "1000", count: 1 },
    ]);
    const gems = (await get("/api/v1/economy/summary?days=3&currency=gems")).body;
    expect(gems.top_players.map((p: any) => p.user_id)).toEqual(["1", "3", "2"]);
    expect([gems.median, gems.p99]).toEqual(["2", "1000"]);
    // the total is the default and keeps today's answers
    const total = (await get("/api/v1/economy/summary?days=3")).body;
    expect(total.currency).toBe("total");
    expect(total.top_players.map((p: any) => p.user_id)).toEqual(["1", "2", "3"]);
    expect([total.median, total.p99]).toEqual([total.median_total, total.p99_total]);
  });

  it("splits each day into what gainers gained and losers lost, by the day's net, apart from new players' openings, with the day's growth", async () => {
    const coins = (await get("/api/v1/economy/summary?days=3&currency=coins")).body.money_supply;
    expect(coins).toEqual([
      { day: expect.any(String), supply: "1100", change: "1100", opening: "1100", newcomers: 2, growth_pct: null, gained: "0", lost: "0", gainers: 0, losers: 0 },
      { day: expect.any(String), supply: "950", change: "-150", opening: "0", newcomers: 0, growth_pct: -13.64, gained: "150", lost: "300", gainers: 1, losers: 1 },
      // (-190 - 10 brought by player 3) / 950
      { day: new Date().toISOString().slice(0, 10), supply: "760", change: "-190", opening: "10", newcomers: 1, growth_pct: -21.05, gained: "0", lost: "200", gainers: 0, losers: 1 },
    ]);
    const gems = (await get("/api/v1/economy/summary?days=3&currency=gems")).body.money_supply;
    expect(gems.map((d: any) => [d.supply, d.change, d.opening, d.newcomers, d.growth_pct, d.gained, d.lost, d.gainers, d.losers])).toEqual([
      // player 2 opens with 0 gems: a newcomer all the same
      ["5", "5", "5", 2, null, "0", "0", 0, 0],
      ["5", "0", "0", 0, 0, "0", "0", 0, 0],
      // the dupe (+995) over 5, without the 2 gems player 3 brought
      ["1002", "997", "2", 1, 19900, "995", "0", 1, 0],
    ]);
    const total = (await get("/api/v1/economy/summary?days=3")).body.money_supply;
    expect(total.map((d: any) => [d.supply, d.change, d.opening, d.newcomers, d.gained, d.lost, d.gainers, d.losers])).toEqual([
      ["1105", "1105", "1105", 2, "0", "0", 0, 0],
      ["955", "-150", "0", 0, "150", "300", 1, 1],
      ["1762", "807", "12", 1, "795", "0", 1, 0],
    ]);
    // a window reaching before the first day: supply 0, no growth
    const longer = (await get("/api/v1/economy/summary?days=5&currency=coins")).body.money_supply;
    expect(longer[0]).toMatchObject({ supply: "0", change: "0", growth_pct: null, gainers: 0, losers: 0 });
    expect(longer[2]).toMatchObject({ supply: "1100", growth_pct: null });
  });

  it("reports the newcomers of the window and the median of their balance", async () => {
    expect((await get("/api/v1/economy/summary?days=1&currency=coins")).body.newcomers).toEqual({ players: 1, median: "10" });
    expect((await get("/api/v1/economy/summary?days=2&currency=gems")).body.newcomers).toEqual({ players: 1, median: "2" });
    expect((await get("/api/v1/economy/summary?days=3&currency=coins")).body.newcomers).toEqual({ players: 3, median: "50" });
    expect((await get("/api/v1/economy/summary?days=3")).body.newcomers).toEqual({ players: 3, median: "700" });
  });

  it("finds anomalies per currency, from the rises of that currency", async () => {
    const gems = await get("/api/v1/economy/anomalies?currency=gems&factor=10&min_amount=100");
    expect(gems.status).toBe(200);
    expect(gems.body).toMatchObject({ total: 1, currency: "gems", factor: 10, min_amount: "100", thresholds: { gems: { factor: 10, min_amount: "100", source: "request" } } });
    expect(Object.keys(gems.body.thresholds)).toEqual(["gems"]);
    expect(gems.body.data[0]).toMatchObject({
      user_id: "1",
      username: "player1",
      currency: "gems",
      from_amount: "5",
      to_amount: "1000",
      increase: "995",
      factor: 200,
      from_total: "255",
      to_total: "1050",
      balances: { coins: "50", gems: "1000" },
      source: "push",
      threshold: { factor: 10, min_amount: "100", source: "request" },
    });
    // every currency on its own by default: the gems dupe is listed although the total only rose 4.1× (255 -> 1050)
    for (const q of ["factor=10&min_amount=100", "currency=total&factor=10&min_amount=100", "currency=ALL&factor=10&min_amount=100"]) {
      const all = (await get(`/api/v1/economy/anomalies?${q}`)).body;
      expect(all, q).toMatchObject({ total: 1, currency: "all", data: [{ user_id: "1", currency: "gems", from_amount: "5", to_amount: "1000" }] });
      expect(Object.keys(all.thresholds), q).toEqual(["coins", "gems"]);
    }
    // and under the defaults: too few rises to learn from, so each currency's minimum is its median
    // positive balance (gems: 1,000 and 2 held, so 2): the small game's dupe is found without a setting
    const byDefault = (await get("/api/v1/economy/anomalies")).body;
    expect(byDefault.thresholds).toEqual({
      coins: { factor: 10, min_amount: "50", off: false, source: "default", rises: 2 },
      gems: { factor: 10, min_amount: "2", off: false, source: "default", rises: 1 },
    });
    expect(byDefault.data.map((a: any) => [a.user_id, a.currency, a.from_amount, a.to_amount])).toEqual([["1", "gems", "5", "1000"]]);
    const coins = await get("/api/v1/economy/anomalies?currency=coins&factor=2&min_amount=100");
    expect(coins.body.data.map((a: any) => [a.user_id, a.from_amount, a.to_amount])).toEqual([
      ["2", "1000", "5000"],
      ["1", "100", "300"],
    ]);
    expect((await get("/api/v1/economy/anomalies?currency=coins&factor=2&min_amount=100&limit=1&offset=1")).body).toMatchObject({ total: 2, data: [{ user_id: "1" }] });
    expect((await get("/api/v1/economy/anomalies?currency=coins&factor=2&min_amount=100&offset=5")).body).toMatchObject({ total: 2, data: [] });
  });

  it("sorts players by any currency of the map and carries their balances", async () => {
    const r = await get("/api/v1/economy/players?sort=gems");
    expect(r.body).toMatchObject({ sort: "gems", total: 3 });
    expect(r.body.data.map((p: any) => p.user_id)).toEqual(["1", "3", "2"]);
    expect(r.body.data[0]).toMatchObject({ balances: { coins: "50", gems: "1000" }, cash: "0", bank: "0", dark_coin: "0", total: "1050" });
    expect((await get("/api/v1/economy/players?sort=COINS&order=asc")).body.data.map((p: any) => p.user_id)).toEqual(["3", "1", "2"]);
    const detail = await get("/api/v1/economy/players/2");
    expect(detail.body.player).toMatchObject({ balances: { coins: "700", gems: "0" }, skipped_values: [], skipped_count: 0 });
    expect(detail.body.player.first_observed_at).toBe(detail.body.history[0].observed_at);
    expect(detail.body.history.map((h: any) => h.balances.coins)).toEqual(["1000", "5000", "700"]);
  });

  it("answers 400 naming the valid keys for an unknown currency or sort", async () => {
    for (const path of ["/api/v1/economy/summary?currency=cash", "/api/v1/economy/summary?currency=total2"]) {
      const r = await get(path);
      expect(r.status, path).toBe(400);
      expect(r.body.error).toBe("invalid_query");
      expect(r.body.message).toContain("total, coins, gems");
      expect(r.body.details).toEqual([{ path: "currency", message: "must be one of total, coins, gems" }]);
    }
    const anomalies = await get("/api/v1/economy/anomalies?currency=diamonds");
    expect(anomalies.status).toBe(400);
    expect(anomalies.body.details).toEqual([{ path: "currency", message: "must be one of all, total, coins, gems" }]);
    const sort = await get("/api/v1/economy/players?sort=diamonds");
    expect(sort.status).toBe(400);
    expect(sort.body.details[0]).toEqual({ path: "sort", message: "must be one of cash, bank, dark_coin, total, coins, gems" });
    expect((await get("/api/v1/economy/summary?currency=GEMS")).body.currency).toBe("gems");
  });

  it("keeps history as read when the map changes; new observations follow the new map", async () => {
    const p = await createProject(app.sql, "Map change");
    const g = (path: string) => getJson(app, path, p.apiKey);
    await putEconomyMap(app.sql, p.projectId, COINS_GEMS, null);
    await seed(p.projectId, [
      [1, 1, 60, { coins: 100, gems: 40 }],
      [2, 1, 60, { coins: 30, gems: 2 }],
    ]);
    // gems go, tokens come
    await putEconomyMap(app.sql, p.projectId, { ...COINS_GEMS, currencies: [COINS_GEMS.currencies[0], { key: "tokens", name: "Tokens", paths: ["Data.Tokens"] }] }, null);
    const before = (await g("/api/v1/economy/summary?days=2&currency=tokens")).body;
    expect(before.currencies.map((c: any) => c.key)).toEqual(["coins", "tokens"]);
    expect(before.sums.balances).toEqual({ coins: "130", tokens: "0" });
    expect(before.concentration).toEqual({ top1_share: null, top10_share: null });
    expect((await g("/api/v1/economy/summary?currency=gems")).status).toBe(400);
    // player 1 is read again under the new map; player 2 keeps what it was read with
    await seed(p.projectId, [[1, 0, 1, { coins: 100, tokens: 7 }]]);
    const after = (await g("/api/v1/economy/summary?days=2&currency=tokens")).body;
    expect(after.sums).toMatchObject({ total: "139", balances: { coins: "130", tokens: "7" } });
    expect(after.money_supply.map((d: any) => [d.supply, d.change, d.gainers])).toEqual([
      ["0", "0", 0],
      ["7", "7", 1],
    ]);
    const one = (await g("/api/v1/economy/players/1")).body;
    expect(one.player.balances).toEqual({ coins: "100", tokens: "7" });
    expect(one.history.map((h: any) => h.balances)).toEqual([{ coins: "100", gems: "40" }, { coins: "100", tokens: "7" }]);
    expect((await g("/api/v1/economy/players/2")).body.player.balances).toEqual({ coins: "30", gems: "2" });
    // a key the player was not read with sorts as 0
    expect((await g("/api/v1/economy/players?sort=tokens")).body.data.map((x: any) => x.user_id)).toEqual(["1", "2"]);
  });
});

describe("concentration of the supply", () => {
  it("is the share the richest 1% and 10% hold (at least one player), null when the supply is not positive", async () => {
    const p = await createProject(app.sql, "Concentration");
    await putEconomyMap(app.sql, p.projectId, COINS_GEMS, null);
    // 20 players holding 1..20 gems; coins: one in debt, the rest at zero
    await seed(p.projectId, Array.from({ length: 20 }, (_, i): Obs => [i + 1, 0, i, { coins: i === 0 ? -5 : 0, gems: i + 1 }]));
    const gems = (await getJson(app, "/api/v1/economy/summary?currency=gems", p.apiKey)).body;
    // top 1% of 20 players is one (20 of 210), top 10% two (39 of 210)
    expect(gems.concentration).toEqual({ top1_share: 0.0952, top10_share: 0.1857 });
    const coins = (await getJson(app, "/api/v1/economy/summary?currency=coins", p.apiKey)).body;
    expect(coins.sums.balances.coins).toBe("-5");
    expect(coins.concentration).toEqual({ top1_share: null, top10_share: null });
  });
});

describe("amounts past 2^53", () => {
  it("stay exact in sums, supply, growth and anomalies", async () => {
    const p = await createProject(app.sql, "Huge");
    await putEconomyMap(app.sql, p.projectId, COINS_GEMS, null);
    await seed(p.projectId, [
      [1, 1, 60, { coins: "9007199254740993", gems: 0 }],
      [1, 0, 1, { coins: "90071992547409930001", gems: 0 }],
      [2, 0, 2, { coins: "18014398509481985", gems: 0 }],
    ]);
    const g = (path: string) => getJson(app, path, p.apiKey);
    const s = (await g("/api/v1/economy/summary?days=2&currency=coins")).body;
    expect(s.sums.balances.coins).toBe("90090006945919411986");
    expect(s.money_supply.map((d: any) => [d.supply, d.change, d.opening, d.gained, d.growth_pct])).toEqual([
      ["9007199254740993", "9007199254740993", "9007199254740993", "0", null],
      // player 1's gain over the day before, without what player 2 brought
      ["90090006945919411986", "90080999746664670993", "18014398509481985", "90062985348155189008", 999900],
    ]);
    expect([s.median, s.p99]).toEqual(["18014398509481985", "90071992547409930001"]);
    const a = (await g("/api/v1/economy/anomalies?currency=coins&factor=10&min_amount=100")).body;
    expect(a.data).toMatchObject([{ user_id: "1", from_amount: "9007199254740993", to_amount: "90071992547409930001", increase: "90062985348155189008", factor: 10000 }]);
  });
});
