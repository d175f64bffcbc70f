import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { listAnomalies } from "../../db/economy-anomalies.js";
import { migrate } from "../../db/migrate.js";
import { createProject, freshDatabaseUrl } from "../support/server.js";

/**
 * The anomalies read picks its page from the covering rise index of each currency and fetches only
 * that page's rows. The reference is the definition it replaces: consecutive history rows of a player
 * by window function over the whole history, per currency, joined to the snapshots, then sorted
 * (newest first; ties by history row, then currency, as the rises are written) and paged.
 */
type T = { factor: number; minAmount: number };
const reference = (sql: Sql, projectId: string, thresholds: Record<string, T>, days: number, limit: number, offset: number) => sql`
  with h as (
    select user_id, id, total, observed_at, source, balances, lag(total) over w as prev_total, lag(balances) over w as prev_balances,
      lag(observed_at) over w as prev_observed_at
    from economy_history where project_id = ${projectId}
    window w as (partition by user_id order by id)
  ), c as (
    select h.*, k.key as currency, (h.balances ->> k.key)::numeric as v, (h.prev_balances ->> k.key)::numeric as prev_v,
      (k.value ->> 'factor')::numeric as factor, (k.value ->> 'min')::numeric as min_amount
    from h cross join jsonb_each(${sql.json(Object.fromEntries(Object.entries(thresholds).map(([k, t]) => [k, { factor: t.factor, min: t.minAmount }])))}) k
  )
  select a.user_id::text as user_id, s.username, s.display_name, coalesce(s.display_names, '{}') as display_names, s.balances,
    a.currency, a.prev_v::text as from_amount, a.v::text as to_amount, a.prev_total::text as from_total, a.total::text as to_total, (a.v - a.prev_v)::text as increase,
    case when a.prev_v > 0 and a.v / a.prev_v < 1e300 then round(a.v / a.prev_v, 2)::float8 end as factor,
    a.prev_observed_at as from_observed_at, a.observed_at as to_observed_at, a.source
  from c a left join economy_snapshots s on s.project_id = ${projectId} and s.user_id = a.user_id
  where a.prev_v is not null and a.observed_at >= now() - make_interval(days => ${days})
    and a.v - a.prev_v > a.min_amount and (a.prev_v <= 0 or a.v > a.prev_v * a.factor)
  order by a.observed_at desc, a.id desc, a.currency desc limit ${limit} offset ${offset}`;

const thresholdMap = (t: Record<string, T>) => new Map(Object.entries(t).map(([k, v]) => [k, { factor: v.factor, minAmount: String(v.minAmount), off: false }]));

describe("anomalies from the covering rise index", () => {
  let sql: Sql;
  let projectId: string;
  let otherProject: string;
  beforeAll(async () => {
    sql = createSql(await freshDatabaseUrl(), 4);
    await migrate(sql);
    ({ projectId } = await createProject(sql, "Anomalies"));
    ({ projectId: otherProject } = await createProject(sql, "Other"));
    // Observations on both sides of UTC midnights and of the `days` window's edge, with ties on the
    // observation time, rises from zero and from debt, and a rise whose previous observation is on an
    // earlier day. Rows go in one player's order at a time; the insert trigger fills the previous
    // observation from the player's latest row, as for every writer.
    const midnight = (daysAgo: number, ms: number) => sql`date_trunc('day', now(), 'UTC') - make_interval(days => ${daysAgo}) + make_interval(secs => ${ms / 1000})`;
    const edge = (days: number, ms: number) => sql`now() - make_interval(days => ${days}) + make_interval(secs => ${ms / 1000})`;
    const rows: [number, number, ReturnType<typeof midnight>][] = [];
    for (const [user, base] of [[1, 100], [2, 0], [3, -500], [4, 5_000]] as const) {
      rows.push([user, base, midnight(9, -1)]);
      rows.push([user, base * 20 + 200_000, midnight(8, 0)]); // across midnight: the jump lands on the next day
      rows.push([user, base, midnight(8, 1)]);
      rows.push([user, base + 1_000_000, midnight(3, -1)]); // last millisecond of a day
      rows.push([user, 1, midnight(3, 0)]);
      rows.push([user, 1 + 300_000 * user, midnight(1, 0)]); // tie on the observation time across players
      rows.push([user, 10, edge(2, -60_000)]); // just outside a 2-day window
      rows.push([user, 10 + 150_000 * user, edge(2, 60_000)]); // just inside it
    }
    rows.push([5, 1_000, midnight(20, 0)]);
    rows.push([5, 9_000_000, midnight(0, 0)]); // previous observation 20 days before, on another day
    for (const [user, cash, at] of rows) {
      // bank moves on its own: a tenth of cash for odd players, flat for even ones
      const bank = user % 2 ? Math.round(cash / 10) : 7;
      await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
        values (${projectId}, ${user}, ${cash}, ${bank}, 0, ${cash + bank}, ${at}, ${user % 2 ? "push" : "scan"})`;
      // the same shape in another project, which must not leak into this one's answer
      await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
        values (${otherProject}, ${user}, ${cash * 3}, 0, 0, ${cash * 3}, ${at}, 'push')`;
    }
    // snapshots for some players only (a history-only player lists without names)
    await sql`insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, observed_at, source, username, display_name, display_names)
      values (${projectId}, 1, 0, 0, 0, now(), 'push', 'one', 'One', '{Alpha}'), (${projectId}, 3, 0, 0, 0, now(), 'push', 'three', null, '{}')`;
  });
  afterAll(() => sql?.end());

  it("lists and counts across currencies, each under its own threshold, what the window-function definition lists, page by page", async () => {
    const cases: [Record<string, T>, number][] = [
      [{ cash: { factor: 10, minAmount: 100_000 } }, 30],
      [{ cash: { factor: 10, minAmount: 100_000 }, bank: { factor: 10, minAmount: 10_000 } }, 30],
      [{ cash: { factor: 10, minAmount: 100_000 }, bank: { factor: 5, minAmount: 1_000 }, dark_coin: { factor: 2, minAmount: 0 } }, 2],
      [{ cash: { factor: 1.5, minAmount: 0 }, bank: { factor: 1.5, minAmount: 0 } }, 30],
      [{ cash: { factor: 2, minAmount: 100 }, bank: { factor: 50, minAmount: 100 } }, 9],
      [{ bank: { factor: 2, minAmount: 100 } }, 8],
    ];
    for (const [thresholds, days] of cases) {
      const label = `${JSON.stringify(thresholds)} days ${days}`;
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from (${reference(sql, projectId, thresholds, days, 1000, 0)}) r`;
      expect(n, label).toBeGreaterThan(0);
      for (let offset = 0; offset <= n + 3; offset += 3) {
        const got = await listAnomalies(sql, projectId, { thresholds: thresholdMap(thresholds), days, limit: 3, offset });
        const want = await reference(sql, projectId, thresholds, days, 3, offset);
        expect(got.total, label).toBe(n);
        expect(got.data, label).toEqual([...want]);
      }
    }
    // both currencies in one page: the 2-day window's cash rises over 10× and 100,000, and bank's over 10× and 10,000 (odd players only)
    const both = thresholdMap({ cash: { factor: 10, minAmount: 100_000 }, bank: { factor: 10, minAmount: 10_000 } });
    const inside = await listAnomalies(sql, projectId, { thresholds: both, days: 2, limit: 100, offset: 0 });
    expect(inside.data.map((a: any) => [a.user_id, a.currency, a.from_amount, a.to_amount])).toEqual([
      ["5", "cash", "1000", "9000000"],
      ["5", "bank", "100", "900000"],
      ["4", "cash", "1", "1200001"],
      ["3", "cash", "1", "900001"],
      ["3", "bank", "0", "90000"],
      ["2", "cash", "1", "600001"],
      ["1", "cash", "1", "300001"],
      ["1", "bank", "0", "30000"],
      ["4", "cash", "10", "600010"],
      ["3", "cash", "10", "450010"],
      ["3", "bank", "1", "45001"],
      ["2", "cash", "10", "300010"],
      ["1", "cash", "10", "150010"],
      ["1", "bank", "1", "15001"],
    ]);
    expect(inside.data.find((a: any) => a.user_id === "1")).toMatchObject({ username: "one", display_name: "One", display_names: ["Alpha"] });
    expect(inside.data.find((a: any) => a.user_id === "2")).toMatchObject({ username: null, display_name: null, display_names: [] });
    // a currency turned off is not looked in; none at all lists nothing
    both.set("cash", { ...both.get("cash")!, off: true });
    const off = await listAnomalies(sql, projectId, { thresholds: both, days: 2, limit: 100, offset: 0 });
    expect(off.data.map((a: any) => a.currency)).toEqual(["bank", "bank", "bank", "bank", "bank"]);
    expect(off.total).toBe(5);
    expect(await listAnomalies(sql, projectId, { thresholds: new Map(), days: 30, limit: 10, offset: 0 })).toEqual({ data: [], total: 0 });
  });

  it("reads each currency's large rises from the rise index", async () => {
    await sql`vacuum analyze economy_rises`;
    const plan = await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(
        `explain select id, observed_at from economy_rises where project_id = $1 and currency = 'cash' and (amount - prev_amount) > 100000::numeric
           and observed_at >= now() - make_interval(days => 30) and (prev_amount <= 0 or amount > prev_amount * '10'::numeric)
         union all
         select id, observed_at from economy_rises where project_id = $1 and currency = 'bank' and (amount - prev_amount) > 10000::numeric
           and observed_at >= now() - make_interval(days => 30) and (prev_amount <= 0 or amount > prev_amount * '10'::numeric)`,
        [projectId],
      );
    });
    const text = plan.map((r: any) => r["QUERY PLAN"]).join("\n");
    expect(text.match(/Index Only Scan using economy_rises_rise/g)?.length).toBe(2);
  });

  it("per currency, lists what the history's consecutive balances list, from the rises index alone", async () => {
    // the rows above hold the seed's three currencies (filled from the columns); cash carries the rises
    const referenceCurrency = (key: string, factor: number, minAmount: number, days: number) => sql<{ user_id: string; from_amount: string; to_amount: string }[]>`
      with h as (
        select user_id, id, observed_at, (balances ->> ${key})::numeric as v, lag((balances ->> ${key})::numeric) over w as prev_v
        from economy_history where project_id = ${projectId}
        window w as (partition by user_id order by id)
      )
      select user_id::text as user_id, prev_v::text as from_amount, v::text as to_amount from h
      where prev_v is not null and observed_at >= now() - make_interval(days => ${days})
        and v - prev_v > ${minAmount} and (prev_v <= 0 or v > prev_v * ${factor})
      order by observed_at desc, id desc`;
    for (const [factor, minAmount, days] of [[10, 100_000, 30], [10, 100_000, 2], [1.5, 0, 30], [2, 100, 8]] as const) {
      const want = await referenceCurrency("cash", factor, minAmount, days);
      expect(want.length).toBeGreaterThan(0);
      const got = await listAnomalies(sql, projectId, { thresholds: thresholdMap({ cash: { factor, minAmount } }), days, limit: 1000, offset: 0 });
      expect(got.total).toBe(want.length);
      expect(got.data.map((a: any) => ({ user_id: a.user_id, from_amount: a.from_amount, to_amount: a.to_amount }))).toEqual([...want]);
      expect(got.data.every((a: any) => a.currency === "cash")).toBe(true);
    }
    // dark coin never rose
    expect((await listAnomalies(sql, projectId, { thresholds: thresholdMap({ dark_coin: { factor: 1.5, minAmount: 0 } }), days: 30, limit: 10, offset: 0 })).total).toBe(0);

    await sql`vacuum analyze economy_rises`;
    const plan = await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(
        `explain select count(*) from economy_rises where project_id = $1 and currency = 'cash' and (amount - prev_amount) > 100000
           and observed_at >= now() - make_interval(days => 30) and (prev_amount <= 0 or amount > prev_amount * 10)`,
        [projectId],
      );
    });
    expect(plan.map((r: any) => r["QUERY PLAN"]).join("\n")).toMatch(/Index Only Scan using economy_rises_rise/);
  });
});
