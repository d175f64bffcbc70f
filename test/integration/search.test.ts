import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countGroups, listEvents } from "../../db/errors.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { MINUTE, ingest, iso, list, repeat } from "../support/query-fixtures.js";

/**
 * Search at scale: grouped search can use the trigram index on the groups' message; raw search alone
 * reads every stored event through their distinct texts (db/event-messages.ts), and with another
 * filter reads a bounded window of the newest events, saying so when older events were left out.
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

  it("with another filter, reads only the newest events of the window and counts matches among them", async () => {
    const filter = { search: "needle", level: "error", limit: 3, offset: 1 };
    const r = await listEvents(app.sql, projectId, filter, { searchWindow: 12 });
    // the newest 12: 5 new needles, 7 hay
    expect(r.total).toBe(5);
    expect(r.searchWindowFull).toBe(true);
    expect(r.data.map((e) => e.message)).toEqual(Array(3).fill("New NEEDLE in ServerScriptService.Loot"));
    const times = r.data.map((e) => (e.timestamp as Date).getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBe(now - 7 * MINUTE); // offset 1 skips the newest (-6 min)
  });

  it("alone, searches every stored event whatever the window, newest first", async () => {
    const r = await listEvents(app.sql, projectId, { search: "needle", limit: 3, offset: 1 }, { searchWindow: 12 });
    expect(r.total).toBe(15);
    expect(r.searchWindowFull).toBeUndefined();
    expect(r.data.map((e) => (e.timestamp as Date).getTime())).toEqual([7, 8, 9].map((m) => now - m * MINUTE));
    const oldest = await listEvents(app.sql, projectId, { search: "needle", limit: 1, offset: 14 });
    expect(oldest.data.map((e) => [e.message, (e.timestamp as Date).getTime()])).toEqual([["Old needle in ServerScriptService.Loot", now - 30 * MINUTE]]);
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
  it("can be answered from the trigram index on the groups' message, which leads with the project", async () => {
    const plan = await app.sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      return tx.unsafe(`explain select id from error_groups where message ilike '%needle%'`);
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("error_groups_project_message_trgm");
    // with the project first, the index yields one project's candidates, not every project's matches
    const [index] = await app.sql<{ def: string }[]>`select indexdef as def from pg_indexes where indexname = 'error_groups_project_message_trgm'`;
    expect(index.def).toMatch(/USING gin \(project_id, message gin_trgm_ops\)/);
    const r = await list(app, key, { grouped: true, search: "NEEDLE in server" });
    expect(r.body.total).toBe(2);
  });

  it("pages through the matches in each sort with the total of every match, past the last one too", async () => {
    const page = async (params: Record<string, string | number>) => {
      const r = await list(app, key, { grouped: true, search: "needle", limit: 1, ...params });
      expect(r.status).toBe(200);
      return { total: r.body.total, messages: r.body.data.map((g: any) => g.message) };
    };
    const newer = "New NEEDLE in ServerScriptService.Loot";
    const older = "Old needle in ServerScriptService.Loot";
    expect(await page({ offset: 0 })).toEqual({ total: 2, messages: [newer] });
    expect(await page({ offset: 1 })).toEqual({ total: 2, messages: [older] });
    expect(await page({ offset: 0, sort: "first_seen" })).toEqual({ total: 2, messages: [newer] });
    // the older group has 10 occurrences, the newer 5
    expect(await page({ offset: 0, sort: "count" })).toEqual({ total: 2, messages: [older] });
    expect(await page({ offset: 1, sort: "count" })).toEqual({ total: 2, messages: [newer] });
    for (const offset of [2, 1_000_000]) expect(await page({ offset })).toEqual({ total: 2, messages: [] });
    expect(await page({ offset: 2, level: "info" })).toEqual({ total: 0, messages: [] });
  });

  it("sorts matches by their count in the selected environment, with the same total as the count alone", async () => {
    const { apiKey, projectId: pid } = await createProject(app.sql, "search by environment");
    const at = (message: string, environment: string, n: number) => repeat(n, { message, environment }, true);
    await ingest(app, apiKey, [
      ...at("Env needle A", "production", 3),
      ...at("Env needle A", "staging", 1),
      ...at("Env needle B", "production", 1),
      ...at("Env needle B", "staging", 5),
      ...at("Env needle C", "production", 2),
      ...at("Env needle D", "staging", 4),
      ...at("Env hay", "production", 9),
    ]);
    const match = { search: "env NEEDLE", environment: "production" };
    expect(await countGroups(app.sql, pid, match)).toBe(3);
    const all = await list(app, apiKey, { grouped: true, sort: "count", ...match });
    expect(all.body.total).toBe(3);
    expect(all.body.data.map((g: any) => [g.message, g.environment_count])).toEqual([
      ["Env needle A", 3],
      ["Env needle C", 2],
      ["Env needle B", 1],
    ]);
    const last = await list(app, apiKey, { grouped: true, sort: "count", ...match, limit: 2, offset: 2 });
    expect(last.body).toMatchObject({ total: 3, limit: 2, offset: 2 });
    expect(last.body.data.map((g: any) => g.message)).toEqual(["Env needle B"]);
    const past = await list(app, apiKey, { grouped: true, sort: "count", ...match, offset: 3 });
    expect(past.body).toMatchObject({ total: 3, data: [] });
  });
});
