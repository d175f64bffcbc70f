import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import type { Sql } from "../../db/client.js";
import { createProject, freshDatabaseUrl, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * The per-day supply changes and the per-row previous observation, kept at write time, answer exactly
 * what the window functions over the whole history answered: the reference queries below are those.
 */
const referenceSupply = (sql: Sql, projectId: string, days: number) => sql<{ supply: string; change: string }[]>`
  with h as (
    select observed_at, total - coalesce(lag(total) over (partition by user_id order by id), 0) as delta
    from economy_history where project_id = ${projectId}
  ), per_day as (
    select date_trunc('day', observed_at, 'UTC') as day, sum(delta) as delta from h group by 1
  ), running as (
    select day, delta, sum(delta) over (order by day) as supply from per_day
  ), days as (
    select generate_series(date_trunc('day', now(), 'UTC') - make_interval(days => ${days - 1}), date_trunc('day', now(), 'UTC'), interval '1 day') as day
  )
  select coalesce((select r.supply from running r where r.day <= d.day order by r.day desc limit 1), 0)::text as supply,
    coalesce((select r.delta from running r where r.day = d.day), 0)::text as change
  from days d order by d.day`;

/** Every currency on its own, under one factor and minimum: consecutive balances of a player, by window function. */
const referenceAnomalies = (sql: Sql, projectId: string, factor: number, minAmount: number, days: number) => sql<
  { user_id: string; currency: string; from_amount: string; to_amount: string; from_observed_at: Date }[]
>`
  with h as (
    select user_id, id, balances, observed_at, lag(balances) over w as prev_balances, lag(observed_at) over w as prev_observed_at
    from economy_history where project_id = ${projectId}
    window w as (partition by user_id order by id)
  ), c as (
    select h.*, k as currency, (balances ->> k)::numeric as v, (prev_balances ->> k)::numeric as prev_v
    from h cross join unnest(array['cash', 'bank', 'dark_coin']) k
  )
  select user_id::text, currency, prev_v::text as from_amount, v::text as to_amount, prev_observed_at as from_observed_at from c
  where prev_v is not null and observed_at >= now() - make_interval(days => ${days})
    and v - prev_v > ${minAmount} and (prev_v <= 0 or v > prev_v * ${factor})
  order by observed_at desc, id desc, currency desc`;

const entry = (userId: number, cash: number, bank = 0) => ({
  user_id: userId,
  profile: { RPCharacterOne: { Name: `P${userId}`, Cash: cash, InATM: bank, DarkCoin: 0 } },
});

describe("economy aggregates kept at write time", () => {
  let app: TestApp;
  let apiKey: string;
  let projectId: string;
  beforeAll(async () => {
    app = await startTestApp();
    ({ apiKey, projectId } = await createProject(app.sql, "Economy aggregates"));
    // older days written straight into the history (as an earlier version or a scan of old revisions would have)
    await app.sql`
      insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source) values
        (${projectId}, 1, 100, 0, 0, 100, now() - interval '5 days', 'scan'),
        (${projectId}, 2, 10, 0, 0, 10, now() - interval '5 days', 'scan'),
        (${projectId}, 2, 500000, 0, 0, 500000, now() - interval '4 days', 'scan'),
        (${projectId}, 1, -50, 0, 0, -50, now() - interval '2 days', 'scan')`;
    // with their snapshots, as every writer writes them together
    await app.sql`
      insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, history_observed_at, source)
      select distinct on (user_id) project_id, user_id, cash, bank, dark_coin, total,
        jsonb_build_object('cash', cash::text, 'bank', bank::text, 'dark_coin', dark_coin::text), observed_at, observed_at, source
      from economy_history where project_id = ${projectId} order by user_id, id desc`;
    // pushes: new players, a change, an unchanged push (no history row), a jump from debt, and a
    // burst of concurrent pushes over shared players
    const push = (players: unknown[]) => postJson(app, "/api/economy/ingest", { players }, apiKey);
    expect((await push([entry(3, 1000), entry(4, 7, 3)])).status).toBe(200);
    expect((await push([entry(3, 1000)])).status).toBe(200);
    expect((await push([entry(1, 2_000_000)])).status).toBe(200);
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => push([entry(10 + (i % 4), 100 * (i + 1)), entry(3, 1000 + i * 10), entry(4, i, 3)])),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
  });
  afterAll(() => app?.close());

  it("gives the money supply per day the history's window functions give", async () => {
    for (const days of [1, 3, 7, 30]) {
      const r = await getJson(app, `/api/v1/economy/summary?days=${days}`, apiKey);
      expect(r.status).toBe(200);
      const expected = await referenceSupply(app.sql, projectId, days);
      expect(r.body.money_supply.map((d: any) => ({ supply: d.supply, change: d.change }))).toEqual(expected);
    }
    const today = (await getJson(app, "/api/v1/economy/summary", apiKey)).body;
    // the history's running sum ends at the sum of the latest totals, including the players only in history
    const [{ latest }] = await app.sql<{ latest: string }[]>`
      select sum(total)::text as latest from (
        select distinct on (user_id) total from economy_history where project_id = ${projectId} order by user_id, id desc) t`;
    expect(today.money_supply.at(-1).supply).toBe(latest);
  });

  it("finds, per currency, the anomalies the history's window functions find", async () => {
    for (const [factor, min, days] of [
      [10, 100_000, 30],
      [1.5, 0, 30],
      [2, 100, 3],
      [10, 100_000, 1],
    ]) {
      const r = await getJson(app, `/api/v1/economy/anomalies?factor=${factor}&min_amount=${min}&days=${days}&limit=100`, apiKey);
      expect(r.status).toBe(200);
      const expected = await referenceAnomalies(app.sql, projectId, factor, min, days);
      expect(r.body.total).toBe(expected.length);
      expect(r.body.data.map((a: any) => [a.user_id, a.currency, a.from_amount, a.to_amount, a.from_observed_at])).toEqual(
        expected.map((a) => [a.user_id, a.currency, a.from_amount, a.to_amount, a.from_observed_at.toISOString()]),
      );
    }
    // the jumps: 10 -> 500,000 (scan, 4 days ago) and -50 -> 2,000,000 (push)
    const r = await getJson(app, "/api/v1/economy/anomalies?factor=10&min_amount=100000", apiKey);
    expect(r.body.data.map((a: any) => [a.user_id, a.currency, a.from_amount, a.to_amount])).toEqual([
      ["1", "cash", "-50", "2000000"],
      ["2", "cash", "10", "500000"],
    ]);
  });
});

describe("the migration that adds them", () => {
  it("fills them from the history already stored", async () => {
    const dir = path.resolve(import.meta.dirname, "../../db/migrations");
    const tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
    const sql = createSql(await freshDatabaseUrl(), 2);
    try {
      for (const f of readdirSync(dir)) if (f < "062") cpSync(path.join(dir, f), path.join(tmp, f));
      await migrate(sql, tmp);
      const { projectId } = await createProject(sql, "Before aggregates");
      await sql`
        insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source) values
          (${projectId}, 1, 100, 0, 0, 100, now() - interval '6 days', 'push'),
          (${projectId}, 1, 5000000, 0, 0, 5000000, now() - interval '3 days', 'push'),
          (${projectId}, 2, 40, 0, 0, 40, now() - interval '3 days', 'scan'),
          (${projectId}, 1, 20, 0, 0, 20, now() - interval '1 day', 'push')`;
      const supplyBefore = await referenceSupply(sql, projectId, 10);
      await migrate(sql, dir);
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from economy_daily where project_id = ${projectId}`;
      expect(n).toBe(3);
      const supply = await sql<{ supply: string; change: string }[]>`
        with per_day as (select day::timestamp at time zone 'UTC' as day, sum(delta) as delta from economy_daily where project_id = ${projectId} group by 1),
        running as (select day, delta, sum(delta) over (order by day) as supply from per_day),
        days as (select generate_series(date_trunc('day', now(), 'UTC') - interval '9 days', date_trunc('day', now(), 'UTC'), interval '1 day') as day)
        select coalesce((select r.supply from running r where r.day <= d.day order by r.day desc limit 1), 0)::text as supply,
          coalesce((select r.delta from running r where r.day = d.day), 0)::text as change
        from days d order by d.day`;
      expect(supply).toEqual(supplyBefore);
      const prev = await sql`select user_id::int, total::text, prev_total::text from economy_history order by id`;
      expect(prev).toEqual([
        { user_id: 1, total: "100", prev_total: null },
        { user_id: 1, total: "5000000", prev_total: "100" },
        { user_id: 2, total: "40", prev_total: null },
        { user_id: 1, total: "20", prev_total: "5000000" },
      ]);
    } finally {
      await sql.end();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
