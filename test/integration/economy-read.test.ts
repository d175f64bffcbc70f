import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";

let app: TestApp;
let apiKey: string;
let projectId: string;

const entry = (userId: number, cash: number, bank: number, dark = 0, names: Record<string, string> = {}) => ({
  user_id: userId,
  ...names,
  profile: { RPCharacterOne: { Name: `Char ${userId}`, Cash: cash, InATM: bank, DarkCoin: dark } },
});
const push = (players: unknown[]) => postJson(app, "/api/economy/ingest", { players }, apiKey);
const get = (path: string) => getJson(app, path, apiKey);

beforeAll(async () => {
  app = await startTestApp({ ECONOMY_ANOMALY_FACTOR: "5", ECONOMY_ANOMALY_MIN_AMOUNT: "1000" });
  ({ apiKey, projectId } = await createProject(app.sql, "Economy Reads"));
  await push([
    entry(101, 500, 1000, 0, { username: "alice_rp", display_name: "Alice" }),
    entry(102, 50, 20, 5, { username: "bob", display_name: "Bobby" }),
    entry(103, 9000, 0, 1),
    entry(104, 0, 0, 0),
    entry(105, 1e20, 0, 0, { username: "richie" }),
  ]);
  // 102 duplicates money: 75 -> 50,075 (x667, +50,000): an anomaly under factor 5 / min 1000
  await push([entry(102, 50_050, 20, 5)]);
  // 101 grows normally: 1,500 -> 2,000
  await push([entry(101, 1000, 1000)]);
});
afterAll(() => app?.close());

describe("GET /api/v1/economy/players", () => {
  it("sorts by total descending by default, with total/limit/offset", async () => {
    const r = await get("/api/v1/economy/players");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 5, limit: 50, offset: 0, sort: "total", order: "desc" });
    expect(r.body.data.map((p: any) => p.user_id)).toEqual(["105", "102", "103", "101", "104"]);
    expect(r.body.data[0]).toMatchObject({ cash: "100000000000000000000", total: "100000000000000000000", username: "richie" });
    expect(r.body.data[3]).toMatchObject({
      user_id: "101",
      cash: "1000",
      bank: "1000",
      dark_coin: "0",
      total: "2000",
      display_names: ["Char 101"],
      username: "alice_rp",
      display_name: "Alice",
      source: "push",
    });
    expect(r.body.data[3].balances).toEqual({ cash: "1000", bank: "1000", dark_coin: "0" });
    expect(r.body.data[3].last_logout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("sorts by each balance and pages", async () => {
    const bank = await get("/api/v1/economy/players?sort=bank&limit=2");
    expect(bank.body.data.map((p: any) => p.user_id)).toEqual(["101", "102"]);
    expect(bank.body.total).toBe(5);
    const dark = await get("/api/v1/economy/players?sort=dark_coin&order=asc&limit=2&offset=3");
    expect(dark.body.data.map((p: any) => p.user_id)).toEqual(["103", "102"]);
    const cash = await get("/api/v1/economy/players?sort=cash&limit=1");
    expect(cash.body.data[0].user_id).toBe("105");
    expect((await get("/api/v1/economy/players?limit=500")).body.limit).toBe(100);
  });

  it("searches by user id, username, display name and character name", async () => {
    const ids = async (q: string) => (await get(`/api/v1/economy/players?search=${encodeURIComponent(q)}`)).body.data.map((p: any) => p.user_id);
    expect(await ids("103")).toEqual(["103"]);
    expect(await ids("ALICE")).toEqual(["101"]);
    expect(await ids("bobby")).toEqual(["102"]);
    expect(await ids("char 104")).toEqual(["104"]);
    expect(await ids("%")).toEqual([]);
  });

  it("answers 400 for bad parameters, like /api/v1/errors", async () => {
    for (const q of ["limit=0", "limit=x", "offset=-1", "sort=name", "order=up", "offset=99999999999999999999"]) {
      const r = await get(`/api/v1/economy/players?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });

  it("answers 401 without a key", async () => {
    const r = await getJson(app, "/api/v1/economy/players");
    expect(r.status).toBe(401);
  });
});

describe("GET /api/v1/economy/players/:user_id", () => {
  it("returns the snapshot and its change history, oldest first", async () => {
    const r = await get("/api/v1/economy/players/102");
    expect(r.status).toBe(200);
    expect(r.body.player).toMatchObject({ user_id: "102", total: "50075", username: "bob" });
    expect(r.body.history.map((h: any) => [h.total, h.source])).toEqual([
      ["75", "push"],
      ["50075", "push"],
    ]);
    expect(r.body.history.map((h: any) => h.balances)).toEqual([
      { cash: "50", bank: "20", dark_coin: "5" },
      { cash: "50050", bank: "20", dark_coin: "5" },
    ]);
    expect(r.body.player).toMatchObject({ balances: { cash: "50050", bank: "20", dark_coin: "5" }, skipped_values: [], skipped_count: 0 });
    expect(r.body.player).toHaveProperty("first_observed_at");
  });

  it("answers 404 for an unknown or malformed id, and for another project's player", async () => {
    expect((await get("/api/v1/economy/players/999")).status).toBe(404);
    expect((await get("/api/v1/economy/players/abc")).body.error).toBe("not_found");
    const other = await createProject(app.sql, "Other");
    expect((await getJson(app, "/api/v1/economy/players/101", other.apiKey)).status).toBe(404);
  });
});

describe("GET /api/v1/economy/summary", () => {
  it("reports count, sums, median, p99, top 10, histogram and money supply", async () => {
    const r = await get("/api/v1/economy/summary");
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b.players).toBe(5);
    expect(b.sums).toEqual({
      cash: "100000000000000060050",
      bank: "1020",
      dark_coin: "6",
      total: "100000000000000061076",
      balances: { cash: "100000000000000060050", bank: "1020", dark_coin: "6" },
    });
    // the seed's map, and the total selected by default (median and p99 are the total's)
    expect(b.currency).toBe("total");
    expect(b.currencies).toEqual([
      { key: "cash", name: "Cash" },
      { key: "bank", name: "Bank" },
      { key: "dark_coin", name: "Dark coin" },
    ]);
    expect([b.median, b.p99]).toEqual(["9001", "100000000000000000000"]);
    // totals sorted: 0, 2000, 9001, 50075, 1e20
    expect(b.median_total).toBe("9001");
    expect(b.p99_total).toBe("100000000000000000000");
    expect(b.top_players.map((p: any) => p.user_id)).toEqual(["105", "102", "103", "101", "104"]);
    expect(b.wealth_histogram[0]).toEqual({ min: "0", max: "1", count: 1 });
    expect(b.wealth_histogram.find((h: any) => h.min === "1000")).toEqual({ min: "1000", max: "10000", count: 2 });
    expect(b.wealth_histogram.at(-1)).toEqual({ min: "100000000000000000000", max: "1000000000000000000000", count: 1 });
    expect(b.wealth_histogram.reduce((n: number, h: any) => n + h.count, 0)).toBe(5);
    expect(b.money_supply).toHaveLength(30);
    const today = b.money_supply.at(-1);
    expect(today.day).toBe(new Date().toISOString().slice(0, 10));
    expect(today.supply).toBe(b.sums.total);
    expect(b.money_supply[0].supply).toBe("0");
    expect(b.money_supply[0]).toMatchObject({ change: "0", growth_pct: null, gained: "0", lost: "0", gainers: 0, losers: 0 });
    expect(b.newcomers).toHaveProperty("players");
    // the richest player holds nearly all of it: 1e20 / (1e20 + 61076)
    expect(b.concentration.top1_share).toBe(1);
    expect(b.concentration.top10_share).toBe(1);
  });

  it("carries the supply across days from history", async () => {
    const p = await createProject(app.sql, "History Days");
    await app.sql`
      insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source) values
        (${p.projectId}, 1, 100, 0, 0, 100, now() - interval '3 days', 'push'),
        (${p.projectId}, 2, 50, 0, 0, 50, now() - interval '3 days', 'scan'),
        (${p.projectId}, 1, 30, 0, 0, 30, now() - interval '1 day', 'push')`;
    const r = await getJson(app, "/api/v1/economy/summary?days=4", p.apiKey);
    expect(r.body.money_supply.map((d: any) => [d.supply, d.change])).toEqual([
      ["150", "150"],
      ["150", "0"],
      ["80", "-70"],
      ["80", "0"],
    ]);
    expect(r.body).toMatchObject({ players: 0, median_total: null, wealth_histogram: [] });
  });
});

describe("GET /api/v1/economy/anomalies", () => {
  it("finds a jump in one currency under its default threshold (too few rises to learn from)", async () => {
    const r = await get("/api/v1/economy/anomalies");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 1, currency: "all", factor: null, min_amount: null });
    // cash: the configured factor, and the configured minimum (1,000) as it is below the median cash held (9,000)
    expect(r.body.thresholds).toEqual({
      cash: { factor: 5, min_amount: "1000", off: false, source: "default", rises: 2 },
      bank: { factor: 5, min_amount: "20", off: false, source: "default", rises: 0 },
      dark_coin: { factor: 5, min_amount: "1", off: false, source: "default", rises: 0 },
    });
    expect(r.body.data[0]).toMatchObject({
      user_id: "102",
      currency: "cash",
      from_amount: "50",
      to_amount: "50050",
      from_total: "75",
      to_total: "50075",
      increase: "50000",
      factor: 1001,
      username: "bob",
      source: "push",
      threshold: { factor: 5, min_amount: "1000", source: "default" },
    });
    expect((await get("/api/v1/economy/anomalies?currency=total")).body).toMatchObject({ total: 1, currency: "all" });
    expect((await get("/api/v1/economy/anomalies?currency=bank")).body).toMatchObject({ total: 0, currency: "bank", thresholds: { bank: { source: "default" } } });
  });

  it("takes factor and min_amount from the query", async () => {
    expect((await get("/api/v1/economy/anomalies?min_amount=100000")).body.total).toBe(0);
    const loose = await get("/api/v1/economy/anomalies?factor=1.2&min_amount=100");
    expect(loose.body.data.map((a: any) => a.user_id).sort()).toEqual(["101", "102"]);
  });

  it("answers 400 for bad parameters", async () => {
    for (const q of ["factor=1", "factor=abc", "min_amount=-5", "limit=0", "days=0"]) {
      const r = await get(`/api/v1/economy/anomalies?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error).toBe("invalid_query");
    }
  });
});
