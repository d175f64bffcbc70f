import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";
import { scriptedProxy, type Scripted } from "../support/scripted-proxy.js";
import { notHealth, type SentRequest } from "../support/roblox.js";

/**
 * `Monitor.economy.flow` in real Luau: what it sends, how it batches and orders flows with pushes,
 * and what it counts as lost. `POST /api/economy/ingest` is answered here as the service's flows
 * contract says (docs/economy.md, "Flows"): `players` and `flows` side by side, a bad flow skipped
 * with a reason, `flows: {stored, skipped, skipped_reasons}` beside the push's answer. Errors and
 * loss reports go on to the real service, which stores the reported losses.
 */
const t = sdkSuite();
const { start } = t;

/** The currencies of the project's map, as the contract server knows them. */
const CURRENCIES = new Set(["coins", "gems"]);
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

type Flow = { user_id: number; currency: string; amount: number | string; source: string; item?: string; at?: string };

/** Why the contract skips a flow, or null when it takes it. */
function flowProblem(f: any): string | null {
  if (typeof f !== "object" || f === null) return "must be an object";
  if (!Number.isSafeInteger(f.user_id) || f.user_id <= 0) return "user_id must be a positive integer";
  if (typeof f.currency !== "string" || !CURRENCIES.has(f.currency.toLowerCase())) return "currency is not in the project's currency map";
  const amount = Number(f.amount);
  if (!Number.isFinite(amount) || amount === 0) return "amount must be a finite number other than 0";
  if (typeof f.source !== "string" || f.source.trim().length < 1 || f.source.trim().length > 64) return "source must be 1 to 64 characters";
  if (f.item !== undefined && (typeof f.item !== "string" || f.item.length > 128)) return "item must be at most 128 characters";
  if (f.at !== undefined && Number.isNaN(Date.parse(f.at))) return "at must be an ISO time";
  return null;
}

/** The service's answer to an economy request as the contract has it (every player stored). */
function contractAnswer(body: any): Scripted {
  const players: unknown[] = Array.isArray(body?.players) ? body.players : [];
  const flows: unknown[] | undefined = Array.isArray(body?.flows) ? body.flows : undefined;
  if (players.length === 0 && (flows?.length ?? 0) === 0)
    return { status: 400, body: { error: "invalid_payload", message: "Send players or flows." } };
  if (players.length > 100 || (flows?.length ?? 0) > 1000)
    return { status: 400, body: { error: "invalid_payload", message: "Too many entries." } };
  const answer: Record<string, unknown> = { stored: players.length, skipped: 0, skipped_values: 0, skipped_reasons: [] };
  if (flows) {
    const reasons = flows.flatMap((f, index) => {
      const reason = flowProblem(f);
      return reason ? [{ index, reason }] : [];
    });
    answer.flows = { stored: flows.length - reasons.length, skipped: reasons.length, skipped_reasons: reasons.slice(0, 50) };
  }
  return { status: 200, body: answer };
}

/** Answers an economy request differently for one test (undefined: as the contract says). */
let economyAnswer: (body: any) => Scripted = () => undefined;
let proxy: Awaited<ReturnType<typeof scriptedProxy>>;

beforeAll(async () => {
  proxy = await scriptedProxy(
    () => t.app.url,
    (path, body) => (path === "/api/economy/ingest" ? (economyAnswer(body) ?? contractAnswer(body)) : undefined),
  );
  t.proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy?.close();
});
beforeEach(() => {
  economyAnswer = () => undefined;
});

const economyRequests = () => t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
const bodyOf = (r: SentRequest) => JSON.parse(r.body) as { players?: { user_id: number; profile: any }[]; flows?: Flow[] };
/** The flows the service took (2xx), in the order it received them. */
const receivedFlows = () => economyRequests().filter((r) => r.status === 200).flatMap((r) => bodyOf(r).flows ?? []);
/** status().dropped (an empty table is encoded as `[]`). */
const dropped = async () => {
  const counts = JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status().dropped)`)) as string);
  return Array.isArray(counts) && counts.length === 0 ? {} : counts;
};

describe("Monitor.economy.flow: the call", () => {
  it("sends each flow as the contract has it, refuses bad calls (warned once per kind, counted) and counts the flows the service skipped, reported to the service", async () => {
    expect(await start()).toBe(true);
    const results = await t.rbx.run(`
      local ava = { UserId = 5001, Name = "ava" }
      local calls = {
        Monitor.economy.flow(ava, "Gems", 50, " quest ", "daily_1"),
        Monitor.economy.flow(ava, "coins", -250, "shop", "iron_sword"),
        Monitor.economy.flow(5002, "coins", 1.5, "trade"),
        Monitor.economy.flow(5002, "coins", 3, "purchase", 1234), -- an item id as a number
        Monitor.economy.flow(5002, "tokens", 3, "admin"), -- not in the map: the service skips it
        -- bad calls
        Monitor.economy.flow(0, "coins", 5, "quest"),
        Monitor.economy.flow({ Name = "no id" }, "coins", 5, "quest"),
        Monitor.economy.flow(ava, "1coins", 5, "quest"),
        Monitor.economy.flow(ava, string.rep("c", 33), 5, "quest"),
        Monitor.economy.flow(ava, "coins", 0 / 0, "quest"),
        Monitor.economy.flow(ava, "coins", 0, "quest"),
        Monitor.economy.flow(ava, "coins", math.huge, "quest"),
        Monitor.economy.flow(ava, "coins", "5", "quest"),
        Monitor.economy.flow(ava, "coins", 5, "\\u{3000} \\n"),
        Monitor.economy.flow(ava, "coins", 5, string.rep("s", 65)),
        Monitor.economy.flow(ava, "coins", 5, "quest", string.rep("i", 129)),
        Monitor.economy.flow(ava, "coins", 5, "quest", { "table" }),
        -- a Studio test player: skipped as a push of theirs is, neither warned nor counted
        Monitor.economy.flow({ UserId = -1, Name = "Player1" }, "coins", 5, "quest"),
      }
      local out = {}
      for i = 1, 18 do out[i] = tostring(calls[i]) end
      -- 64 characters of source and 128 of item (one outside the Basic Multilingual Plane counts two) are taken
      table.insert(out, tostring(Monitor.economy.flow(ava, "gems", 7, string.rep("s", 64), string.rep("i", 126) .. "😀")))
      table.insert(out, tostring(Monitor.flush(10)))
      return table.concat(out, ",")
    `);
    expect(String(results).split(",")).toEqual([...Array(5).fill("true"), ...Array(13).fill("false"), "true", "true"]);

    const requests = economyRequests();
    expect(requests).toHaveLength(1);
    const body = bodyOf(requests[0]);
    // no players: the list is left out
    expect(Object.keys(body)).toEqual(["flows"]);
    expect(body.flows!.map(({ at, ...f }) => f)).toEqual([
      { user_id: 5001, currency: "gems", amount: 50, source: "quest", item: "daily_1" },
      { user_id: 5001, currency: "coins", amount: -250, source: "shop", item: "iron_sword" },
      { user_id: 5002, currency: "coins", amount: 1.5, source: "trade" },
      { user_id: 5002, currency: "coins", amount: 3, source: "purchase", item: "1234" },
      { user_id: 5002, currency: "tokens", amount: 3, source: "admin" },
      { user_id: 5001, currency: "gems", amount: 7, source: "s".repeat(64), item: `${"i".repeat(126)}😀` },
    ]);
    for (const f of body.flows!) expect(f.at).toMatch(ISO_MS);
    expect(requests[0].headers["idempotency-key"]).toMatch(/^[0-9A-F-]{36}$/i);

    // one warning for each kind of mistake (player, currency, amount, source, item) and one for what the service skipped
    expect(t.rbx.warnings.map((w) => w.match(/a bad (\w+)/)?.[1] ?? w)).toEqual([
      "player",
      "currency",
      "amount",
      "source",
      "item",
      expect.stringMatching(/the service skipped 1 flow of a request \(counted as lost\): currency is not in the project's currency map/),
    ]);
    expect(await dropped()).toEqual({ "economy_flow:client_invalid": 13 });

    // the losses travel with the next errors batch, and the service stores them
    await t.rbx.run(`Monitor.captureMessage("after the flows", "info") return Monitor.flush(10)`);
    expect(reportedLosses(t.rbx.requests)).toEqual({ "economy_flow:client_invalid": 13 });
    expect(await t.app.sql`select category, reason, quantity::int from sdk_discards where project_id = ${t.projectId}`).toEqual([
      { category: "economy_flow", reason: "client_invalid", quantity: 13 },
    ]);
  });

  it("takes flows from an Actor's copy: a good call is handed over, a bad one returns false there and is counted once by the initialized copy", async () => {
    expect(await start()).toBe(true);
    await t.rbx.addPlayer(6001, "Miner");
    const shop = await t.rbx.actor("Workspace.Shop");
    const results = await shop.run(`
      task.desynchronize()
      local sold = Monitor.economy.flow(mock.player(6001), "coins", -40, "shop", "pickaxe")
      local bad = Monitor.economy.flow(mock.player(6001), "coins", 0, "shop")
      local badItem = Monitor.economy.flow(mock.player(6001), "coins", 5, "shop", { "not", "text" })
      task.synchronize()
      return tostring(sold) .. "," .. tostring(bad) .. "," .. tostring(badItem)
    `);
    expect(results).toBe("true,false,false");
    expect(await t.rbx.run(`return Monitor.status().flowsQueued`)).toBe(1);
    expect(await t.rbx.run(`return Monitor.flush(10)`)).toBe(true);
    expect(receivedFlows().map(({ at, ...f }) => f)).toEqual([{ user_id: 6001, currency: "coins", amount: -40, source: "shop", item: "pickaxe" }]);
    expect(await dropped()).toEqual({ "economy_flow:client_invalid": 2 });
    expect(t.rbx.warnings.map((w) => w.match(/a bad (\w+)/)?.[1])).toEqual(["amount", "item"]);
  });
});

describe("Monitor.economy.flow: batching and order", () => {
  it("sends 10,000 flows a minute in a few requests of at most 1000, far under HttpService's 500 a minute", async () => {
    expect(await start()).toBe(true);
    // a busy server: 167 flows a second for a simulated minute, from 40 players
    const sent = await t.rbx.run(`
      local n = 0
      for second = 1, 60 do
        for i = 1, 167 do
          n += 1
          Monitor.economy.flow(1000 + n % 40, if n % 3 == 0 then "gems" else "coins", if n % 2 == 0 then 25 else -10, if n % 2 == 0 then "quest" else "shop", tostring(n))
        end
        task.wait(1)
      end
      Monitor.flush(10)
      return n
    `, 120);
    expect(sent).toBe(10_020);
    const requests = economyRequests();
    expect(requests.every((r) => r.status === 200)).toBe(true);
    const sizes = requests.map((r) => bodyOf(r).flows!.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1000);
    // every flow went, once, in the order of the calls
    expect(receivedFlows().map((f) => Number(f.item))).toEqual(Array.from({ length: 10_020 }, (_, i) => i + 1));
    // a full request goes as it fills, and each 10 s flush sends what waits at its start: at most two
    // requests each 10 s (a flow recorded while one is out waits for the next)
    expect(requests.length).toBeLessThanOrEqual(12);
    // status().requests counts the health lane's too
    expect(await t.rbx.run(`return Monitor.status().requests`)).toBe(t.rbx.requests.length);
    expect(t.rbx.requests.filter(notHealth)).toHaveLength(requests.length);
    expect(await dropped()).toEqual({});
  });

  it("never sends a push before a flow recorded earlier, and sends a player's flows recorded after their push after it", async () => {
    expect(await start()).toBe(true);
    // `item` and the profile's Seq number the calls
    await t.rbx.run(`
      local seq = 0
      local function flow(user)
        seq += 1
        assert(Monitor.economy.flow(user, "coins", 10, "quest", tostring(seq)))
      end
      local function push(user)
        seq += 1
        assert(Monitor.economy.push({ UserId = user, Name = "p" .. user }, { Coins = 100, Seq = seq }))
      end
      for i = 1, 1200 do flow(1 + i % 50) end -- 1..1200
      push(7) -- 1201
      flow(8) -- 1202
      flow(7) -- 1203: after 7's push, so in a later request
      push(8) -- 1204
      for _ = 1, 10 do flow(9) end -- 1205..1214
      push(9) -- 1215
      assert(Monitor.flush(10))
    `);
    const requests = economyRequests().map((r) => bodyOf(r));
    const seqs = requests.map((b) => ({
      flows: (b.flows ?? []).map((f) => ({ seq: Number(f.item), user: f.user_id })),
      players: (b.players ?? []).map((p) => ({ seq: p.profile.Seq as number, user: p.user_id })),
    }));
    // the order of the calls holds across requests: each request is the oldest of what waits
    const order = seqs.flatMap((r) => [...r.flows, ...r.players].map((e) => e.seq).sort((a, b) => a - b));
    expect(order).toEqual(Array.from({ length: 1215 }, (_, i) => i + 1));
    for (const [k, request] of seqs.entries()) {
      for (const push of request.players) {
        // every flow recorded before the push went in this request or an earlier one
        const later = seqs.slice(k + 1).flatMap((r) => r.flows).filter((f) => f.seq < push.seq);
        expect(later).toEqual([]);
        // and no flow of that player recorded after it went with it
        expect(request.flows.filter((f) => f.user === push.user && f.seq > push.seq)).toEqual([]);
      }
    }
    // 1000 flows; then the rest up to 7's flow after its push; then the rest
    expect(seqs.map((r) => [r.flows.length, r.players.length])).toEqual([
      [1000, 0],
      [201, 1],
      [11, 2],
    ]);
  });
});

describe("Monitor.economy.flow: losses and refusals", () => {
  it("bounds the flow queue by count and by bytes, the oldest dropped first and counted", async () => {
    expect(await start("maxFlowQueueSize = 5")).toBe(true);
    await t.rbx.run(`
      for i = 1, 8 do assert(Monitor.economy.flow(100 + i, "gems", i, "quest", tostring(i))) end
      assert(Monitor.status().flowsQueued == 5)
      return Monitor.flush(10)
    `);
    expect(receivedFlows().map((f) => f.item)).toEqual(["4", "5", "6", "7", "8"]);
    expect(await dropped()).toEqual({ "economy_flow:queue_overflow": 3 });

    // a second server whose queue holds 1000 bytes of flows: each is over 150 bytes of JSON here
    expect(await start("maxFlowQueueBytes = 1000")).toBe(true);
    await t.rbx.run(`
      for i = 1, 20 do assert(Monitor.economy.flow(200 + i, "gems", i, "quest", string.rep("x", 60) .. i)) end
      return Monitor.flush(10)
    `);
    const kept = receivedFlows();
    // as many of the newest as 1000 bytes of JSON hold, and no more
    const sizes = kept.map((f) => Buffer.byteLength(JSON.stringify(f)));
    const held = sizes.reduce((a, b) => a + b, 0);
    expect(held).toBeLessThanOrEqual(1000);
    expect(held + Math.min(...sizes)).toBeGreaterThan(1000);
    // the newest are kept
    expect(kept.map((f) => f.user_id)).toEqual(Array.from({ length: kept.length }, (_, i) => 221 - kept.length + i));
    expect(await dropped()).toEqual({ "economy_flow:queue_overflow": 20 - kept.length });
  });

  it("on a 400 naming one flow drops only it (counted refused) and sends the rest at once with a new key; a 413 splits in order", async () => {
    expect(await start()).toBe(true);
    let refusals = 0;
    economyAnswer = () =>
      refusals++ === 0
        ? {
            status: 400,
            body: { error: "invalid_payload", message: "No entry is valid", details: [{ path: "flows[1].currency", message: "is not in the project's currency map" }] },
          }
        : undefined;
    await t.rbx.run(`
      Monitor.economy.flow(301, "gems", 5, "quest", "a")
      Monitor.economy.flow(302, "gems", 5, "quest", "b")
      Monitor.economy.push({ UserId = 303, Name = "p303" }, { Coins = 1 })
      Monitor.economy.flow(304, "gems", 5, "quest", "c")
      return Monitor.flush(10)
    `);
    const [first, second, ...rest] = economyRequests();
    expect(rest).toEqual([]);
    expect([first.status, second.status]).toEqual([400, 200]);
    expect(second.headers["idempotency-key"]).not.toBe(first.headers["idempotency-key"]);
    expect(bodyOf(second).flows!.map((f) => f.item)).toEqual(["a", "c"]);
    expect(bodyOf(second).players!.map((p) => p.user_id)).toEqual([303]);
    expect(await dropped()).toEqual({ "economy_flow:refused": 1 });

    // a service (or a proxy) that takes at most 2 entries a request: halves, in the order of the calls
    economyAnswer = (body) =>
      (body?.players?.length ?? 0) + (body?.flows?.length ?? 0) > 2 ? { status: 413, body: { error: "payload_too_large", message: "Too large" } } : undefined;
    await t.rbx.run(`
      Monitor.economy.flow(311, "gems", 1, "quest", "1")
      Monitor.economy.flow(312, "gems", 1, "quest", "2")
      Monitor.economy.push({ UserId = 313, Name = "p313" }, { Coins = 1, Seq = 3 })
      Monitor.economy.flow(314, "gems", 1, "quest", "4")
      Monitor.economy.flow(315, "gems", 1, "quest", "5")
      return Monitor.flush(10)
    `);
    const taken = economyRequests()
      .slice(2)
      .filter((r) => r.status === 200)
      .map((r) => [...(bodyOf(r).flows ?? []).map((f) => f.item), ...(bodyOf(r).players ?? []).map((p) => String(p.profile.Seq))]);
    expect(taken).toEqual([["1", "2"], ["3"], ["4", "5"]]);
    expect(await dropped()).toEqual({ "economy_flow:refused": 1 });
  });

  it("retries a request of flows under one key through an outage, and drops one failing past maxRetryTime, counted per kind", async () => {
    expect(await start("maxRetryTime = 60")).toBe(true);
    let failing = 2;
    economyAnswer = () => (failing-- > 0 ? { status: 503, body: { error: "unavailable", message: "The database cannot be reached." } } : undefined);
    await t.rbx.run(`
      Monitor.economy.flow(601, "gems", 5, "quest", "kept")
      Monitor.economy.push({ UserId = 601, Name = "p601" }, { Gems = 5 })
    `);
    await t.rbx.advance(120);
    const tries = economyRequests();
    expect(tries.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(new Set(tries.map((r) => r.headers["idempotency-key"])).size).toBe(1);
    expect(new Set(tries.map((r) => r.body)).size).toBe(1);
    expect(receivedFlows().map((f) => f.item)).toEqual(["kept"]);

    economyAnswer = () => ({ status: 503, body: { error: "unavailable", message: "The database cannot be reached." } });
    await t.rbx.run(`
      Monitor.economy.flow(602, "gems", 5, "quest", "lost")
      Monitor.economy.flow(602, "coins", -5, "shop", "lost")
      Monitor.economy.push({ UserId = 602, Name = "p602" }, { Gems = 5 })
    `);
    await t.rbx.advance(300);
    expect(await dropped()).toEqual({ "economy:retry_expired": 1, "economy_flow:retry_expired": 2 });
    expect(t.rbx.warnings.at(-1)).toMatch(/a batch failed for \d+ s and was dropped: 1 economy snapshot and 2 flows lost/);
  });

  it("counts the flows of a request a service without flows took as refused, with one warning", async () => {
    expect(await start()).toBe(true);
    // what a service before flows answers: the push's fields only
    economyAnswer = (body) => ({ status: 200, body: { stored: body?.players?.length ?? 0, skipped: 0, skipped_values: 0, skipped_reasons: [] } });
    await t.rbx.run(`
      Monitor.economy.push({ UserId = 401, Name = "p401" }, { Coins = 1 })
      Monitor.economy.flow(401, "coins", 3, "quest")
      Monitor.economy.flow(401, "coins", 4, "quest")
      return Monitor.flush(10)
    `);
    expect(await dropped()).toEqual({ "economy_flow:refused": 2 });
    expect(t.rbx.warnings).toEqual([expect.stringMatching(/took an economy request but not its 2 flows .*does not take flows yet/)]);
  });

  it("sends the queued flows with the last pushes when the server closes", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(`
      game:GetService("Players").PlayerRemoving:Connect(function(player)
        Monitor.economy.flow(player, "coins", -5, "shop", "farewell_gift")
        Monitor.economy.push(player, { Coins = player.UserId })
      end)
      game:BindToClose(function()
        Monitor.economy.flow(9999, "gems", 1, "admin", "closing")
      end)
    `);
    for (const id of [501, 502]) await t.rbx.addPlayer(id, `Player${id}`);
    await t.rbx.run(`for i = 1, 30 do Monitor.economy.flow(501, "coins", i, "quest") end`);
    expect(economyRequests()).toEqual([]);
    expect(await t.rbx.shutdown()).toBe(true);
    const requests = economyRequests();
    expect(requests.every((r) => r.status === 200)).toBe(true);
    const flows = receivedFlows();
    expect(flows).toHaveLength(33);
    expect(flows.filter((f) => f.item === "farewell_gift").map((f) => f.user_id).sort()).toEqual([501, 502]);
    expect(flows.some((f) => f.item === "closing")).toBe(true);
    expect(requests.flatMap((r) => bodyOf(r).players ?? []).map((p) => p.user_id).sort()).toEqual([501, 502]);
    expect(await dropped()).toEqual({});
  });
});
