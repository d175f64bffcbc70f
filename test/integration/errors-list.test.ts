import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import {
  DAY,
  ISO_MS,
  MINUTE,
  expectInvalidQuery,
  idDesc,
  ingest,
  iso,
  list,
  listAll,
  repeat,
} from "../support/query-fixtures.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * GET /api/v1/errors: parameters (defaults, bounds, errors), filters in both modes, `total`, ordering
 * and paging, and project scoping. Each concern gets its own project so its expectations are exact.
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const messages = (rows: any[]) => rows.map((r) => r.message);

describe("filters", () => {
  let key: string;
  const base = Date.now() - 2 * 60 * MINUTE;
  // one raw row each, oldest first; "Mixed level" is one group of two events (info, then error)
  const fixture = [
    { message: "100% done", level: "info", environment: "production", user_id: 11, place_id: 501, t: 0 },
    { message: "1000 done", level: "info", environment: "staging", user_id: 12, place_id: 501, t: 5 },
    { message: "a_b", level: "warning", environment: "production", user_id: 11, place_id: 502, t: 10 },
    { message: "axb", level: "error", environment: "production", user_id: 13, t: 15 },
    { message: "Case Sensitive THING", level: "error", environment: "staging", t: 20 },
    { message: "Mixed level", level: "info", environment: "production", user_id: 12, t: 25 },
    { message: "Mixed level", level: "error", environment: "staging", user_id: 14, t: 30 },
  ];

  beforeAll(async () => {
    ({ apiKey: key } = await createProject(app.sql, "filters"));
    const events = fixture.map(({ t, ...e }) => ({ ...e, timestamp: iso(base + t * MINUTE) }));
    // one event per request, so the insertion order (and the ids) follow the timestamps
    for (const e of events) await ingest(app, key, [e]);
    await countersApplied(app.sql);
  });

  it("lists raw events by default, newest first, with total, limit 50 and offset 0", async () => {
    const r = await list(app, key);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 7, limit: 50, offset: 0, grouped: false });
    expect(messages(r.body.data)).toEqual([
      "Mixed level",
      "Mixed level",
      "Case Sensitive THING",
      "axb",
      "a_b",
      "1000 done",
      "100% done",
    ]);
    const first = r.body.data[0];
    expect(first).toMatchObject({ level: "error", environment: "staging", user_id: 14, timestamp: iso(base + 30 * MINUTE) });
    expect(typeof first.id).toBe("string");
    expect(typeof first.group_id).toBe("string");
    expect(first.timestamp).toMatch(ISO_MS);
  });

  it("lists groups by last_seen when grouped", async () => {
    const r = await list(app, key, { grouped: true });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 6, limit: 50, offset: 0, grouped: true });
    expect(messages(r.body.data)).toEqual(["Mixed level", "Case Sensitive THING", "axb", "a_b", "1000 done", "100% done"]);
    // the group keeps its most severe level and the environment of its latest event
    expect(r.body.data[0]).toMatchObject({
      level: "error",
      environment: "staging",
      count: 2,
      user_count: 2,
      status: "open",
      first_seen: iso(base + 25 * MINUTE),
      last_seen: iso(base + 30 * MINUTE),
    });
  });

  it.each([
    ["true", true],
    ["TRUE", true],
    ["1", true],
    ["false", false],
    ["0", false],
  ])("accepts grouped=%s", async (value, grouped) => {
    const r = await list(app, key, { grouped: value });
    expect(r.status).toBe(200);
    expect(r.body.grouped).toBe(grouped);
    expect(r.body.total).toBe(grouped ? 6 : 7);
    if (grouped) expect(r.body.data[0]).toHaveProperty("fingerprint");
    else expect(r.body.data[0]).toHaveProperty("timestamp");
  });

  it.each(["yes", "2", "on"])("rejects grouped=%s", async (value) => {
    expectInvalidQuery(await list(app, key, { grouped: value }), "grouped");
  });

  it("filters raw events by the event's level, accepting warning for warn", async () => {
    const info = await list(app, key, { level: "info" });
    expect(info.body.total).toBe(3);
    expect(messages(info.body.data)).toEqual(["Mixed level", "1000 done", "100% done"]);
    for (const level of ["warn", "warning", "WARNING"]) {
      const warn = await list(app, key, { level });
      expect(warn.status).toBe(200);
      expect(warn.body.total).toBe(1);
      expect(messages(warn.body.data)).toEqual(["a_b"]);
    }
    const error = await list(app, key, { level: "error" });
    expect(messages(error.body.data)).toEqual(["Mixed level", "Case Sensitive THING", "axb"]);
  });

  it("filters groups by the group's level", async () => {
    // "Mixed level" has an info event but is an error group
    const info = await list(app, key, { grouped: true, level: "info" });
    expect(info.body.total).toBe(2);
    expect(messages(info.body.data)).toEqual(["1000 done", "100% done"]);
    const warn = await list(app, key, { grouped: true, level: "warning" });
    expect(messages(warn.body.data)).toEqual(["a_b"]);
    const error = await list(app, key, { grouped: true, level: "error" });
    expect(error.body.total).toBe(3);
    expect(messages(error.body.data)).toEqual(["Mixed level", "Case Sensitive THING", "axb"]);
  });

  it.each([false, true])("rejects an unknown level (grouped=%s)", async (grouped) => {
    expectInvalidQuery(await list(app, key, { grouped, level: "fatal" }), "level");
  });

  it("searches messages case-insensitively as a substring", async () => {
    const raw = await list(app, key, { search: "case sensitive thing" });
    expect(messages(raw.body.data)).toEqual(["Case Sensitive THING"]);
    const done = await list(app, key, { search: "DONE" });
    expect(done.body.total).toBe(2);
    expect(messages(done.body.data)).toEqual(["1000 done", "100% done"]);
    const grouped = await list(app, key, { grouped: true, search: "XED LEV" });
    expect(grouped.body.total).toBe(1);
    expect(messages(grouped.body.data)).toEqual(["Mixed level"]);
  });

  it("treats % and _ in a search as literal characters", async () => {
    for (const grouped of [false, true]) {
      const percent = await list(app, key, { grouped, search: "%" });
      expect(percent.body.total).toBe(1);
      expect(messages(percent.body.data)).toEqual(["100% done"]);
      const underscore = await list(app, key, { grouped, search: "_" });
      expect(underscore.body.total).toBe(1);
      expect(messages(underscore.body.data)).toEqual(["a_b"]);
      const backslash = await list(app, key, { grouped, search: "\\" });
      expect(backslash.body.total).toBe(0);
      const pastEnd = await list(app, key, { grouped, search: "_", offset: 1 });
      expect(pastEnd.body).toMatchObject({ total: 1, offset: 1, data: [] });
    }
  });

  it("filters by environment in both modes (a group by any of its events' environments)", async () => {
    const raw = await list(app, key, { environment: "staging" });
    expect(raw.body.total).toBe(3);
    expect(messages(raw.body.data)).toEqual(["Mixed level", "Case Sensitive THING", "1000 done"]);
    // "Mixed level" occurred in production before its latest event in staging: it is in both
    const groups = await list(app, key, { grouped: true, environment: "production" });
    expect(groups.body.total).toBe(4);
    expect(messages(groups.body.data)).toEqual(["Mixed level", "axb", "a_b", "100% done"]);
    expect(groups.body.data[0]).toMatchObject({ environment: "staging", environment_count: 1 });
    const none = await list(app, key, { environment: "dev" });
    expect(none.body).toMatchObject({ total: 0, data: [] });
  });

  it("filters raw events by user_id and place_id, combined with other filters", async () => {
    const user = await list(app, key, { user_id: 11 });
    expect(user.body.total).toBe(2);
    expect(messages(user.body.data)).toEqual(["a_b", "100% done"]);
    expect(user.body.data.every((e: any) => e.user_id === 11)).toBe(true);
    const place = await list(app, key, { place_id: "501" });
    expect(messages(place.body.data)).toEqual(["1000 done", "100% done"]);
    const both = await list(app, key, { user_id: 12, level: "info" });
    expect(both.body.total).toBe(2);
    expect(messages(both.body.data)).toEqual(["Mixed level", "1000 done"]);
    const narrower = await list(app, key, { user_id: 12, place_id: 501, environment: "staging" });
    expect(messages(narrower.body.data)).toEqual(["1000 done"]);
  });

  it.each(["abc", "-1", "1.5", "12a", "99999999999999999999"])("rejects user_id and place_id = %s", async (value) => {
    expectInvalidQuery(await list(app, key, { user_id: value }), "user_id");
    expectInvalidQuery(await list(app, key, { place_id: value }), "place_id");
  });

  it.each(["user_id", "place_id"])("rejects %s in grouped mode, saying it is raw-only", async (param) => {
    const r = await list(app, key, { grouped: true, [param]: 11 });
    expectInvalidQuery(r, param);
    expect(r.body.message).toMatch(/raw/i);
    expect(r.body.message).toContain(param);
  });

  it("filters groups by status", async () => {
    await app.sql`update error_groups set status = 'resolved' where message = 'axb'`;
    await app.sql`update error_groups set status = 'ignored' where message = 'a_b'`;
    try {
      const open = await list(app, key, { grouped: true, status: "open" });
      expect(open.body.total).toBe(4);
      expect(messages(open.body.data)).toEqual(["Mixed level", "Case Sensitive THING", "1000 done", "100% done"]);
      const resolved = await list(app, key, { grouped: true, status: "resolved" });
      expect(messages(resolved.body.data)).toEqual(["axb"]);
      expect(resolved.body.data[0].status).toBe("resolved");
      const ignored = await list(app, key, { grouped: true, status: "ignored", level: "warn" });
      expect(messages(ignored.body.data)).toEqual(["a_b"]);
      const openInfo = await list(app, key, { grouped: true, status: "open", level: "info", search: "100" });
      expect(messages(openInfo.body.data)).toEqual(["1000 done", "100% done"]);
      expect(openInfo.body.total).toBe(2);
    } finally {
      await app.sql`update error_groups set status = 'open' where message in ('axb', 'a_b')`;
    }
  });

  it("rejects an unknown status", async () => {
    expectInvalidQuery(await list(app, key, { grouped: true, status: "closed" }), "status");
  });

  it("rejects status in raw mode, saying it is grouped-only", async () => {
    for (const params of [{ status: "open" }, { status: "open", grouped: false }] as Record<string, string | boolean>[]) {
      const r = await list(app, key, params);
      expectInvalidQuery(r, "status");
      expect(r.body.message).toMatch(/grouped/i);
    }
  });

  it("counts total over the filter, not the page", async () => {
    const page1 = await list(app, key, { level: "error", limit: 2 });
    expect(page1.body).toMatchObject({ total: 3, limit: 2, offset: 0 });
    expect(messages(page1.body.data)).toEqual(["Mixed level", "Case Sensitive THING"]);
    const page2 = await list(app, key, { level: "error", limit: 2, offset: 2 });
    expect(page2.body).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(messages(page2.body.data)).toEqual(["axb"]);
    const past = await list(app, key, { level: "error", limit: 2, offset: 10 });
    expect(past.body).toMatchObject({ total: 3, data: [] });
    const groups = await list(app, key, { grouped: true, limit: 1, offset: 1 });
    expect(groups.body).toMatchObject({ total: 6, limit: 1, offset: 1 });
    expect(messages(groups.body.data)).toEqual(["Case Sensitive THING"]);
  });
});

describe("limit and offset", () => {
  let key: string;

  beforeAll(async () => {
    ({ apiKey: key } = await createProject(app.sql, "paging"));
    // 120 stored rows in one group: traced events are never throttled
    await ingest(app, key, repeat(120, { message: "Paging row", timestamp: iso(Date.now() - 3 * MINUTE) }, true));
  });

  it("defaults to 50 rows", async () => {
    const r = await list(app, key);
    expect(r.body).toMatchObject({ total: 120, limit: 50, offset: 0 });
    expect(r.body.data).toHaveLength(50);
  });

  it("clamps a limit above 100 to 100", async () => {
    for (const limit of [101, 500, "100000000000000000000"]) {
      const r = await list(app, key, { limit });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ total: 120, limit: 100 });
      expect(r.body.data).toHaveLength(100);
    }
  });

  it("uses any limit from 1 to 100 as given", async () => {
    for (const limit of [1, 7, 100]) {
      const r = await list(app, key, { limit });
      expect(r.body.limit).toBe(limit);
      expect(r.body.data).toHaveLength(limit);
    }
  });

  it.each(["0", "-1", "1.5", "abc", "1e2", "0x10"])("rejects limit=%s", async (limit) => {
    expectInvalidQuery(await list(app, key, { limit }), "limit");
    expectInvalidQuery(await list(app, key, { limit, grouped: true }), "limit");
  });

  it("offsets into the rows", async () => {
    const r = await list(app, key, { offset: 110 });
    expect(r.body).toMatchObject({ total: 120, offset: 110, limit: 50 });
    expect(r.body.data).toHaveLength(10);
    const all = await list(app, key, { limit: 100, offset: 0 });
    const tail = await list(app, key, { limit: 10, offset: 90 });
    expect(tail.body.data.map((e: any) => e.id)).toEqual(all.body.data.slice(90).map((e: any) => e.id));
  });

  it("answers an empty page, not an error, past the end", async () => {
    const r = await list(app, key, { offset: 1_000_000 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 120, offset: 1_000_000, data: [] });
  });

  it.each(["-1", "abc", "1.5"])("rejects offset=%s", async (offset) => {
    expectInvalidQuery(await list(app, key, { offset }), "offset");
    expectInvalidQuery(await list(app, key, { offset, grouped: true }), "offset");
  });

  it("rejects an offset too large to be a row position with a 400, not a 500", async () => {
    const largest = await list(app, key, { offset: Number.MAX_SAFE_INTEGER });
    expect(largest.status).toBe(200);
    expect(largest.body).toMatchObject({ total: 120, offset: Number.MAX_SAFE_INTEGER, data: [] });
    for (const offset of ["9007199254740993", "9223372036854775808", "100000000000000000000"]) {
      expectInvalidQuery(await list(app, key, { offset }), "offset");
      expectInvalidQuery(await list(app, key, { offset, grouped: true }), "offset");
    }
  });
});

describe("total of raw events", () => {
  let key: string;
  let projectId: string;

  beforeAll(async () => {
    ({ apiKey: key, projectId } = await createProject(app.sql, "totals"));
    const ts = iso(Date.now() - 5 * MINUTE);
    const first = await ingest(app, key, repeat(40, { message: "Burst", timestamp: ts }));
    expect(first.throttled).toBe(10);
    const traced = await ingest(app, key, repeat(30, { message: "Burst", timestamp: ts }, true));
    expect(traced.throttled).toBe(0);
    const second = await ingest(app, key, repeat(5, { message: "Burst", timestamp: ts }));
    expect(second.throttled).toBe(5);
    const counted = await ingest(app, key, repeat(3, { message: "Counted", count: 5, level: "warn", timestamp: ts }));
    expect(counted).toEqual({ count: 3, occurrences: 15, throttled: 0 });
  });

  it("equals the stored rows, after throttling and with traced events", async () => {
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(63);
    const unfiltered = await list(app, key);
    expect(unfiltered.body.total).toBe(63);
    // a filter that matches every row takes the counting path; both must agree
    const filtered = await list(app, key, { environment: "production" });
    expect(filtered.body.total).toBe(63);
    const rows = await listAll(app, key, {}, 100);
    expect(new Set(rows.map((e) => e.id)).size).toBe(63);
  });

  it("counts occurrences, not rows, on the groups", async () => {
    const r = await list(app, key, { grouped: true, sort: "count" });
    expect(r.body.total).toBe(2);
    expect(r.body.data.map((g: any) => [g.message, g.count])).toEqual([
      ["Burst", 75],
      ["Counted", 15],
    ]);
  });

  it("counts filtered totals over the stored rows", async () => {
    expect((await list(app, key, { level: "warn" })).body.total).toBe(3);
    expect((await list(app, key, { search: "burst" })).body.total).toBe(60);
  });
});

describe("total under concurrent ingest", () => {
  it("stays equal to the stored rows when requests race on one fingerprint", async () => {
    const { apiKey: key, projectId } = await createProject(app.sql, "racing");
    const ts = iso(Date.now() - 10 * MINUTE);
    const results = await Promise.all(Array.from({ length: 8 }, () => ingest(app, key, repeat(10, { message: "Racing burst", timestamp: ts }))));
    expect(results.reduce((n, r) => n + r.throttled, 0)).toBe(50);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(30);
    expect((await list(app, key)).body.total).toBe(30);
    expect((await list(app, key, { search: "racing" })).body.total).toBe(30);
    expect((await list(app, key, { grouped: true })).body.data[0].count).toBe(80);
  });
});

describe("grouped search", () => {
  it("matches any stored event's message of the group, not only its first, as raw search matches each event", async () => {
    const { apiKey: key } = await createProject(app.sql, "grouped search");
    // numbers are normalized away, so both land in one group named after the first
    await ingest(app, key, [{ message: "index 5 out of range" }]);
    await ingest(app, key, [{ message: "index 77 out of range" }]);
    expect((await list(app, key, { grouped: true })).body.total).toBe(1);
    expect((await list(app, key, { search: "77" })).body.total).toBe(1);
    expect((await list(app, key, { grouped: true, search: "77" })).body).toMatchObject({ total: 1, data: [{ message: "index 5 out of range" }] });
    expect((await list(app, key, { grouped: true, search: "index 5" })).body.data[0]).toMatchObject({ count: 2 });
  });
});

describe("ordering", () => {
  it("orders raw events by timestamp desc, ties by id desc, and pages through each row exactly once", async () => {
    const { apiKey: key, projectId } = await createProject(app.sql, "raw order");
    const t = Math.floor((Date.now() - 2 * 60 * MINUTE) / 1000) * 1000;
    await ingest(app, key, [
      ...repeat(3, { message: "Earlier", timestamp: iso(t - MINUTE) }),
      ...repeat(13, { message: "Tied", timestamp: iso(t) }),
      ...repeat(12, { message: "Tied traced", timestamp: iso(t) }, true),
      ...repeat(3, { message: "Later", timestamp: iso(t + MINUTE) }),
    ]);
    await ingest(app, key, repeat(5, { message: "Tied late arrival", timestamp: iso(t) }));

    const rows = await listAll(app, key, {}, 4);
    expect(rows).toHaveLength(36);
    const ids = rows.map((e) => e.id);
    expect(new Set(ids).size).toBe(36);
    const dbIds = await app.sql<{ id: string }[]>`select id::text as id from events where project_id = ${projectId}`;
    expect([...ids].sort()).toEqual(dbIds.map((r) => r.id).sort());

    const expected = [...rows].sort((a, b) => Date.parse(b.timestamp) - Date.parse(a.timestamp) || idDesc(a.id, b.id));
    expect(ids).toEqual(expected.map((e) => e.id));
    expect(rows.slice(0, 3).every((e) => e.message === "Later")).toBe(true);
    expect(rows.slice(33).every((e) => e.message === "Earlier")).toBe(true);
    // the tied rows: the last ingested come first
    expect(rows.slice(3, 8).every((e) => e.message === "Tied late arrival")).toBe(true);
    expect(rows.slice(3, 33).every((e) => e.timestamp === iso(t))).toBe(true);
  });

  it("orders groups by last_seen desc, ties by id desc, for every sort, across pages", async () => {
    const { apiKey: key } = await createProject(app.sql, "group ties");
    const ts = iso(Date.now() - 90 * MINUTE);
    await ingest(app, key, Array.from({ length: 12 }, (_, i) => ({ message: `Tie group ${String.fromCharCode(97 + i)}`, timestamp: ts })));
    for (const sort of [undefined, "last_seen", "first_seen", "count"]) {
      const rows = await listAll(app, key, sort ? { grouped: true, sort } : { grouped: true }, 5);
      expect(rows).toHaveLength(12);
      const ids = rows.map((g) => g.id);
      expect(new Set(ids).size).toBe(12);
      expect(ids).toEqual([...ids].sort().reverse());
    }
  });

  it("sorts groups by last_seen (default), first_seen or count, all descending", async () => {
    const { apiKey: key } = await createProject(app.sql, "sorts");
    const now = Date.now();
    const at = (m: number) => iso(now - m * MINUTE);
    await ingest(app, key, [
      { message: "Sort one", timestamp: at(50) },
      { message: "Sort one", timestamp: at(10) },
      { message: "Sort two", timestamp: at(40), count: 4 },
      { message: "Sort two", timestamp: at(30) },
      { message: "Sort three", timestamp: at(20) },
    ]);
    const order = async (params: Record<string, string | boolean>) =>
      messages((await list(app, key, { grouped: true, ...params })).body.data);
    expect(await order({})).toEqual(["Sort one", "Sort three", "Sort two"]);
    expect(await order({ sort: "last_seen" })).toEqual(["Sort one", "Sort three", "Sort two"]);
    expect(await order({ sort: "first_seen" })).toEqual(["Sort three", "Sort two", "Sort one"]);
    expect(await order({ sort: "count" })).toEqual(["Sort two", "Sort one", "Sort three"]);
  });

  it("rejects an unknown sort, and any sort in raw mode", async () => {
    const { apiKey: key } = await createProject(app.sql, "sort errors");
    expectInvalidQuery(await list(app, key, { grouped: true, sort: "message" }), "sort");
    expectInvalidQuery(await list(app, key, { grouped: true, sort: "-count" }), "sort");
    const raw = await list(app, key, { sort: "count" });
    expectInvalidQuery(raw, "sort");
    expect(raw.body.message).toMatch(/grouped/i);
  });
});

describe("authentication and scoping", () => {
  it("answers 401 without a key or with an unknown key", async () => {
    for (const grouped of [false, true]) {
      const none = await getJson(app, `/api/v1/errors?grouped=${grouped}`);
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ error: "unauthorized", message: expect.any(String) });
      const bad = await getJson(app, `/api/v1/errors?grouped=${grouped}`, "rbx_not-a-real-key");
      expect(bad.status).toBe(401);
      expect(bad.body.error).toBe("unauthorized");
    }
  });

  it("checks the key before the query", async () => {
    const r = await getJson(app, "/api/v1/errors?limit=abc");
    expect(r.status).toBe(401);
  });

  it("never shows another project's data", async () => {
    const mine = await createProject(app.sql, "mine");
    const theirs = await createProject(app.sql, "theirs");
    const ts = iso(Date.now() - DAY);
    await ingest(app, mine.apiKey, [{ message: "Shared message", user_id: 7, timestamp: ts }, { message: "Only mine" }]);
    await ingest(app, theirs.apiKey, [{ message: "Shared message", user_id: 7, timestamp: ts }]);
    await countersApplied(app.sql);

    const mineRaw = await list(app, mine.apiKey, { limit: 100 });
    expect(mineRaw.body.total).toBe(2);
    expect(messages(mineRaw.body.data).sort()).toEqual(["Only mine", "Shared message"]);
    const theirsRaw = await list(app, theirs.apiKey, { limit: 100 });
    expect(theirsRaw.body.total).toBe(1);
    expect(messages(theirsRaw.body.data)).toEqual(["Shared message"]);
    expect(theirsRaw.body.data[0].id).not.toBe(mineRaw.body.data.find((e: any) => e.message === "Shared message").id);

    const theirsGroups = await list(app, theirs.apiKey, { grouped: true });
    expect(theirsGroups.body.total).toBe(1);
    expect(theirsGroups.body.data[0]).toMatchObject({ message: "Shared message", count: 1, user_count: 1 });
    const mineGroups = await list(app, mine.apiKey, { grouped: true });
    expect(mineGroups.body.total).toBe(2);
    expect(mineGroups.body.data.map((g: any) => g.id)).not.toContain(theirsGroups.body.data[0].id);

    expect((await list(app, theirs.apiKey, { user_id: 7 })).body.total).toBe(1);
    expect((await list(app, theirs.apiKey, { search: "only mine" })).body.total).toBe(0);
  });
});
