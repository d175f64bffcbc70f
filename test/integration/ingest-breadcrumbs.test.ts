import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

/**
 * An event's `breadcrumbs` on the native ingest API: validated before anything is written, stored
 * with the raw event, returned by a group's events page and shown on the issue page, and never on
 * a share link (they hold the server's Output, so players' names and chat).
 */
let app: TestApp;
let projectId: string;
let apiKey: string;
let cookie: string;

beforeAll(async () => {
  app = await startTestApp();
  const u = await makeUser(app.sql);
  ({ projectId, apiKey } = await makeProject(app.sql, u.id));
  cookie = await login(app, u.email);
});
afterAll(() => app?.close());

type Crumb = Record<string, unknown>;
const ingest = (body: unknown) => postJson(app, "/api/ingest", body, apiKey);
const eventCount = async () => Number((await app.sql`select count(*) from events where project_id = ${projectId}`)[0].count);

const CRUMBS = [
  { timestamp: "2026-11-25T10:00:01.250Z", level: "info", category: "log", message: "Round 12 started" },
  { timestamp: "2026-11-25T10:00:02Z", level: "WARN", category: "log", message: "Crumbplanted said: gg" },
  { level: "error", category: "shop", message: "Purchase failed", data: { item: "Sword", price: 250 } },
  { category: "navigation" },
];

describe("breadcrumbs on POST /api/ingest", () => {
  it("stores them with the event and returns them on the group's events page only", async () => {
    const r = await ingest({
      errors: [
        { message: "Shop.Buy failed", fingerprint: ["crumbs"], breadcrumbs: CRUMBS },
        { message: "Shop.Buy failed", fingerprint: ["crumbs"], breadcrumbs: [] },
        { message: "Shop.Buy failed", fingerprint: ["crumbs"], breadcrumbs: null },
      ],
    });
    expect(r.status).toBe(200);
    const stored = await app.sql<{ breadcrumbs: unknown }[]>`select breadcrumbs from events where project_id = ${projectId} order by id`;
    const normalized = [
      { timestamp: "2026-11-25T10:00:01.250Z", level: "info", category: "log", message: "Round 12 started" },
      { timestamp: "2026-11-25T10:00:02.000Z", level: "warning", category: "log", message: "Crumbplanted said: gg" },
      { level: "error", category: "shop", message: "Purchase failed", data: { item: "Sword", price: 250 } },
      { level: "info", category: "navigation" },
    ];
    // an empty list is no breadcrumbs: nothing stored
    expect(stored.map((s) => s.breadcrumbs)).toEqual([normalized, null, null]);

    const [{ group_id: groupId }] = await app.sql<{ group_id: string }[]>`select group_id from events where project_id = ${projectId} limit 1`;
    const page = await getJson(app, `/api/v1/errors/${groupId}/events`, apiKey);
    expect(page.status).toBe(200);
    expect(page.body.data.map((e: { breadcrumbs: unknown }) => e.breadcrumbs)).toContainEqual(normalized);
    // lists stay light: the raw list and the group's latest events leave them out
    const list = await getJson(app, `/api/v1/errors?limit=10`, apiKey);
    expect(list.body.data[0]).not.toHaveProperty("breadcrumbs");
    const detail = await getJson(app, `/api/v1/errors/${groupId}`, apiKey);
    expect(JSON.stringify(detail.body)).not.toContain("Round 12 started");

    // the issue page lists them (time, level, category, message)
    const html = await (await app.request(`/projects/${projectId}/issues/${groupId}`, { headers: { cookie } })).text();
    expect(html).toContain('data-testid="breadcrumbs"');
    expect(html).toContain("Round 12 started");
    expect(html).toContain("10:00:01.250");

    // a share link shows none of it, in the API or on the page
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role: "viewer" } });
    expect(link.status).toBe(201);
    const shared = await call(app, "GET", `/api/share/${link.body.token}`);
    expect(shared.status).toBe(200);
    expect(shared.body.events).toHaveLength(3);
    for (const e of shared.body.events) expect(e).not.toHaveProperty("breadcrumbs");
    const sharePage = await (await app.request(`/share/${link.body.token}`)).text();
    expect(sharePage).toContain("Shop.Buy failed");
    for (const text of [JSON.stringify(shared.body), sharePage]) {
      expect(text).not.toContain("Crumbplanted");
      expect(text).not.toContain("Round 12 started");
    }
  });

  it("refuses invalid breadcrumbs with a 400 naming the field, and writes nothing", async () => {
    const before = await eventCount();
    const cases: [unknown, string][] = [
      ["not a list", "errors[1].breadcrumbs"],
      [Array.from({ length: 101 }, () => ({ message: "x" })), "errors[1].breadcrumbs"],
      [[{ message: "x".repeat(2049) }], "errors[1].breadcrumbs[0].message"],
      [[{ category: "c".repeat(129) }], "errors[1].breadcrumbs[0].category"],
      [[{ message: "x", level: "loud" }], "errors[1].breadcrumbs[0].level"],
      [[{ message: "x", timestamp: "yesterday" }], "errors[1].breadcrumbs[0].timestamp"],
      [[{ message: "x", data: [1, 2] }], "errors[1].breadcrumbs[0].data"],
      [[{ message: "x", data: { big: "y".repeat(4200) } }], "errors[1].breadcrumbs[0].data"],
      [[{}], "errors[1].breadcrumbs[0]"],
      [["a string"], "errors[1].breadcrumbs[0]"],
      // 20 breadcrumbs of 2,000 characters: each fits, the whole is over 32 KiB
      [Array.from({ length: 20 }, () => ({ message: "m".repeat(2000) })), "errors[1].breadcrumbs"],
    ];
    for (const [breadcrumbs, path] of cases) {
      const r = await ingest({ errors: [{ message: "fine" }, { message: "bad crumbs", breadcrumbs }] });
      expect(r.status, JSON.stringify(breadcrumbs).slice(0, 80)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    expect(await eventCount()).toBe(before);
  });

  it("stores text PostgreSQL cannot hold (NUL, a lone surrogate) as U+FFFD, like the rest of the event", async () => {
    const r = await ingest({ message: "odd crumbs", breadcrumbs: [{ message: "a\u0000b", category: "c\ud800", data: { "k\u0000": "v\udc00" } }] });
    expect(r.status).toBe(200);
    const [row] = await app.sql<{ breadcrumbs: Crumb[] }[]>`select breadcrumbs from events where project_id = ${projectId} and message = 'odd crumbs'`;
    expect(row.breadcrumbs).toEqual([{ level: "info", message: "a\ufffdb", category: "c\ufffd", data: { "k\ufffd": "v\ufffd" } }]);
  });

  it("accepts breadcrumbs at the limits", async () => {
    // 100 breadcrumbs of about 300 bytes each stay under 32 KiB
    const full = Array.from({ length: 100 }, (_, i) => ({ timestamp: "2026-11-25T10:00:00.000Z", level: "debug", category: "c".repeat(128), message: `${i} ${"m".repeat(120)}` }));
    const r = await ingest({ message: "many crumbs", breadcrumbs: full });
    expect(r.status).toBe(200);
    const [row] = await app.sql<{ n: number }[]>`select jsonb_array_length(breadcrumbs) as n from events where project_id = ${projectId} and message = 'many crumbs'`;
    expect(row.n).toBe(100);
  });
});
