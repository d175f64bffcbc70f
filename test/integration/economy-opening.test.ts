import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../db/client.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { migrate } from "../../db/migrate.js";
import { startFakeOpenCloud, type FakeOpenCloud } from "../support/fake-open-cloud.js";
import { createProject, freshDatabaseUrl, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

/**
 * Opening balances: a player's first observation (push or scan) is what they brought into the
 * economy. It counts in the supply and its change, as the day's `opening` and `newcomers`, never as
 * a gain; the rest of that UTC day is measured from it; growth leaves it out.
 */

const APP_SECRET = "economy-opening-test-app-secret-0123456789";
const INTERNAL = "economy-opening-internal-key-0123456789";
const today = () => new Date().toISOString().slice(0, 10);
const rp = (userId: number, cash: number, bank = 0) => ({
  user_id: userId,
  profile: { RPCharacterOne: { Name: `P${userId}`, Cash: cash, InATM: bank, DarkCoin: 0 } },
});
const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);

let app: TestApp;
let fake: FakeOpenCloud;

beforeAll(async () => {
  fake = await startFakeOpenCloud({ entries: [] });
  app = await startTestApp({
    JOBS_ENABLED: "true",
    OPEN_CLOUD_BASE_URL: fake.url,
    OPEN_CLOUD_REQUESTS_PER_MINUTE: "60000",
    APP_SECRET,
    NOTIFICATION_SECRET: INTERNAL,
  });
}, 120_000);
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

async function project(name: string) {
  const p = await createProject(app.sql, name);
  return {
    ...p,
    push: async (players: unknown[]) => {
      const r = await postJson(app, "/api/economy/ingest", { players }, p.apiKey);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    },
    supply: async (q = "") => {
      const r = await getJson(app, `/api/v1/economy/summary?days=30${q}`, p.apiKey);
      expect(r.status).toBe(200);
      return r.body.money_supply as any[];
    },
  };
}

describe("day one", () => {
  it("counts 150 new players' wealth as their opening, not as gains, and those who spend as losers", async () => {
    const p = await project("Day one");
    // 150 players, each with their own wealth; sent in batches of 100 (the push's limit)
    const wealth = Array.from({ length: 150 }, (_, i) => 9_000 + i * 17);
    const players = wealth.map((cash, i) => rp(1000 + i, cash, i % 3));
    await p.push(players.slice(0, 100));
    await p.push(players.slice(100));
    const brought = sum(wealth) + sum(wealth.map((_, i) => i % 3));
    // then 40 of them spend the same day, by different amounts
    const spenders = wealth.slice(0, 40).map((cash, i) => ({ i, spent: 100 + i * 5, cash }));
    await p.push(spenders.map((s) => rp(1000 + s.i, s.cash - s.spent, s.i % 3)));
    const spent = sum(spenders.map((s) => s.spent));

    const days = await p.supply();
    expect(days).toHaveLength(30);
    // 29 days before without players: nothing at all
    for (const d of days.slice(0, 29)) {
      expect(d).toMatchObject({ supply: "0", change: "0", opening: "0", newcomers: 0, growth_pct: null, gained: "0", gainers: 0 });
    }
    expect(days.at(-1)).toEqual({
      day: today(),
      supply: String(brought - spent),
      change: String(brought - spent),
      opening: String(brought),
      newcomers: 150,
      // nothing to grow from: not a growth, let alone inflation
      growth_pct: null,
      gained: "0",
      lost: String(spent),
      gainers: 0,
      losers: 40,
    });
    // per currency: the same new players, each with what they brought of it (zero included)
    const cash = (await p.supply("&currency=cash")).at(-1);
    expect(cash).toMatchObject({ opening: String(sum(wealth)), newcomers: 150, gained: "0", gainers: 0, lost: String(spent), losers: 40 });
    const bank = (await p.supply("&currency=bank")).at(-1);
    expect(bank).toMatchObject({ opening: String(sum(wealth.map((_, i) => i % 3))), newcomers: 150, gained: "0", gainers: 0, losers: 0 });
    // the supply is still the sum of the players' balances
    const [{ total }] = await app.sql`select sum(total)::text as total from economy_snapshots where project_id = ${p.projectId}`;
    expect(total).toBe(String(brought - spent));
  });

  it("counts only what a new player gains after their first push the same day", async () => {
    const p = await project("Same day");
    await p.push([rp(1, 100), rp(2, 100), rp(3, 500)]);
    // 1 gains 150; 2 gains 200 then spends 220 (ends 20 below what they brought); 3 changes nothing
    await p.push([rp(1, 250), rp(2, 300)]);
    await p.push([rp(2, 80), rp(3, 500)]);
    expect((await p.supply()).at(-1)).toEqual({
      day: today(),
      supply: "830",
      change: "830",
      opening: "700",
      newcomers: 3,
      growth_pct: null,
      gained: "150",
      lost: "20",
      gainers: 1,
      losers: 1,
    });
    // the day's start each later row is measured from: the opening balance
    const starts = await app.sql<{ day_start: Record<string, string> }[]>`
      select day_start from economy_history where project_id = ${p.projectId} and user_id = 2 order by id`;
    expect(starts.map((r) => r.day_start.total)).toEqual(["100", "100", "100"]);
    // a rise from the opening balance is a rise of the player like any other (the anomaly detector's)
    const [{ n }] = await app.sql`select count(*)::int as n from economy_rises where project_id = ${p.projectId} and user_id = 1`;
    expect(n).toBe(1);
  });
});

describe("a later day", () => {
  it("measures existing players from where their day started, new players from what they brought, and growth without openings", async () => {
    const p = await project("Later day");
    // yesterday: 1 and 2 first observed (written as any writer leaves history: the triggers fill the rest)
    for (const [user, cash] of [[1, 1000], [2, 500]] as const) {
      await app.sql`
        insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
        values (${p.projectId}, ${user}, ${cash}, 0, 0, ${cash}, date_trunc('day', now(), 'UTC') - interval '12 hours', 'push')`;
      await app.sql`
        insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
          history_observed_at, first_observed_at, day_start)
        select project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source, observed_at, observed_at, day_start
        from economy_history where project_id = ${p.projectId} and user_id = ${user}`;
    }
    // today: 1 earns 500, 2 spends 100, 3 and 4 arrive with 2,000 and 0, and 3 spends 300 of it
    await p.push([rp(1, 1500), rp(2, 400), rp(3, 2000), rp(4, 0)]);
    await p.push([rp(3, 1700)]);
    const [yesterday, now] = (await p.supply()).slice(-2);
    expect(yesterday).toMatchObject({ supply: "1500", change: "1500", opening: "1500", newcomers: 2, growth_pct: null, gained: "0", gainers: 0 });
    expect(now).toEqual({
      day: today(),
      supply: "3600",
      change: "2100",
      opening: "2000",
      newcomers: 2,
      // (2,100 - 2,000 brought) / 1,500
      growth_pct: 6.67,
      gained: "500",
      lost: "400",
      gainers: 1,
      losers: 2,
    });
  });
});

describe("a scan's first observation", () => {
  it("is an opening balance like a push's, and the day goes on from it", async () => {
    const owner = await makeUser(app.sql);
    const cookie = await login(app, owner.email);
    const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], "Scanned game");
    const startOfToday = `${today()}T00:00:00.000Z`;
    const scanned = [[1, 300], [2, 700], [3, 50]] as const;
    for (const [user, cash] of scanned) {
      fake.entries.set(`Player_${user}`, { id: `Player_${user}`, value: rp(user, cash).profile, revisionCreateTime: startOfToday });
    }
    const key = await call(app, "PUT", "/api/economy/key", {
      cookie,
      body: { project_id: projectId, api_key: fake.apiKey, universe_id: fake.universeId, datastore_name: fake.datastoreName },
    });
    expect(key.status).toBe(200);
    const started = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: { "x-internal-key": INTERNAL } });
    expect(started.status).toBe(202);
    let state: any;
    for (let i = 0; i < 600; i++) {
      state = (await call(app, "GET", `/api/economy/sync?project_id=${projectId}`, { headers: { "x-internal-key": INTERNAL } })).body;
      if (state.state === "succeeded" || state.state === "failed") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(state).toMatchObject({ state: "succeeded", stored: 3 });
    const supply = async () => (await getJson(app, "/api/v1/economy/summary?days=1", apiKey)).body.money_supply.at(-1);
    expect(await supply()).toMatchObject({ supply: "1050", change: "1050", opening: "1050", newcomers: 3, gained: "0", gainers: 0, lost: "0", losers: 0 });
    // later that day the game pushes: 1 spends 100, 2 earns 50
    const pushed = await postJson(app, "/api/economy/ingest", { players: [rp(1, 200), rp(2, 750)] }, apiKey);
    expect(pushed.status).toBe(200);
    expect(await supply()).toMatchObject({ supply: "1000", change: "1000", opening: "1050", newcomers: 3, gained: "50", gainers: 1, lost: "100", losers: 1 });
  });
});

describe("migration of the history written before opening balances", () => {
  const dir = path.resolve(import.meta.dirname, "../../db/migrations");
  let migrated: TestApp;
  let tmp: string;
  let projectId: string;
  let apiKey: string;
  let before: { rises: number; daily: string };

  beforeAll(async () => {
    const url = await freshDatabaseUrl();
    const sql = createSql(url, 2);
    tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
    for (const f of readdirSync(dir)) if (f < "110") cpSync(path.join(dir, f), path.join(tmp, f));
    await migrate(sql, tmp);
    ({ projectId, apiKey } = await createProject(sql, "Before opening balances"));
    await putEconomyMap(
      sql,
      projectId,
      { currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }, { key: "gems", name: "Gems", paths: ["Gems"] }], names: [], data_code: null, match: [] },
      null,
    );
    // [user, days ago, hour, coins, gems]: each row one statement, as the old writers appended them
    const rows: [number, number, number, number, number][] = [
      // two days ago: 1 opens with 100 coins and spends 20; 2 opens with 50 coins, 3 gems and earns 20 coins
      [1, 2, 1, 100, 0],
      [2, 2, 2, 50, 3],
      [1, 2, 3, 80, 0],
      [2, 2, 4, 70, 3],
      // yesterday: 1 earns 120 (from 80)
      [1, 1, 5, 200, 0],
      // today: 3 opens with 1,000 coins, then spends 100
      [3, 0, 0, 1000, 0],
      [3, 0, 0, 900, 0],
    ];
    for (const [user, daysAgo, hour, coins, gems] of rows) {
      const at = sql`date_trunc('day', now(), 'UTC') - make_interval(days => ${daysAgo}) + make_interval(hours => ${hour}) + make_interval(secs => ${user})`;
      await sql`
        insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source)
        values (${projectId}, ${user}, 0, 0, 0, ${coins + gems}, ${sql.json({ coins: String(coins), gems: String(gems) })},
          least(${at}, now()), 'push')`;
    }
    // the snapshots as the old writer left them: a new player's day started at nothing ('{}')
    await sql`
      insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
        history_observed_at, first_observed_at, day_start)
      select distinct on (user_id) project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source, observed_at,
        (select min(observed_at) from economy_history f where f.project_id = h.project_id and f.user_id = h.user_id), day_start
      from economy_history h where project_id = ${projectId} order by user_id, id desc`;
    const [old] = await sql<{ gained: string; gainers: number; first: Record<string, string> }[]>`
      select sum(gained)::text as gained, sum(gainers)::int as gainers,
        (select day_start from economy_snapshots where project_id = ${projectId} and user_id = 3) as first
      from economy_daily_currency where project_id = ${projectId} and currency = 'total'`;
    // what the old rule made of it: every opening a gain
    expect(old).toEqual({ gained: "1173", gainers: 4, first: {} });
    const [{ rises }] = await sql<{ rises: number }[]>`select count(*)::int as rises from economy_rises where project_id = ${projectId}`;
    const [{ daily }] = await sql<{ daily: string }[]>`select coalesce(string_agg(day || ':' || delta, ',' order by day), '') as daily
      from (select day, sum(delta) as delta from economy_daily where project_id = ${projectId} group by day) d`;
    before = { rises, daily };
    await sql.end();
    // the server applies the remaining migrations as it starts
    migrated = await startTestApp({}, url);
  }, 120_000);
  afterAll(async () => {
    await migrated?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("rebuilds each day's figures with first observations as openings", async () => {
    const days = (await getJson(migrated, "/api/v1/economy/summary?days=3", apiKey)).body.money_supply;
    expect(days).toEqual([
      { day: expect.any(String), supply: "153", change: "153", opening: "153", newcomers: 2, growth_pct: null, gained: "20", lost: "20", gainers: 1, losers: 1 },
      { day: expect.any(String), supply: "273", change: "120", opening: "0", newcomers: 0, growth_pct: 78.43, gained: "120", lost: "0", gainers: 1, losers: 0 },
      // (900 - 1,000 brought) / 273
      { day: today(), supply: "1173", change: "900", opening: "1000", newcomers: 1, growth_pct: -36.63, gained: "0", lost: "100", gainers: 0, losers: 1 },
    ]);
    const gems = (await getJson(migrated, "/api/v1/economy/summary?days=3&currency=gems", apiKey)).body.money_supply;
    expect(gems.map((d: any) => [d.supply, d.opening, d.newcomers, d.gained, d.gainers])).toEqual([
      ["3", "3", 2, "0", 0],
      ["3", "0", 0, "0", 0],
      ["3", "0", 1, "0", 0],
    ]);
    // the rises and the older total-only table are left as they were
    const [{ rises }] = await migrated.sql<{ rises: number }[]>`select count(*)::int as rises from economy_rises where project_id = ${projectId}`;
    const [{ daily }] = await migrated.sql<{ daily: string }[]>`select coalesce(string_agg(day || ':' || delta, ',' order by day), '') as daily
      from (select day, sum(delta) as delta from economy_daily where project_id = ${projectId} group by day) d`;
    expect({ rises, daily }).toEqual(before);
  });

  it("starts each player's first day at their first row, so today's next push goes on from the opening balance", async () => {
    const starts = await migrated.sql<{ user_id: string; day_start: Record<string, string> }[]>`
      select user_id::text, day_start from economy_history where project_id = ${projectId} order by id`;
    expect(starts.map((r) => [r.user_id, r.day_start.total])).toEqual([
      ["1", "100"],
      ["2", "53"],
      ["1", "100"],
      ["2", "53"],
      // yesterday started where two days ago ended
      ["1", "80"],
      ["3", "1000"],
      ["3", "1000"],
    ]);
    const pushed = await postJson(migrated, "/api/economy/ingest", { players: [{ user_id: 3, profile: { Coins: 950, Gems: 0 } }] }, apiKey);
    expect(pushed.status).toBe(200);
    expect((await getJson(migrated, "/api/v1/economy/summary?days=1", apiKey)).body.money_supply.at(-1)).toMatchObject({
      supply: "1223",
      change: "950",
      opening: "1000",
      gained: "0",
      gainers: 0,
      lost: "50",
      losers: 1,
    });
  });
});
