import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRetention } from "../../jobs/retention.js";
import { createProject, getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { DAY, HOUR, MINUTE, ingest, iso, list, repeat } from "../support/query-fixtures.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * Retention (jobs/retention.ts): raw events older than the period go, in batches; groups, hourly and
 * daily rollups stay, the stored-row counters behind the raw `total` follow, old minute rollups go.
 *
 *   project "kept"   X: -40d x4, -31d x3, -29d x2, -26h x1, -5m x1 (count 3)
 *                    Y: -35d x4 (every row goes, the group stays)
 *                    Z: -3d x2 (rows stay, their minute rollups go)
 *   project "other"  -45d x2, -2h x1
 *
 * Every time stays clear of the stats window starts (-1h, -24h, -7d, -30d), which the before/after
 * comparison of /api/v1/stats would otherwise catch moving.
 */

let app: TestApp;
let key: string;
let projectId: string;
let otherKey: string;
const now = Date.now();
const ago = (ms: number) => iso(now - ms);

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey: key, projectId } = await createProject(app.sql, "kept"));
  ({ apiKey: otherKey } = await createProject(app.sql, "other"));
  const X = { message: "Retention X" };
  const Y = { message: "Retention Y", level: "warn" };
  const Z = { message: "Retention Z", level: "info" };
  const r = await ingest(app, key, [
    ...repeat(4, { ...X, timestamp: ago(40 * DAY) }),
    ...repeat(3, { ...X, timestamp: ago(31 * DAY) }),
    ...repeat(2, { ...X, timestamp: ago(29 * DAY) }),
    { ...X, timestamp: ago(26 * HOUR) },
    { ...X, timestamp: ago(5 * MINUTE), count: 3 },
    ...repeat(4, { ...Y, timestamp: ago(35 * DAY) }),
    ...repeat(2, { ...Z, timestamp: ago(3 * DAY) }),
  ]);
  expect(r.throttled).toBe(0);
  await ingest(app, otherKey, [...repeat(2, { message: "Other old", timestamp: ago(45 * DAY) }), { message: "Other new", timestamp: ago(2 * HOUR) }]);
});
afterAll(() => app?.close());

const countRows = async () => {
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
  return n;
};
const storedCountsMatchRows = async () =>
  app.sql<{ message: string; stored_count: number; rows: number }[]>`
    select g.message, g.stored_count::int as stored_count,
      (select count(*)::int from events e where e.project_id = g.project_id and e.group_id = g.id) as rows
    from error_groups g order by g.message`;
const hourlyTotal = async () => {
  await countersApplied(app.sql);
  const [{ n }] = await app.sql<{ n: number }[]>`select coalesce(sum(count), 0)::int as n from rollup_hour`;
  return n;
};
/** Day rollups per day, the oldest (-45d) included. */
const daily = async () => (await countersApplied(app.sql), app.sql`select bucket, sum(count)::int as n from rollup_day group by bucket order by bucket`);
const oldMinuteRollups = async () => {
  await countersApplied(app.sql);
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from rollup_minute where bucket < now() - interval '2 days'`;
  return n;
};
const allStats = async (apiKey: string) =>
  Promise.all(["1h", "24h", "7d", "30d"].map(async (t) => (await getJson(app, `/api/v1/stats?timeframe=${t}`, apiKey)).body));

describe("runRetention", () => {
  it("deletes raw events past the period in batches and keeps everything else in step", async () => {
    expect(await countRows()).toBe(17);
    expect((await list(app, key)).body.total).toBe(17);
    const groupsBefore = (await list(app, key, { grouped: true })).body;
    const statsBefore = await allStats(key);
    const otherStatsBefore = await allStats(otherKey);
    const hourlyBefore = await hourlyTotal();
    const dailyBefore = await daily();
    expect(dailyBefore.reduce((n, d) => n + d.n, 0)).toBe(hourlyBefore);
    expect(dailyBefore[0].bucket.getTime()).toBeLessThan(now - 44 * DAY);
    const oldMinutesBefore = await oldMinuteRollups();
    expect(oldMinutesBefore).toBeGreaterThan(0);
    const xId = groupsBefore.data.find((g: any) => g.message === "Retention X").id;
    const seriesBefore = (await getJson(app, `/api/v1/errors/${xId}`, key)).body.series;

    // a batch of 3 against 13 doomed rows: only a loop over several batches deletes them all
    const result = await runRetention(app.sql, 30, 3);
    expect(result.events).toBe(13);
    expect(result.minuteRollups).toBe(oldMinutesBefore);

    // raw rows: only those within 30 days remain, and `total` (from the stored-row counters) agrees
    expect(await countRows()).toBe(6);
    const raw = await list(app, key, { limit: 100 });
    expect(raw.body.total).toBe(6);
    expect(raw.body.data).toHaveLength(6);
    expect(raw.body.data.every((e: any) => Date.parse(e.timestamp) >= now - 30 * DAY)).toBe(true);
    expect((await list(app, key, { environment: "production" })).body.total).toBe(6);
    expect(await storedCountsMatchRows()).toEqual([
      { message: "Other new", stored_count: 1, rows: 1 },
      { message: "Other old", stored_count: 0, rows: 0 },
      { message: "Retention X", stored_count: 4, rows: 4 },
      { message: "Retention Y", stored_count: 0, rows: 0 },
      { message: "Retention Z", stored_count: 2, rows: 2 },
    ]);
    const other = await list(app, otherKey);
    expect(other.body.total).toBe(1);
    expect(other.body.data[0].message).toBe("Other new");

    // groups, their counters and the hourly and daily rollups stay, so the 7-day series and every stats window do too
    const groupsAfter = (await list(app, key, { grouped: true })).body;
    expect(groupsAfter).toEqual(groupsBefore);
    expect(groupsAfter.data.map((g: any) => [g.message, g.count])).toEqual([
      ["Retention X", 13],
      ["Retention Z", 2],
      ["Retention Y", 4],
    ]);
    expect(await hourlyTotal()).toBe(hourlyBefore);
    expect(await daily()).toEqual(dailyBefore);
    expect((await getJson(app, `/api/v1/errors/${xId}`, key)).body.series).toEqual(seriesBefore);
    expect(await allStats(key)).toEqual(statsBefore);
    expect(await allStats(otherKey)).toEqual(otherStatsBefore);

    // minute rollups: older than two days gone, newer kept (the 1h and 24h windows read them)
    expect(await oldMinuteRollups()).toBe(0);
    const [{ n: recentMinutes }] = await app.sql<{ n: number }[]>`
      select coalesce(sum(count), 0)::int as n from rollup_minute where project_id = ${projectId}`;
    expect(recentMinutes).toBe(4); // -26h: 1, -5m: count 3
  });

  it("does nothing the second time", async () => {
    expect(await runRetention(app.sql, 30, 3)).toEqual({ events: 0, minuteRollups: 0 });
    expect(await countRows()).toBe(6);
  });

  it("honours the period it is given", async () => {
    // -29d (2 rows of X) and -3d (2 rows of Z) are older than 2 days; -26h and -5m stay
    const result = await runRetention(app.sql, 2, 1000);
    expect(result.events).toBe(4);
    expect(await countRows()).toBe(2);
    const raw = await list(app, key);
    expect(raw.body.total).toBe(2);
    expect(raw.body.data.map((e: any) => e.timestamp)).toEqual([ago(5 * MINUTE), ago(26 * HOUR)]);
    expect((await list(app, key, { grouped: true })).body.total).toBe(3);
    const z = (await storedCountsMatchRows()).find((g) => g.message === "Retention Z");
    expect(z).toEqual({ message: "Retention Z", stored_count: 0, rows: 0 });
  });
});
