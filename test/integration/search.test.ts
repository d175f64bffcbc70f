import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listEvents } from "../../db/errors.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { MINUTE, ingest, iso, list, repeat } from "../support/query-fixtures.js";

/**
 * Search at scale: grouped search can use the trigram index on the groups' message, and raw search
 * reads a bounded window of the newest events, saying so when older events were left out.
 */
let app: TestApp;
let key: string;
let projectId: string;
const now = Date.now();

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey: key, projectId } = await createProject(app.sql, "search"));
  // oldest first: 10 "needle" events, then 10 others, then 5 more "needle" events, one minute apart
  const events = [
    ...repeat(10, { message: "Old needle in ServerScriptService.Loot" }, true),
    ...repeat(10, { message: "Unrelated hay" }, true),
    ...repeat(5, { message: "New NEEDLE in ServerScriptService.Loot" }, true),
  ].map((e, i) => ({ ...e, timestamp: iso(now - (30 - i) * MINUTE) }));
  await ingest(app, key, events);
});
afterAll(() => app?.close());

describe("raw search", () => {
  it("searches every event while they fit in the window, without the window flag", async () => {
    const r = await list(app, key, { search: "needle" });
    expect(r.body.total).toBe(15);
    expect(r.body.data).toHaveLength(15);
    expect(r.body).not.toHaveProperty("search_window_full");
  });

  it("reads only the newest events of the window and counts matches among them", async () => {
    const filter = { search: "needle", limit: 3, offset: 1 };
    const r = await listEvents(app.sql, projectId, filter, { searchWindow: 12 });
    // the newest 12: 5 new needles, 7 hay
    expect(r.total).toBe(5);
    expect(r.searchWindowFull).toBe(true);
    expect(r.data.map((e) => e.message)).toEqual(Array(3).fill("New NEEDLE in ServerScriptService.Loot"));
    const times = r.data.map((e) => (e.timestamp as Date).getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBe(now - 7 * MINUTE); // offset 1 skips the newest (-6 min)
  });

  it("pages past the last match with the total still known", async () => {
    const r = await listEvents(app.sql, projectId, { search: "needle", limit: 10, offset: 50 });
    expect(r.data).toEqual([]);
    expect(r.total).toBe(15);
  });

  it("answers an empty page and zero for no match", async () => {
    const r = await list(app, key, { search: "no such text" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ data: [], total: 0 });
  });
});

describe("grouped search", () => {
  it("can be answered from the trigram index on the groups' message", async () => {
    const plan = await app.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(`explain select id from error_groups where message ilike '%needle%'`);
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("error_groups_message_trgm");
    const r = await list(app, key, { grouped: true, search: "NEEDLE in server" });
    expect(r.body.total).toBe(2);
  });
});
