import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { inject } from "vitest";
import { createProject, freshDatabaseUrl, getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { DAY, HOUR, ISO_MS, MINUTE, floorHour, idDesc, ingest, iso, list, repeat } from "../support/query-fixtures.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/** GET /api/v1/errors/:group_id (group, hourly series, latest events) and GET /api/v1/traces/:trace_id. */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const STACK = "ServerScriptService.Combat:12 function attack\nServerScriptService.Main:3";
const boom = { message: "Detail boom: attempt to index nil", stack_trace: STACK };

/** Expected series: occurrences per UTC hour (as the ISO of the hour's start). */
function expectSeries(series: { bucket: string; count: number }[], expected: Record<string, number>, before: number, after: number) {
  expect(series).toHaveLength(168);
  const last = Date.parse(series[167].bucket);
  expect([floorHour(before), floorHour(after)]).toContain(last);
  series.forEach((s, i) => {
    expect(s.bucket).toMatch(ISO_MS);
    expect(Date.parse(s.bucket)).toBe(last - (167 - i) * HOUR);
  });
  const got = Object.fromEntries(series.filter((s) => s.count !== 0).map((s) => [s.bucket, s.count]));
  expect(got).toEqual(expected);
}

async function detail(a: TestApp, key: string, id: string) {
  const before = Date.now();
  const r = await getJson(a, `/api/v1/errors/${id}`, key);
  return { ...r, before, after: Date.now() };
}

describe("GET /api/v1/errors/:group_id", () => {
  let key: string;
  let groupId: string;
  let otherGroupId: string;
  const now = Date.now();
  const t = {
    d8: now - 8 * DAY, // outside the 7-day series
    d6: now - 6 * DAY,
    h26: now - 26 * HOUR,
    h3: now - 3 * HOUR,
    m10: now - 10 * MINUTE,
  };

  beforeAll(async () => {
    ({ apiKey: key } = await createProject(app.sql, "detail"));
    // traced events are never throttled, so the 35-event burst alone meets the throttle
    await ingest(app, key, [
      { ...boom, timestamp: iso(t.d8), count: 4, user_id: 1, trace_id: crypto.randomUUID() },
      { ...boom, timestamp: iso(t.d6), user_id: 2, trace_id: crypto.randomUUID() },
      { ...boom, timestamp: iso(t.h26), count: 3, user_id: 1, trace_id: crypto.randomUUID() },
    ]);
    const burst = await ingest(app, key, repeat(35, { ...boom, timestamp: iso(t.h3) }));
    expect(burst.throttled).toBe(5);
    await ingest(app, key, [{ ...boom, timestamp: iso(t.m10), count: 2, user_id: 3, trace_id: crypto.randomUUID() }]);
    // another group in the same hours must not leak into this group's series
    await ingest(app, key, [{ message: "Detail other", timestamp: iso(t.h3), count: 7, level: "warn" }]);

    const groups = await list(app, key, { grouped: true });
    groupId = groups.body.data.find((g: any) => g.message === boom.message).id;
    otherGroupId = groups.body.data.find((g: any) => g.message === "Detail other").id;
  });

  it("returns the group with its counters", async () => {
    const r = await detail(app, key, groupId);
    expect(r.status).toBe(200);
    expect(r.body.group).toMatchObject({
      id: groupId,
      fingerprint: expect.any(String),
      message: boom.message,
      level: "error",
      status: "open",
      count: 45,
      user_count: 3,
      first_seen: iso(t.d8),
      last_seen: iso(t.m10),
      culprit: "ServerScriptService.Combat",
      environment: "production",
    });
  });

  it("returns 168 hourly buckets, oldest first, counting count>1 and throttled occurrences at their hour", async () => {
    const r = await detail(app, key, groupId);
    expectSeries(
      r.body.series,
      {
        [iso(floorHour(t.d6))]: 1,
        [iso(floorHour(t.h26))]: 3,
        [iso(floorHour(t.h3))]: 35,
        [iso(floorHour(t.m10))]: 2,
      },
      r.before,
      r.after,
    );
    const other = await detail(app, key, otherGroupId);
    expectSeries(other.body.series, { [iso(floorHour(t.h3))]: 7 }, other.before, other.after);
  });

  it("returns the latest 20 events, newest first, ties by id", async () => {
    const r = await detail(app, key, groupId);
    const events = r.body.events;
    expect(events).toHaveLength(20);
    expect(events.every((e: any) => e.group_id === groupId)).toBe(true);
    expect(events[0]).toMatchObject({ timestamp: iso(t.m10), count: 2, user_id: 3, message: boom.message });
    expect(events.slice(1).every((e: any) => e.timestamp === iso(t.h3))).toBe(true);
    const ids = events.slice(1).map((e: any) => e.id);
    expect(ids).toEqual([...ids].sort(idDesc));
    // they are the newest of the group's 34 stored rows
    const raw = await list(app, key, { limit: 100 });
    const mine = raw.body.data.filter((e: any) => e.group_id === groupId);
    expect(mine).toHaveLength(34);
    expect(events.map((e: any) => e.id)).toEqual(mine.slice(0, 20).map((e: any) => e.id));

    const other = await detail(app, key, otherGroupId);
    expect(other.body.events).toHaveLength(1);
    expect(other.body.events[0]).toMatchObject({ group_id: otherGroupId, count: 7, level: "warn" });
  });

  it("accepts the id in upper case", async () => {
    const r = await detail(app, key, groupId.toUpperCase());
    expect(r.status).toBe(200);
    expect(r.body.group.id).toBe(groupId);
  });

  it.each([
    ["an unknown UUID", () => crypto.randomUUID()],
    ["a non-UUID id", () => "not-a-uuid"],
    ["a numeric id", () => "123"],
  ])("answers 404 not_found for %s", async (_, id) => {
    const r = await detail(app, key, id());
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: "not_found", message: expect.any(String) });
  });

  it("answers 404 for a group of another project, and 401 without a key", async () => {
    const stranger = await createProject(app.sql, "stranger");
    await ingest(app, stranger.apiKey, [{ ...boom }]);
    const r = await detail(app, stranger.apiKey, groupId);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("not_found");
    const strangersGroup = (await list(app, stranger.apiKey, { grouped: true })).body.data[0].id;
    expect((await detail(app, stranger.apiKey, strangersGroup)).status).toBe(200);
    expect((await detail(app, key, strangersGroup)).status).toBe(404);
    const anonymous = await getJson(app, `/api/v1/errors/${groupId}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe("unauthorized");
  });
});

describe("GET /api/v1/traces/:trace_id", () => {
  it("returns the trace and its events, and 404 for unknown, malformed or another project's trace", async () => {
    const owner = await createProject(app.sql, "traces");
    const stranger = await createProject(app.sql, "trace stranger");
    const traceId = crypto.randomUUID();
    const now = Date.now();
    await ingest(app, owner.apiKey, [
      { message: "Trace step one", trace_id: `{${traceId.toUpperCase()}}`, timestamp: iso(now - 2 * MINUTE) },
      { message: "Trace step two", trace_id: traceId, timestamp: iso(now - MINUTE), level: "warn" },
    ]);

    const r = await getJson(app, `/api/v1/traces/${traceId}`, owner.apiKey);
    expect(r.status).toBe(200);
    expect(r.body.trace).toMatchObject({
      trace_id: traceId,
      first_seen: iso(now - 2 * MINUTE),
      last_seen: iso(now - MINUTE),
      event_count: 2,
    });
    expect(r.body.trace.group_ids).toHaveLength(2);
    expect(r.body.events.map((e: any) => e.message)).toEqual(["Trace step one", "Trace step two"]);
    expect(r.body.events.every((e: any) => e.trace_id === traceId && typeof e.fingerprint === "string")).toBe(true);
    expect(new Set(r.body.events.map((e: any) => e.group_id))).toEqual(new Set(r.body.trace.group_ids));

    const upper = await getJson(app, `/api/v1/traces/${traceId.toUpperCase()}`, owner.apiKey);
    expect(upper.status).toBe(200);

    for (const [path, apiKey] of [
      [`/api/v1/traces/${traceId}`, stranger.apiKey],
      [`/api/v1/traces/${crypto.randomUUID()}`, owner.apiKey],
      ["/api/v1/traces/not-a-trace", owner.apiKey],
    ]) {
      const miss = await getJson(app, path, apiKey);
      expect(miss.status).toBe(404);
      expect(miss.body).toMatchObject({ error: "not_found", message: expect.any(String) });
    }
    expect((await getJson(app, `/api/v1/traces/${traceId}`)).status).toBe(401);
  });
});

describe("series on a database whose time zone is not UTC", () => {
  let tzApp: TestApp;

  beforeAll(async () => {
    // India is UTC+05:30: truncating to the hour in the session's zone would miss every UTC-hour rollup
    const url = await freshDatabaseUrl();
    const admin = postgres(inject("adminDatabaseUrl"), { max: 1, onnotice: () => {} });
    await admin.unsafe(`alter database ${new URL(url).pathname.slice(1)} set timezone to 'Asia/Kolkata'`);
    await admin.end();
    tzApp = await startTestApp({}, url);
  });
  afterAll(() => tzApp?.close());

  it("still places occurrences at their UTC hour", async () => {
    const { apiKey } = await createProject(tzApp.sql, "kolkata");
    const now = Date.now();
    const at = [now - 5 * HOUR, now - 2 * DAY];
    await ingest(tzApp, apiKey, [
      { message: "Zoned", timestamp: iso(at[0]), count: 3 },
      { message: "Zoned", timestamp: iso(at[1]) },
    ]);
    const id = (await list(tzApp, apiKey, { grouped: true })).body.data[0].id;
    const r = await detail(tzApp, apiKey, id);
    expect(r.status).toBe(200);
    expectSeries(r.body.series, { [iso(floorHour(at[0]))]: 3, [iso(floorHour(at[1]))]: 1 }, r.before, r.after);
  });
});
