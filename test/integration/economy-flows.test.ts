import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { putEconomyMap } from "../../db/economy-maps.js";
import { pruneFlows } from "../../db/economy-flows.js";
import { COINS_GEMS_MAP as MAP, coinsGemsPlayer } from "../support/economy-maps.js";
import { createProject, getJson, postEncoded, postJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * Flows over real HTTP on a real PostgreSQL: what the game reports moved a balance, stored per
 * player, summed per day and source, and reconciled with each push's gains.
 */
let app: TestApp;
let apiKey: string;
let projectId: string;

const player = coinsGemsPlayer;
const flow = (userId: number | string, currency: string, amount: number | string, source = "quest", extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  currency,
  amount,
  source,
  ...extra,
});

const postFlows = (flows: unknown, key = apiKey) => postJson(app, "/api/economy/flows", typeof flows === "string" ? flows : { flows }, key);
const push = (body: unknown) => postJson(app, "/api/economy/ingest", body, apiKey);
const pushPlayers = (...players: ReturnType<typeof player>[]) => push({ players });

async function keyed(path: string, body: unknown, key: string) {
  const res = await app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, "idempotency-key": key },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as any, text };
}

async function storedFlows(pid = projectId) {
  return app.sql<any[]>`
    select user_id::text, currency, amount::text, source, item, occurred_at, received_at from economy_flows
    where project_id = ${pid} order by id`;
}
async function unexplained(pid = projectId) {
  return app.sql<any[]>`
    select user_id::text, currency, from_amount::text, to_amount::text, explained::text, unexplained::text
    from economy_unexplained where project_id = ${pid} order by id`;
}
async function daily(pid = projectId) {
  return app.sql<any[]>`
    select currency, source, sum(gained)::text as gained, sum(spent)::text as spent, sum(flows)::int as flows
    from economy_flow_daily where project_id = ${pid} group by 1, 2 order by 1, 2`;
}
/** Everything a flow write touches, to show a refused request wrote nothing. */
async function written(pid = projectId) {
  const [r] = await app.sql<{ n: number }[]>`
    select (select count(*) from economy_flows where project_id = ${pid})
      + (select count(*) from economy_flow_currencies where project_id = ${pid})
      + (select count(*) from economy_flow_daily where project_id = ${pid})
      + (select count(*) from economy_snapshots where project_id = ${pid})
      + (select count(*) from economy_idempotency where project_id = ${pid}) as n`;
  return Number(r.n);
}

function expectError(r: { status: number; body: any }, status: number, code: string) {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ error: code });
  expect(typeof r.body.message).toBe("string");
}

/** The project has received coins flows since before any observation the test makes. */
async function coinsFlowsSinceBefore() {
  expect((await postFlows([flow(9, "coins", 1, "setup")])).status).toBe(200);
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());
beforeEach(async () => {
  ({ apiKey, projectId } = await createProject(app.sql, "Flow Game"));
  await putEconomyMap(app.sql, projectId, MAP, null);
});

describe("POST /api/economy/flows: storage", () => {
  it("stores each flow exactly, with the source lowercased, the currency's first receipt and the day's sums", async () => {
    const before = Date.now();
    const r = await postFlows([
      flow(1001, "Coins", 50, "  Quest ", { item: "daily_1", at: "2026-11-29T10:00:00.000Z" }),
      flow("1001", "coins", "-12.35", "shop", { item: "sword" }),
      flow(1002, "gems", "0.1", "purchase"),
      flow(1002, "gems", 0.2, "purchase"),
      flow(1002, "gems", "123456789012345678901234567890.5", "admin"),
    ]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ stored: 5, skipped: 0, skipped_reasons: [] });
    const rows = await storedFlows();
    expect(rows.map(({ occurred_at: _, received_at: __, ...f }) => f)).toEqual([
      { user_id: "1001", currency: "coins", amount: "50", source: "quest", item: "daily_1" },
      { user_id: "1001", currency: "coins", amount: "-12.35", source: "shop", item: "sword" },
      { user_id: "1002", currency: "gems", amount: "0.1", source: "purchase", item: null },
      { user_id: "1002", currency: "gems", amount: "0.2", source: "purchase", item: null },
      { user_id: "1002", currency: "gems", amount: "123456789012345678901234567890.5", source: "admin", item: null },
    ]);
    expect(rows[0].occurred_at.toISOString()).toBe("2026-11-29T10:00:00.000Z");
    expect(rows[1].occurred_at).toBeNull();
    for (const f of rows) expect(f.received_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(await daily()).toEqual([
      { currency: "coins", source: "quest", gained: "50", spent: "0", flows: 1 },
      { currency: "coins", source: "shop", gained: "0", spent: "12.35", flows: 1 },
      { currency: "gems", source: "admin", gained: "123456789012345678901234567890.5", spent: "0", flows: 1 },
      { currency: "gems", source: "purchase", gained: "0.3", spent: "0", flows: 2 },
    ]);
    const firsts = await app.sql<any[]>`select currency, first_received_at from economy_flow_currencies where project_id = ${projectId} order by 1`;
    expect(firsts.map((f) => f.currency)).toEqual(["coins", "gems"]);
    // a later flow leaves the first receipt as it was
    await postFlows([flow(1003, "coins", 5)]);
    const again = await app.sql<any[]>`select currency, first_received_at from economy_flow_currencies where project_id = ${projectId} order by 1`;
    expect(again).toEqual(firsts);
  });

  it("takes a gzip body", async () => {
    const body = gzipSync(Buffer.from(JSON.stringify({ flows: [flow(7, "gems", 3, "trade")] })));
    const r = await postEncoded(app, "/api/economy/flows", body, "gzip", apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ stored: 1, skipped: 0, skipped_reasons: [] });
    expect((await storedFlows()).map((f) => f.amount)).toEqual(["3"]);
  });

  it("skips each bad field with its reason and stores the valid flows", async () => {
    const bad: [unknown, RegExp][] = [
      ["not an object", /must be an object/],
      [[1, 2], /must be an object/],
      [{ ...flow(1, "coins", 5), user_id: -3 }, /^user_id must be a positive integer/],
      [{ ...flow(1, "coins", 5), user_id: "12a" }, /^user_id/],
      [{ ...flow(1, "coins", 5), user_id: undefined }, /^user_id/],
      [flow(1, "total", 5), /^currency must be a key of the project's currency map \(coins, gems\)/],
      [flow(1, "diamonds", 5), /^currency must be a key/],
      [{ ...flow(1, "coins", 5), currency: 3 }, /^currency must be a string/],
      [flow(1, "coins", 0), /^amount must not be zero/],
      [flow(1, "coins", "-0.000"), /^amount must not be zero/],
      [flow(1, "coins", "1e5"), /^amount must be a finite number or a decimal string/],
      [flow(1, "coins", "12,5"), /^amount must be a finite number/],
      [flow(1, "coins", "9".repeat(101)), /^amount must be a finite number/],
      [{ ...flow(1, "coins", 5), amount: null }, /^amount must be a finite number/],
      [{ ...flow(1, "coins", 5), amount: true }, /^amount must be a finite number/],
      [flow(1, "coins", 5, "   "), /^source must be 1 to 64 characters/],
      [flow(1, "coins", 5, "s".repeat(65)), /^source must be 1 to 64 characters/],
      [{ ...flow(1, "coins", 5), source: 4 }, /^source must be a string/],
      [{ ...flow(1, "coins", 5), source: undefined }, /^source must be a string/],
      [flow(1, "coins", 5, "bad\u0000source"), /^source must not contain NUL/],
      [flow(1, "coins", 5, "quest", { item: "i".repeat(129) }), /^item must be at most 128 characters/],
      [flow(1, "coins", 5, "quest", { item: 12 }), /^item must be a string/],
      [flow(1, "coins", 5, "quest", { item: "\ud800" }), /^item must not contain NUL characters or unpaired surrogates/],
      [flow(1, "coins", 5, "quest", { at: "yesterday" }), /^at must be an ISO 8601 time/],
      [flow(1, "coins", 5, "quest", { at: 1764410400 }), /^at must be an ISO 8601 time/],
      [flow(1, "coins", 5, "quest", { at: "2026-13-45T99:00:00Z" }), /^at must be an ISO 8601 time/],
    ];
    const good = [flow(5, "coins", 10, "quest", { item: "i".repeat(128), at: "2026-11-29T10:00:00+02:00" }), flow(5, "gems", -1, "s".repeat(64))];
    const r = await postFlows([...bad.map(([f]) => f), ...good]);
    expect(r.status).toBe(200);
    expect(r.body.stored).toBe(2);
    expect(r.body.skipped).toBe(bad.length);
    expect(r.body.skipped_reasons.map((s: any) => s.index)).toEqual(bad.map((_, i) => i));
    bad.forEach(([, reason], i) => expect(r.body.skipped_reasons[i].reason).toMatch(reason));
    const rows = await storedFlows();
    expect(rows.map((f) => [f.currency, f.amount, f.source])).toEqual([["coins", "10", "quest"], ["gems", "-1", "s".repeat(64)]]);
    expect(rows[0].occurred_at.toISOString()).toBe("2026-11-29T08:00:00.000Z");
  });

  it("lists at most 50 skipped flows in the answer and counts them all", async () => {
    const r = await postFlows([...Array.from({ length: 60 }, () => flow(1, "nope", 1)), flow(1, "coins", 1)]);
    expect(r.status).toBe(200);
    expect(r.body.skipped).toBe(60);
    expect(r.body.skipped_reasons).toHaveLength(50);
  });

  it("answers 400 with the error body and writes nothing when no flow is valid or the body is not a batch", async () => {
    const cases: [unknown, string][] = [
      [[flow(1, "nope", 5), flow(-1, "coins", 5)], "flows[0]"],
      ["[]", ""],
      [JSON.stringify({ flows: {} }), "flows"],
      [JSON.stringify({}), "flows"],
      [[], "flows"],
      [Array.from({ length: 1001 }, () => flow(1, "coins", 1)), "flows"],
      ["{not json", ""],
    ];
    for (const [body, path] of cases) {
      const r = await postFlows(body);
      expectError(r, 400, "invalid_payload");
      if (path) expect(r.body.details?.[0]?.path).toBe(path);
    }
    const none = await postFlows([flow(1, "nope", 5), flow(-1, "coins", 5)]);
    expect(none.body.details).toEqual([
      { path: "flows[0]", message: expect.stringMatching(/^currency must be a key/) },
      { path: "flows[1]", message: expect.stringMatching(/^user_id/) },
    ]);
    expect(await written()).toBe(0);
  });

  it("takes exactly 1000 flows", async () => {
    const r = await postFlows(Array.from({ length: 1000 }, (_, i) => flow(1 + (i % 37), i % 2 ? "coins" : "gems", i + 1, `s${i % 5}`)));
    expect(r.status).toBe(200);
    expect(r.body.stored).toBe(1000);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_flows where project_id = ${projectId}`;
    expect(n).toBe(1000);
  });

  it("needs the project's API key", async () => {
    const r = await postJson(app, "/api/economy/flows", { flows: [flow(1, "coins", 5)] });
    expect(r.status).toBe(401);
    const wrong = await postJson(app, "/api/economy/flows", { flows: [flow(1, "coins", 5)] }, "rbx_wrong");
    expect(wrong.status).toBe(401);
    expect(await written()).toBe(0);
    const get = await app.request("/api/economy/flows", { headers: { "x-api-key": apiKey } });
    expect(get.status).toBe(405);
  });

  it("an Idempotency-Key retry answers the first answer and writes nothing again; another body is a 409", async () => {
    const body = { flows: [flow(1, "coins", 5), flow(1, "nope", 5)] };
    const first = await keyed("/api/economy/flows", body, "flows-1");
    expect(first.status).toBe(200);
    const retry = await keyed("/api/economy/flows", body, "flows-1");
    expect(retry.text).toBe(first.text);
    expect(await storedFlows()).toHaveLength(1);
    expect(await daily()).toEqual([{ currency: "coins", source: "quest", gained: "5", spent: "0", flows: 1 }]);
    expectError(await keyed("/api/economy/flows", { flows: [flow(1, "coins", 6)] }, "flows-1"), 409, "conflict");
    // the same body sent as a push under the same key is another request
    expectError(await keyed("/api/economy/ingest", body, "flows-1"), 409, "conflict");
    expect(await storedFlows()).toHaveLength(1);
  });

  it("concurrent duplicates under one key are written once", async () => {
    const body = { flows: [flow(1, "coins", 5), flow(2, "gems", -3, "shop")] };
    const answers = await Promise.all(Array.from({ length: 6 }, () => keyed("/api/economy/flows", body, "flows-dup")));
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0].status).toBe(200);
    expect(await storedFlows()).toHaveLength(2);
  });

  it("parallel posts of one day and source add up exactly", async () => {
    const posts = Array.from({ length: 24 }, (_, i) =>
      postFlows(Array.from({ length: 50 }, (__, j) => flow(1 + ((i * 50 + j) % 40), "coins", j % 5 === 0 ? "-0.5" : "1.25", j % 5 === 0 ? "shop" : "quest"))),
    );
    const answers = await Promise.all(posts);
    for (const a of answers) expect(a.status).toBe(200);
    // each post: 40 quest flows of 1.25 and 10 shop flows of -0.5
    expect(await daily()).toEqual([
      { currency: "coins", source: "quest", gained: "1200.00", spent: "0", flows: 960 },
      { currency: "coins", source: "shop", gained: "0", spent: "120.0", flows: 240 },
    ]);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_flows where project_id = ${projectId}`;
    expect(n).toBe(1200);
  });
});

describe("flows and pushes of the same players at once", () => {
  it("all are answered and every flow is stored and counted once", async () => {
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    const requests = Array.from({ length: 12 }, (_, r) =>
      r % 2
        ? postFlows(ids.map((id) => flow(id, "coins", 2, "quest")))
        : push({ players: ids.slice(r % 3).map((id) => player(id, { coins: 100 + r })), flows: ids.map((id) => flow(id, "coins", -1, "shop")) }),
    );
    const answers = await Promise.all(requests);
    for (const a of answers) expect(a.status, a.text).toBe(200);
    expect(await daily()).toEqual([
      { currency: "coins", source: "quest", gained: "240", spent: "0", flows: 120 },
      { currency: "coins", source: "shop", gained: "0", spent: "120", flows: 120 },
    ]);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_flows where project_id = ${projectId}`;
    expect(n).toBe(240);
  });
});

describe("POST /api/economy/ingest with flows", () => {
  it("answers `flows` only when the request has the key, and takes flows without players", async () => {
    const plain = await pushPlayers(player(1, { coins: 5 }));
    expect(plain.body).toEqual({ stored: 1, skipped: 0, skipped_values: 0, skipped_reasons: [] });
    const both = await push({ players: [player(1, { coins: 6 })], flows: [flow(1, "coins", 1), flow(1, "zzz", 1)] });
    expect(both.status).toBe(200);
    expect(both.body).toEqual({
      stored: 1,
      skipped: 0,
      skipped_values: 0,
      skipped_reasons: [],
      flows: { stored: 1, skipped: 1, skipped_reasons: [{ index: 1, reason: expect.stringMatching(/^currency/) }] },
    });
    const emptyFlows = await push({ players: [player(1, { coins: 7 })], flows: [] });
    expect(emptyFlows.body.flows).toEqual({ stored: 0, skipped: 0, skipped_reasons: [] });
    const flowsOnly = await push({ flows: [flow(2, "gems", 3)] });
    expect(flowsOnly.status).toBe(200);
    expect(flowsOnly.body).toMatchObject({ stored: 0, skipped: 0, flows: { stored: 1, skipped: 0 } });
    const emptyPlayers = await push({ players: [], flows: [flow(2, "gems", 4)] });
    expect(emptyPlayers.body).toMatchObject({ stored: 0, flows: { stored: 1 } });
    expect((await storedFlows()).map((f) => f.amount)).toEqual(["1", "3", "4"]);
  });

  it("answers 400 and writes nothing when neither players nor flows hold a valid entry", async () => {
    expectError(await push({ players: [], flows: [] }), 400, "invalid_payload");
    expectError(await push({ flows: [] }), 400, "invalid_payload");
    expectError(await push({ players: [player(1, { coins: 1 })], flows: "x" }), 400, "invalid_payload");
    expectError(await push({ players: [player(1, { coins: 1 })], flows: Array.from({ length: 1001 }, () => flow(1, "coins", 1)) }), 400, "invalid_payload");
    const none = await push({ players: [{ user_id: "x", profile: {} }], flows: [flow(1, "nope", 2)] });
    expectError(none, 400, "invalid_payload");
    expect(none.body.details.map((d: any) => d.path)).toEqual(["players[0]", "flows[0]"]);
    expect(await written()).toBe(0);
  });

  it("stores the valid flows of a push whose players are all invalid", async () => {
    const r = await push({ players: [{ user_id: "x", profile: {} }], flows: [flow(1, "coins", 2)] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ stored: 0, skipped: 1, flows: { stored: 1 } });
  });

  it("an Idempotency-Key retry of a push with flows writes the flows once", async () => {
    const body = { players: [player(1, { coins: 5 })], flows: [flow(1, "coins", 5)] };
    const first = await keyed("/api/economy/ingest", body, "push-flows");
    const retry = await keyed("/api/economy/ingest", body, "push-flows");
    expect(first.status).toBe(200);
    expect(retry.text).toBe(first.text);
    expect(await storedFlows()).toHaveLength(1);
  });
});

describe("reconciliation of pushes with flows", () => {
  it("a gain the flows explain records nothing; one they explain in part records the exact rest", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }), player(2, { coins: 0.1 }));
    await postFlows([flow(1, "coins", 30, "quest"), flow(1, "coins", 20, "trade"), flow(2, "coins", "0.1")]);
    await pushPlayers(player(1, { coins: 150 }), player(2, { coins: 0.3 }));
    expect(await unexplained()).toEqual([
      { user_id: "2", currency: "coins", from_amount: "0.1", to_amount: "0.3", explained: "0.1", unexplained: "0.1" },
    ]);
  });

  it("a gain with no flows at all is unexplained in full", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 10 }));
    await pushPlayers(player(1, { coins: 1_000_010 }));
    expect(await unexplained()).toEqual([
      { user_id: "1", currency: "coins", from_amount: "10", to_amount: "1000010", explained: "0", unexplained: "1000000" },
    ]);
  });

  it("sinks count: a balance that fell less than was spent is an unexplained gain; one that fell as spent is not", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }), player(2, { coins: 100 }));
    await postFlows([flow(1, "coins", -30, "shop"), flow(2, "coins", -30, "shop")]);
    await pushPlayers(player(1, { coins: 70 }), player(2, { coins: 90 }));
    expect(await unexplained()).toEqual([
      { user_id: "2", currency: "coins", from_amount: "100", to_amount: "90", explained: "-30", unexplained: "20" },
    ]);
  });

  it("a loss larger than the flows say is not a gain", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }));
    await postFlows([flow(1, "coins", 50, "quest")]);
    await pushPlayers(player(1, { coins: 60 }));
    expect(await unexplained()).toEqual([]);
  });

  it("flows in the same request as the push explain its gain", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }));
    const r = await push({ players: [player(1, { coins: 175 })], flows: [flow(1, "coins", 75, "purchase")] });
    expect(r.status).toBe(200);
    expect(await unexplained()).toEqual([]);
    // and in part
    await push({ players: [player(1, { coins: 300 })], flows: [flow(1, "coins", 100, "purchase")] });
    expect(await unexplained()).toEqual([
      { user_id: "1", currency: "coins", from_amount: "175", to_amount: "300", explained: "100", unexplained: "25" },
    ]);
  });

  it("flows of another player or currency explain nothing", async () => {
    await coinsFlowsSinceBefore();
    await postFlows([flow(9, "gems", 1, "setup")]);
    await pushPlayers(player(1, { coins: 100, gems: 5 }));
    await postFlows([flow(2, "coins", 50), flow(1, "gems", 50)]);
    await pushPlayers(player(1, { coins: 150, gems: 55 }));
    expect(await unexplained()).toEqual([
      { user_id: "1", currency: "coins", from_amount: "100", to_amount: "150", explained: "0", unexplained: "50" },
    ]);
  });

  it("a currency the game sends no flows of stays snapshot-only", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100, gems: 1 }));
    await pushPlayers(player(1, { coins: 100, gems: 1_000_000 }));
    expect(await unexplained()).toEqual([]);
    // the rise is still there for the snapshot detector
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_rises where project_id = ${projectId} and currency = 'gems'`;
    expect(n).toBe(1);
  });

  it("a game that starts sending flows is not flagged for the time before, and is from then on", async () => {
    await pushPlayers(player(1, { coins: 100 }));
    // the first coins flow of the project arrives after the previous observation
    await postFlows([flow(1, "coins", 10, "quest")]);
    await pushPlayers(player(1, { coins: 500 }));
    expect(await unexplained()).toEqual([]);
    await postFlows([flow(1, "coins", 10, "quest")]);
    await pushPlayers(player(1, { coins: 600 }));
    expect(await unexplained()).toEqual([
      { user_id: "1", currency: "coins", from_amount: "500", to_amount: "600", explained: "10", unexplained: "90" },
    ]);
  });

  it("a player's first observation is not reconciled (no previous balance)", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 1_000_000 }));
    expect(await unexplained()).toEqual([]);
  });

  it("flows before the previous observation do not explain a later gain", async () => {
    await coinsFlowsSinceBefore();
    await postFlows([flow(1, "coins", 50)]);
    await pushPlayers(player(1, { coins: 50 }));
    await pushPlayers(player(1, { coins: 100 }));
    expect(await unexplained()).toEqual([
      { user_id: "1", currency: "coins", from_amount: "50", to_amount: "100", explained: "0", unexplained: "50" },
    ]);
  });

  it("an observation that changed nothing keeps the window open since the last change", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }));
    await postFlows([flow(1, "coins", 40)]);
    // same balances: no history row, nothing to reconcile
    await pushPlayers(player(1, { coins: 100 }));
    await postFlows([flow(1, "coins", -40, "shop")]);
    await pushPlayers(player(1, { coins: 100, gems: 1 }));
    expect(await unexplained()).toEqual([]);
  });

  it("a gain since an observation older than the retention period is not reconciled (its flows may be gone)", async () => {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }), player(2, { coins: 100 }));
    await app.sql`update economy_flow_currencies set first_received_at = now() - interval '200 days' where project_id = ${projectId}`;
    await app.sql`
      update economy_snapshots set history_observed_at = now() - interval '91 days'
      where project_id = ${projectId} and user_id = 1`;
    await pushPlayers(player(1, { coins: 900 }), player(2, { coins: 900 }));
    // the default retention is 90 days: player 1's previous observation is older
    expect(await unexplained()).toEqual([
      { user_id: "2", currency: "coins", from_amount: "100", to_amount: "900", explained: "0", unexplained: "800" },
    ]);
  });

  it("a scan-free push of many players reconciles each one", async () => {
    await coinsFlowsSinceBefore();
    const ids = Array.from({ length: 100 }, (_, i) => i + 1);
    await push({ players: ids.map((id) => player(id, { coins: 100 })) });
    await postFlows(ids.map((id) => flow(id, "coins", id % 2 ? 50 : 40)));
    await push({ players: ids.map((id) => player(id, { coins: 150 })) });
    const rows = await unexplained();
    expect(rows).toHaveLength(50);
    for (const r of rows) expect(r).toMatchObject({ explained: "40", unexplained: "10" });
    expect(rows.map((r) => Number(r.user_id)).sort((a, b) => a - b)).toEqual(ids.filter((id) => id % 2 === 0));
  });
});

describe("flow retention", () => {
  it("deletes flows older than the period and keeps the daily sums and unexplained gains", async () => {
    await postFlows([flow(1, "coins", 5), flow(1, "coins", 6)]);
    await app.sql`update economy_flows set received_at = now() - interval '31 days' where project_id = ${projectId} and amount = 5`;
    expect(await pruneFlows(app.sql, 30)).toBeGreaterThanOrEqual(1);
    expect((await storedFlows()).map((f) => f.amount)).toEqual(["6"]);
    expect(await daily()).toEqual([{ currency: "coins", source: "quest", gained: "11", spent: "0", flows: 2 }]);
  });
});

describe("reads", () => {
  async function seed() {
    await coinsFlowsSinceBefore();
    await pushPlayers(player(1, { coins: 100 }, { username: "alice" }), player(2, { coins: 100 }));
    await postFlows([
      flow(1, "coins", 30, "quest", { item: "q1" }),
      flow(1, "coins", -10, "shop", { item: "hat" }),
      flow(2, "coins", 5, "quest"),
      flow(2, "gems", 7, "purchase"),
    ]);
    await pushPlayers(player(1, { coins: 220 }), player(2, { coins: 105 }));
  }

  it("GET /api/v1/economy/flows: one currency by source, or every currency", async () => {
    await seed();
    const one = await getJson(app, "/api/v1/economy/flows?currency=COINS&days=7", apiKey);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      currency: "coins",
      days: 7,
      sources: [
        { source: "quest", gained: "35", spent: "0", flows: 2 },
        { source: "shop", gained: "0", spent: "10", flows: 1 },
        { source: "setup", gained: "1", spent: "0", flows: 1 },
      ],
      totals: { gained: "36", spent: "10", flows: 4 },
    });
    const all = await getJson(app, "/api/v1/economy/flows", apiKey);
    expect(all.status).toBe(200);
    expect(all.body.currency).toBe("all");
    expect(all.body.days).toBe(30);
    expect(all.body.currencies.map((c: any) => [c.currency, c.totals])).toEqual([
      ["coins", { gained: "36", spent: "10", flows: 4 }],
      ["gems", { gained: "7", spent: "0", flows: 1 }],
    ]);
    expect((await getJson(app, "/api/v1/economy/flows?currency=total", apiKey)).body.currency).toBe("all");
    // days count back from today: flows of a day outside the window are left out
    await app.sql`update economy_flow_daily set day = day - 10 where project_id = ${projectId} and source = 'shop'`;
    expect((await getJson(app, "/api/v1/economy/flows?currency=coins&days=10", apiKey)).body.totals).toEqual({ gained: "36", spent: "0", flows: 3 });
    expect((await getJson(app, "/api/v1/economy/flows?currency=coins&days=11", apiKey)).body.totals).toEqual({ gained: "36", spent: "10", flows: 4 });
  });

  it("GET /api/v1/economy/unexplained: filters and pages, newest first, naming the player", async () => {
    await seed();
    const r = await getJson(app, "/api/v1/economy/unexplained", apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 1, currency: "all", min_amount: "0", days: 30, limit: 50, offset: 0 });
    expect(r.body.data).toEqual([
      {
        id: expect.any(String),
        user_id: "1",
        username: "alice",
        display_name: null,
        display_names: [],
        currency: "coins",
        from_amount: "100",
        to_amount: "220",
        increase: "120",
        explained: "20",
        unexplained: "100",
        from_observed_at: expect.any(String),
        to_observed_at: expect.any(String),
      },
    ]);
    await pushPlayers(player(2, { coins: 155 }));
    const page = await getJson(app, "/api/v1/economy/unexplained?currency=coins&limit=1&offset=0", apiKey);
    expect(page.body.total).toBe(2);
    expect(page.body.data.map((d: any) => d.user_id)).toEqual(["2"]);
    const next = await getJson(app, "/api/v1/economy/unexplained?currency=coins&limit=1&offset=1", apiKey);
    expect(next.body.data.map((d: any) => d.user_id)).toEqual(["1"]);
    expect((await getJson(app, "/api/v1/economy/unexplained?min_amount=60", apiKey)).body.data.map((d: any) => d.user_id)).toEqual(["1"]);
    expect((await getJson(app, "/api/v1/economy/unexplained?min_amount=100.5", apiKey)).body.total).toBe(0);
    expect((await getJson(app, "/api/v1/economy/unexplained?currency=gems", apiKey)).body.total).toBe(0);
  });

  it("parameter errors are 400 invalid_query", async () => {
    for (const q of [
      "/api/v1/economy/flows?currency=diamonds",
      "/api/v1/economy/flows?days=0",
      "/api/v1/economy/flows?days=367",
      "/api/v1/economy/flows?days=x",
      "/api/v1/economy/unexplained?min_amount=-1",
      "/api/v1/economy/unexplained?min_amount=abc",
      "/api/v1/economy/unexplained?days=3651",
      "/api/v1/economy/unexplained?limit=0",
      "/api/v1/economy/unexplained?offset=-1",
      "/api/v1/economy/unexplained?currency=nope",
    ]) {
      const r = await getJson(app, q, apiKey);
      expectError(r, 400, "invalid_query");
    }
    expect((await getJson(app, "/api/v1/economy/flows", undefined)).status).toBe(401);
    expect((await getJson(app, "/api/v1/economy/unexplained", undefined)).status).toBe(401);
  });

  it("GET /api/v1/economy/players/:user_id adds the player's latest flows and unexplained gains", async () => {
    await seed();
    const r = await getJson(app, "/api/v1/economy/players/1", apiKey);
    expect(r.status).toBe(200);
    expect(r.body.flows.map((f: any) => [f.currency, f.amount, f.source, f.item])).toEqual([
      ["coins", "-10", "shop", "hat"],
      ["coins", "30", "quest", "q1"],
    ]);
    expect(r.body.unexplained).toEqual([expect.objectContaining({ currency: "coins", from_amount: "100", to_amount: "220", explained: "20", unexplained: "100" })]);
    await postFlows(Array.from({ length: 120 }, (_, i) => flow(1, "gems", i + 1)));
    expect((await getJson(app, "/api/v1/economy/players/1", apiKey)).body.flows).toHaveLength(100);
  });
});
