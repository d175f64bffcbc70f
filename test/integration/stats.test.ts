import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { DAY, HOUR, ISO_MS, MINUTE, expectInvalidQuery, ingest, iso, repeat, withQuery } from "../support/query-fixtures.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * GET /api/v1/stats against a fixture whose figures per timeframe are worked out by hand below.
 * Occurrence times stay well away from the window starts (now-1h, -24h, -7d, -30d), which may round
 * down to the minute (1h, 24h) or the hour (7d, 30d).
 *
 *   group            level  status    occurrences (time: count, user)
 *   A "nil index"    error  open      -10m: 3 u101 | -5h: 1 u102 | -3d: 2 (a warn event) u103 | -20d: 1 u104 | -40d: 5 u101
 *   B "burst"        warn   open      -2m: 35 events of count 1 in one request (30 stored, 5 throttled), u105 on the first
 *   C "resolved"     info   resolved  -5h: 7 u106
 *   D "ignored"      error  ignored   -10m: 2 u107
 *   E "ancient"      error  open      -40d: 50 u108 (outside every window)
 *   F "monthly"      warn   open      -20d: 6 u109
 *   G "tie"          info   open      -30m: 3
 *   H a..g           info   open      -6h-1m .. -6h-7m: 1 each (so 24h, 7d and 30d have more than 10 groups)
 */

let app: TestApp;
let key: string;
const now = Date.now();
const ago = (ms: number) => iso(now - ms);
const M = {
  A: "Stats A: attempt to index nil",
  B: "Stats B: burst",
  C: "Stats C: resolved",
  D: "Stats D: ignored",
  E: "Stats E: ancient",
  F: "Stats F: monthly",
  G: "Stats G: tie",
};
const filler = (i: number) => `Stats H: filler ${String.fromCharCode(97 + i)}`;

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey: key } = await createProject(app.sql, "stats"));
  const burst = await ingest(app, key, [
    { message: M.B, level: "warn", timestamp: ago(2 * MINUTE), user_id: 105 },
    ...repeat(34, { message: M.B, level: "warn", timestamp: ago(2 * MINUTE) }),
  ]);
  expect(burst).toEqual({ count: 35, occurrences: 35, throttled: 5 });
  // A's newest occurrence first: user 101's latest sighting must not move back to -40d
  await ingest(app, key, [{ message: M.A, level: "error", timestamp: ago(10 * MINUTE), count: 3, user_id: 101 }]);
  await ingest(app, key, [
    { message: M.A, level: "error", timestamp: ago(5 * HOUR), count: 1, user_id: 102 },
    { message: M.A, level: "warning", timestamp: ago(3 * DAY), count: 2, user_id: 103 },
    { message: M.A, level: "error", timestamp: ago(20 * DAY), count: 1, user_id: 104 },
    { message: M.A, level: "error", timestamp: ago(40 * DAY), count: 5, user_id: 101 },
    { message: M.C, level: "info", timestamp: ago(5 * HOUR), count: 7, user_id: 106 },
    { message: M.D, level: "error", timestamp: ago(10 * MINUTE), count: 2, user_id: 107 },
    { message: M.E, level: "error", timestamp: ago(40 * DAY), count: 50, user_id: 108 },
    { message: M.F, level: "warn", timestamp: ago(20 * DAY), count: 6, user_id: 109 },
    { message: M.G, level: "info", timestamp: ago(30 * MINUTE), count: 3 },
    ...Array.from({ length: 7 }, (_, i) => ({ message: filler(i), level: "info", timestamp: ago(6 * HOUR + (i + 1) * MINUTE) })),
  ]);
  // what the Team API's status change does
  await app.sql`update error_groups set status = 'resolved' where message = ${M.C}`;
  await app.sql`update error_groups set status = 'ignored' where message = ${M.D}`;
});
afterAll(() => app?.close());

const stats = (timeframe?: string, apiKey = key) =>
  getJson(app, withQuery("/api/v1/stats", timeframe === undefined ? {} : { timeframe }), apiKey);

const EXPECTED = {
  "1h": {
    total_errors: 43,
    by_level: { error: 5, warn: 35, info: 3 },
    open_groups: 3,
    affected_users: 3,
    top: [[M.B, 35], [M.A, 3], [M.G, 3], [M.D, 2]],
  },
  "24h": {
    total_errors: 58,
    by_level: { error: 6, warn: 35, info: 17 },
    open_groups: 10,
    affected_users: 5,
    top: [[M.B, 35], [M.C, 7], [M.A, 4], [M.G, 3], [M.D, 2], ...[0, 1, 2, 3, 4].map((i) => [filler(i), 1])],
  },
  "7d": {
    total_errors: 60,
    by_level: { error: 6, warn: 37, info: 17 },
    open_groups: 10,
    affected_users: 6,
    top: [[M.B, 35], [M.C, 7], [M.A, 6], [M.G, 3], [M.D, 2], ...[0, 1, 2, 3, 4].map((i) => [filler(i), 1])],
  },
  "30d": {
    total_errors: 67,
    by_level: { error: 7, warn: 43, info: 17 },
    open_groups: 11,
    affected_users: 8,
    // A and C tie at 7: A was seen last more recently
    top: [[M.B, 35], [M.A, 7], [M.C, 7], [M.F, 6], [M.G, 3], [M.D, 2], ...[0, 1, 2, 3].map((i) => [filler(i), 1])],
  },
} as const;

describe("GET /api/v1/stats", () => {
  it.each(Object.keys(EXPECTED) as (keyof typeof EXPECTED)[])("computes the %s figures from occurrences", async (timeframe) => {
    const want = EXPECTED[timeframe];
    const r = await stats(timeframe);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      timeframe,
      total_errors: want.total_errors,
      by_level: want.by_level,
      open_groups: want.open_groups,
      affected_users: want.affected_users,
    });
    expect(Object.keys(r.body.by_level).sort()).toEqual(["error", "info", "warn"]);
    expect(r.body.top_errors.map((t: any) => [t.message, t.count])).toEqual(want.top);
  });

  it("describes each top error with the group's id, level, status and last_seen", async () => {
    const r = await stats("30d");
    const groups = await getJson(app, "/api/v1/errors?grouped=true&limit=100", key);
    const byMessage = new Map(groups.body.data.map((g: any) => [g.message, g]));
    for (const item of r.body.top_errors) {
      expect(Object.keys(item).sort()).toEqual(["count", "id", "last_seen", "level", "message", "status", "title"]);
      const g: any = byMessage.get(item.message);
      expect(item).toMatchObject({ id: g.id, level: g.level, status: g.status, last_seen: g.last_seen });
      expect(item.last_seen).toMatch(ISO_MS);
    }
    const top = Object.fromEntries(r.body.top_errors.map((t: any) => [t.message, t]));
    expect(top[M.A]).toMatchObject({ level: "error", status: "open", last_seen: ago(10 * MINUTE) });
    expect(top[M.B]).toMatchObject({ level: "warn", status: "open", last_seen: ago(2 * MINUTE) });
    expect(top[M.C]).toMatchObject({ level: "info", status: "resolved", last_seen: ago(5 * HOUR) });
    expect(top[M.D]).toMatchObject({ level: "error", status: "ignored" });
    // the window count, not the group's lifetime count
    expect(byMessage.get(M.A)).toMatchObject({ count: 12 });
  });

  it("defaults to 24h, also for an empty timeframe", async () => {
    const explicit = await stats("24h");
    for (const r of [await stats(), await stats("")]) {
      expect(r.status).toBe(200);
      expect(r.body.timeframe).toBe("24h");
      expect(r.body).toEqual(explicit.body);
    }
  });

  it.each(["2h", "1H", "24", "1d", "all", "30days"])("rejects timeframe=%s", async (timeframe) => {
    expectInvalidQuery(await stats(timeframe), "timeframe");
  });

  it("answers 401 without a valid key", async () => {
    const none = await getJson(app, "/api/v1/stats");
    expect(none.status).toBe(401);
    expect(none.body.error).toBe("unauthorized");
    expect((await stats("24h", "rbx_wrong")).status).toBe(401);
  });

  it("shows another project only its own figures, zeros included", async () => {
    const other = await createProject(app.sql, "stats stranger");
    for (const timeframe of ["1h", "30d"]) {
      const empty = await stats(timeframe, other.apiKey);
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({
        timeframe,
        total_errors: 0,
        by_level: { error: 0, warn: 0, info: 0 },
        open_groups: 0,
        affected_users: 0,
        top_errors: [],
      });
    }
    // one occurrence of a message this project also has, by a user this project also has
    await ingest(app, other.apiKey, [{ message: M.B, level: "info", timestamp: ago(MINUTE), count: 2, user_id: 105 }]);
    const mine = await stats("1h", other.apiKey);
    expect(mine.body).toMatchObject({
      total_errors: 2,
      by_level: { error: 0, warn: 0, info: 2 },
      open_groups: 1,
      affected_users: 1,
      top_errors: [{ message: M.B, count: 2, level: "info" }],
    });
    const theirs = await stats("1h");
    expect(theirs.body).toMatchObject({ total_errors: EXPECTED["1h"].total_errors, affected_users: EXPECTED["1h"].affected_users });
  });
});
