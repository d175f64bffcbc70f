import zlib from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { deleteProject } from "../../db/projects.js";
import { createProject, postEncoded, postJson, startTestApp, type TestApp } from "../support/server.js";

let app: TestApp;
let apiKey: string;
let projectId: string;

const profile = (cash: number, bank = 0, dark = 0, extra: Record<string, unknown> = {}) => ({
  RPCharacterOne: { Name: "Marcus Vale", Cash: cash, InATM: bank, DarkCoin: dark },
  ...extra,
});

/** a push's answer when nothing was skipped */
const clean = (stored: number) => ({ stored, skipped: 0, skipped_values: 0, skipped_reasons: [] });

const push = (body: unknown, key: string | null = apiKey) => postJson(app, "/api/economy/ingest", body, key ?? undefined);

async function snapshots(pid = projectId) {
  return app.sql<any[]>`
    select user_id::text, cash::text, bank::text, dark_coin::text, total::text, display_names, username, display_name,
      data_code::text, last_logout, observed_at, source
    from economy_snapshots where project_id = ${pid} order by user_id`;
}
async function history(userId: string, pid = projectId) {
  return app.sql<any[]>`
    select cash::text, bank::text, dark_coin::text, total::text, source from economy_history
    where project_id = ${pid} and user_id = ${userId} order by id`;
}

function expectErrorBody(r: { status: number; body: any }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ error: code });
  expect(typeof r.body.message).toBe("string");
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());
beforeEach(async () => {
  ({ apiKey, projectId } = await createProject(app.sql, "Economy Game"));
});

describe("POST /api/economy/ingest", () => {
  it("stores a snapshot with sums over both characters, names and data code (rule 2)", async () => {
    const before = Date.now();
    const r = await push({
      players: [
        {
          user_id: 1001,
          username: "marcus_v",
          display_name: "Marcus",
          profile: {
            RPCharacterOne: { Name: "Marcus Vale", Cash: 100, InATM: 2000, DarkCoin: 1 },
            RPCharacterTwo: { FirstName: "Lena", LastName: "Hart", Cash: 50.5, InATM: 10, DarkCoin: "lots" },
            DataCode: 4,
          },
        },
      ],
    });
    expect(r.status).toBe(200);
    // DarkCoin "lots" is not an amount: a skipped value, reported, and the player is stored
    expect(r.body).toEqual({
      stored: 1,
      skipped: 0,
      skipped_values: 1,
      skipped_reasons: [{ index: 0, user_id: "1001", currency: "dark_coin", path: "RPCharacterTwo.DarkCoin", reason: "is a string, not a number" }],
    });
    const [s] = await snapshots();
    expect(s).toMatchObject({
      user_id: "1001",
      cash: "150.5",
      bank: "2010",
      dark_coin: "1",
      total: "2161.5",
      display_names: ["Marcus Vale", "Lena Hart"],
      username: "marcus_v",
      display_name: "Marcus",
      data_code: "4",
      source: "push",
    });
    // rule 4: last_logout is the push time, not anything in the profile
    expect(s.last_logout.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(s.last_logout.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
  });

  it("accepts digit-string user ids and ProfileService-wrapped profiles", async () => {
    const r = await push({
      players: [{ user_id: "2002", profile: { Data: profile(7, 8, 9), MetaData: { LastUpdate: 1, SessionLoadCount: 3 } } }],
    });
    expect(r.body).toEqual(clean(1));
    expect((await snapshots())[0]).toMatchObject({ user_id: "2002", cash: "7", bank: "8", dark_coin: "9", total: "24" });
  });

  it("skips non-numeric user ids, missing profiles and profiles with neither character (rule 1)", async () => {
    const r = await push({
      players: [
        { user_id: "abc", profile: profile(1) },
        { user_id: 3003 },
        { user_id: 3004, profile: null },
        { user_id: 3005, profile: { Cash: 100, DataCode: 1 } },
        "not an object",
        { user_id: 3006, profile: profile(5) },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stored: 1, skipped: 5, skipped_values: 0 });
    expect(r.body.skipped_reasons).toEqual([
      { index: 0, user_id: null, reason: expect.stringContaining("user_id") },
      { index: 1, user_id: "3003", reason: "profile is missing" },
      { index: 2, user_id: "3004", reason: "profile is missing" },
      { index: 3, user_id: "3005", reason: expect.stringContaining("neither") },
      { index: 4, user_id: null, reason: expect.stringContaining("object") },
    ]);
    expect((await snapshots()).map((s) => s.user_id)).toEqual(["3006"]);
  });

  it("overwrites the previous snapshot on every push, also a scanned one (rule 3)", async () => {
    await app.sql`
      insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, observed_at, source, revision_time)
      values (${projectId}, 4004, 999, 999, 999, now() + interval '1 hour', 'scan', now() + interval '1 hour')`;
    const r = await push({ players: [{ user_id: 4004, username: "first", profile: profile(10) }] });
    expect(r.body).toEqual(clean(1));
    expect((await snapshots())[0]).toMatchObject({ cash: "10", bank: "0", source: "push", username: "first" });
    await push({ players: [{ user_id: 4004, profile: profile(20) }] });
    // a later push without names keeps the stored username
    expect((await snapshots())[0]).toMatchObject({ cash: "20", username: "first" });
  });

  it("appends history only when balances change", async () => {
    await push({ players: [{ user_id: 5005, profile: profile(10, 1) }] });
    await push({ players: [{ user_id: 5005, profile: profile(10, 1) }] });
    await push({ players: [{ user_id: 5005, profile: { RPCharacterTwo: { Cash: 10, InATM: 1 } } }] });
    await push({ players: [{ user_id: 5005, profile: profile(25, 1) }] });
    expect(await history("5005")).toEqual([
      { cash: "10", bank: "1", dark_coin: "0", total: "11", source: "push" },
      { cash: "25", bank: "1", dark_coin: "0", total: "26", source: "push" },
    ]);
  });

  it("keeps the later entry when a player appears twice in one batch", async () => {
    const r = await push({ players: [{ user_id: 6006, profile: profile(1) }, { user_id: 6006, profile: profile(2) }] });
    expect(r.body).toMatchObject({ stored: 1, skipped: 1, skipped_values: 0 });
    expect(r.body.skipped_reasons).toEqual([{ index: 0, user_id: "6006", reason: expect.stringContaining("listed again at index 1") }]);
    expect((await snapshots())[0].cash).toBe("2");
  });

  it("stores huge balances exactly", async () => {
    const r = await push({ players: [{ user_id: 7007, profile: { RPCharacterOne: { Cash: 1e20 }, RPCharacterTwo: { Cash: 1 } } }] });
    expect(r.body).toEqual(clean(1));
    expect((await snapshots())[0].cash).toBe("100000000000000000001");
  });

  it("accepts 100 players and stores them all", async () => {
    const players = Array.from({ length: 100 }, (_, i) => ({ user_id: 10_000 + i, profile: profile(i) }));
    expect((await push({ players })).body).toEqual(clean(100));
    expect(await snapshots()).toHaveLength(100);
  });

  it("does not deadlock or lose updates when concurrent batches share players in different orders", async () => {
    const ids = Array.from({ length: 40 }, (_, i) => 20_000 + i);
    const batches = Array.from({ length: 8 }, (_, b) => ({
      players: (b % 2 ? [...ids].reverse() : ids).map((id) => ({ user_id: id, profile: profile(b + 1) })),
    }));
    const results = await Promise.all(batches.map((b) => push(b)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await snapshots()).toHaveLength(40);
    // every committed change was compared with the snapshot before it: no two consecutive equal rows
    const rows = await app.sql<{ user_id: string; cash: string; prev: string | null }[]>`
      select user_id::text, cash::text, lag(cash::text) over (partition by user_id order by id) as prev
      from economy_history where project_id = ${projectId}`;
    expect(rows.filter((r) => r.prev === r.cash)).toEqual([]);
  });

  describe("rejects bad input with the error body and stores nothing", () => {
    const cases: [string, unknown][] = [
      ["an empty batch (rule 5)", { players: [] }],
      ["more than 100 players (rule 5)", { players: Array.from({ length: 101 }, (_, i) => ({ user_id: i + 1, profile: profile(1) })) }],
      ["no valid entry (rule 5)", { players: [{ user_id: "x", profile: profile(1) }, { user_id: 1 }] }],
      ["a missing players array", { user_id: 1, profile: profile(1) }],
      ["players that is not an array", { players: { user_id: 1, profile: profile(1) } }],
      ["a body that is an array", [{ user_id: 1, profile: profile(1) }]],
      ["a body that is not JSON", "{players: ["],
    ];
    for (const [name, body] of cases) {
      it(name, async () => {
        const r = await push(body);
        expectErrorBody(r, 400, "invalid_payload");
        expect(await snapshots()).toEqual([]);
      });
    }

    it("lists why each entry was skipped when none is valid", async () => {
      const r = await push({ players: [{ user_id: 0, profile: profile(1) }, { user_id: 9, profile: {} }] });
      expect(r.body.details).toEqual([
        { path: "players[0]", message: expect.stringContaining("user_id") },
        { path: "players[1]", message: expect.stringContaining("neither") },
      ]);
    });

    it("accepts 100 large profiles past the general 1 MiB limit, and answers 413 past its own", async () => {
      const inventory = Array.from({ length: 400 }, (_, i) => ({ Item: `Sword of Testing ${i}`, Durability: 100, Enchant: "none" }));
      const players = Array.from({ length: 100 }, (_, i) => ({ user_id: 30_000 + i, profile: profile(i, 0, 0, { Inventory: inventory }) }));
      const body = JSON.stringify({ players });
      expect(body.length).toBeGreaterThan(2 * 1024 * 1024);
      expect((await push(body)).body).toEqual(clean(100));
      const huge = JSON.stringify({ players, pad: "x".repeat(8 * 1024 * 1024) });
      const r = await push(huge);
      expectErrorBody(r, 413, "payload_too_large");
    });

    it("answers 415 for a body that is not JSON-typed", async () => {
      const res = await app.request("/api/economy/ingest", {
        method: "POST",
        headers: { "content-type": "text/plain", "x-api-key": apiKey },
        body: JSON.stringify({ players: [{ user_id: 1, profile: profile(1) }] }),
      });
      expect(res.status).toBe(415);
      expect(await snapshots()).toEqual([]);
    });
  });

  it("answers 401 when the key is missing or invalid (rule 6)", async () => {
    const body = { players: [{ user_id: 1, profile: profile(1) }] };
    expectErrorBody(await push(body, null), 401, "unauthorized");
    expectErrorBody(await push(body, "rbx_not-a-real-key"), 401, "unauthorized");
    expect(await snapshots()).toEqual([]);
  });

  it("answers 500 without internals when storage fails, and stores nothing (rule 7)", async () => {
    await app.sql.unsafe(`
      create function econ_test_fail() returns trigger language plpgsql as $$
      begin raise exception 'disk on fire: secret detail'; end $$;
      create trigger econ_test_fail before insert on economy_history for each row execute function econ_test_fail();`);
    try {
      const r = await push({ players: [{ user_id: 8008, profile: profile(1) }] });
      expectErrorBody(r, 500, "internal");
      expect(r.text).not.toContain("disk on fire");
      expect(await snapshots()).toEqual([]);
    } finally {
      await app.sql.unsafe(`drop trigger econ_test_fail on economy_history; drop function econ_test_fail();`);
    }
  });

  it("stores a gzip push, and answers 413 to a gzip bomb past ECONOMY_MAX_BODY_BYTES decompressed, storing nothing", async () => {
    const body = zlib.gzipSync(JSON.stringify({ players: [{ user_id: 7001, profile: profile(12, 30) }] }));
    const r = await postEncoded(app, "/api/economy/ingest", body, "gzip", apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(clean(1));
    expect((await snapshots()).map((s) => [s.user_id, s.total])).toEqual([["7001", "42"]]);

    const other = await createProject(app.sql, "Bombed Game");
    // 50 MB of zeros compress to about 50 KB, past the 8 MiB limit once inflated
    const bomb = zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024), { level: 9 });
    const b = await postEncoded(app, "/api/economy/ingest", bomb, "gzip", other.apiKey);
    expectErrorBody(b, 413, "payload_too_large");
    const corrupt = Buffer.concat([body.subarray(0, 12), Buffer.alloc(24, 7)]);
    expectErrorBody(await postEncoded(app, "/api/economy/ingest", corrupt, "gzip", other.apiKey), 400, "invalid_payload");
    expectErrorBody(await postEncoded(app, "/api/economy/ingest", body, "compress", other.apiKey), 415, "unsupported_media_type");
    expect(await snapshots(other.projectId)).toEqual([]);
  });

  it("keeps projects apart", async () => {
    const other = await createProject(app.sql, "Other Game");
    await push({ players: [{ user_id: 9009, profile: profile(1) }] }, other.apiKey);
    expect(await snapshots()).toEqual([]);
    expect(await snapshots(other.projectId)).toHaveLength(1);
  });

  it("takes snapshots and history with a deleted project", async () => {
    await push({ players: [{ user_id: 9100, profile: profile(1) }] });
    expect(await deleteProject(app.sql, projectId)).toBe(true);
    const [{ n }] = await app.sql<{ n: number }[]>`
      select (select count(*) from economy_snapshots where project_id = ${projectId})
        + (select count(*) from economy_history where project_id = ${projectId}) as n`;
    expect(Number(n)).toBe(0);
  });
});

describe("POST /api/economy/ingest with an Idempotency-Key", () => {
  const keyed = async (body: unknown, key: string) => {
    const res = await app.request("/api/economy/ingest", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey, "idempotency-key": key },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as any, text };
  };
  const body = (cash: number) => ({ players: [{ user_id: 501, profile: profile(cash) }, { user_id: 502, profile: { Other: 1 } }] });

  it("a retry of the same body answers the first answer and writes nothing again", async () => {
    const first = await keyed(body(10), "push-1");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ stored: 1, skipped: 1 });
    // the player changed in between: a replay must not write its old balances back
    expect((await push({ players: [{ user_id: 501, profile: profile(20) }] })).status).toBe(200);
    const retry = await keyed(body(10), "push-1");
    // the same answer, byte for byte
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect((await snapshots()).map((s) => s.cash)).toEqual(["20"]);
    expect((await history("501")).map((h) => h.cash)).toEqual(["10", "20"]);
  });

  it("the same key with another body is a 409 that writes nothing", async () => {
    expect((await keyed(body(10), "push-2")).status).toBe(200);
    const other = await keyed(body(99), "push-2");
    expectErrorBody(other, 409, "conflict");
    expect((await snapshots()).map((s) => s.cash)).toEqual(["10"]);
  });

  it("concurrent duplicates count once and answer alike", async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => keyed(body(30), "push-3")));
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0].status).toBe(200);
    expect(await history("501")).toHaveLength(1);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_idempotency where project_id = ${projectId}`;
    expect(n).toBe(1);
  });

  it("a key belongs to its project, and a malformed key is a 400 that writes nothing", async () => {
    expect((await keyed(body(10), "shared-key")).status).toBe(200);
    const other = await createProject(app.sql, "Other Game");
    const res = await app.request("/api/economy/ingest", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": other.apiKey, "idempotency-key": "shared-key" },
      body: JSON.stringify(body(77)),
    });
    expect(res.status).toBe(200);
    expect((await snapshots(other.projectId)).map((s) => s.cash)).toEqual(["77"]);
    const bad = await keyed(body(5), "k\u00e9y");
    expectErrorBody(bad, 400, "invalid_payload");
    expect((await snapshots()).map((s) => s.cash)).toEqual(["10"]);
  });
});
