import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { listAnomalies } from "../../db/economy.js";
import { migrate } from "../../db/migrate.js";
import { createProject, freshDatabaseUrl } from "../support/server.js";

/**
 * The anomalies read picks its page from the covering rise index and fetches only that page's rows.
 * The reference is the definition it replaces: consecutive history rows of a player by window
 * function over the whole history, joined to the snapshots, then sorted and paged.
 */
const reference = (sql: Sql, projectId: string, factor: number, minAmount: number, days: number, limit: number, offset: number) => sql`
  with h as (
    select user_id, id, total, observed_at, source, lag(total) over w as prev_total, lag(observed_at) over w as prev_observed_at
    from economy_history where project_id = ${projectId}
    window w as (partition by user_id order by id)
  )
  select a.user_id::text as user_id, s.username, s.display_name, coalesce(s.display_names, '{}') as display_names, s.balances,
    'total' as currency, a.prev_total::text as from_amount, a.total::text as to_amount, a.prev_total::text as from_total, a.total::text as to_total, (a.total - a.prev_total)::text as increase,
    case when a.prev_total > 0 and a.total / a.prev_total < 1e300 then round(a.total / a.prev_total, 2)::float8 end as factor,
    a.prev_observed_at as from_observed_at, a.observed_at as to_observed_at, a.source
  from h a left join economy_snapshots s on s.project_id = ${projectId} and s.user_id = a.user_id
  where a.prev_total is not null and a.observed_at >= now() - make_interval(days => ${days})
    and a.total - a.prev_total > ${minAmount} and (a.prev_total <= 0 or a.total > a.prev_total * ${factor})
  order by a.observed_at desc, a.id desc limit ${limit} offset ${offset}`;

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
    for (const [user, total, at] of rows) {
      await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
        values (${projectId}, ${user}, ${total}, 0, 0, ${total}, ${at}, ${user % 2 ? "push" : "scan"})`;
      // the same shape in another project, which must not leak into this one's answer
      await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, observed_at, source)
        values (${otherProject}, ${user}, ${total * 3}, 0, 0, ${total * 3}, ${at}, 'push')`;
    }
    // snapshots for some players only (a history-only player lists without names)
    await sql`insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, observed_at, source, username, display_name, display_names)
      values (${projectId}, 1, 0, 0, 0, now(), 'push', 'one', 'One', '{Alpha}'), (${projectId}, 3, 0, 0, 0, now(), 'push', 'three', null, '{}')`;
  });
  afterAll(() => sql?.end());

  it("lists and counts what the window-function definition lists, page by page", async () => {
    const cases: [number, number, number][] = [
      [10, 100_000, 30],
      [10, 100_000, 2],
      [1.5, 0, 30],
      [2, 100, 9],
      [2, 100, 8],
      [10, 100_000, 1],
    ];
    for (const [factor, minAmount, days] of cases) {
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from (${reference(sql, projectId, factor, minAmount, days, 1000, 0)}) r`;
      expect(n, `factor ${factor} min ${minAmount} days ${days}`).toBeGreaterThan(0);
      for (let offset = 0; offset <= n + 3; offset += 3) {
        const got = await listAnomalies(sql, projectId, { factor, minAmount, days, limit: 3, offset });
        const want = await reference(sql, projectId, factor, minAmount, days, 3, offset);
        expect(got.total).toBe(n);
        expect(got.data).toEqual([...want]);
      }
    }
    // the window's edge: the 2-day window holds today's and yesterday's rises (ties by insertion, newest first) and the four just inside its edge, not the four just outside
    const inside = await listAnomalies(sql, projectId, { factor: 10, minAmount: 100_000, days: 2, limit: 100, offset: 0 });
    expect(inside.data.map((a: any) => [a.user_id, a.from_total, a.to_total])).toEqual([
      ["5", "1000", "9000000"],
      ["4", "1", "1200001"],
      ["3", "1", "900001"],
      ["2", "1", "600001"],
      ["1", "1", "300001"],
      ["4", "10", "600010"],
      ["3", "10", "450010"],
      ["2", "10", "300010"],
      ["1", "10", "150010"],
    ]);
    expect(inside.data.find((a: any) => a.user_id === "1")).toMatchObject({ username: "one", display_name: "One", display_names: ["Alpha"] });
    expect(inside.data.find((a: any) => a.user_id === "2")).toMatchObject({ username: null, display_name: null, display_names: [] });
  });

  it("reads the page's rises from the index without a pass over the history", async () => {
    await sql`vacuum analyze economy_history`;
    const plan = await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(
        `explain select count(*) from economy_history where project_id = $1 and (total - prev_total) > 100000
           and observed_at >= now() - make_interval(days => 30) and (prev_total <= 0 or total > prev_total * 10)`,
        [projectId],
      );
    });
    expect(plan.map((r: any) => r["QUERY PLAN"]).join("\n")).toMatch(/Index Only Scan using economy_history_rise/);
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
      const got = await listAnomalies(sql, projectId, { currency: "cash", factor, minAmount, days, limit: 1000, offset: 0 });
      expect(got.total).toBe(want.length);
      expect(got.data.map((a: any) => ({ user_id: a.user_id, from_amount: a.from_amount, to_amount: a.to_amount }))).toEqual([...want]);
      expect(got.data.every((a: any) => a.currency === "cash")).toBe(true);
    }
    // bank never rose
    expect((await listAnomalies(sql, projectId, { currency: "bank", factor: 1.5, minAmount: 0, days: 30, limit: 10, offset: 0 })).total).toBe(0);

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
