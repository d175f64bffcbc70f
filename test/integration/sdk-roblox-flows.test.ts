import { describe, expect, it } from "vitest";
import { reportedLosses } from "../support/client-reports.js";
import { flowsSuite, ISO_MS } from "../support/flows-suite.js";
import { notHealth } from "../support/roblox.js";

/**
 * `Monitor.economy.flow` in real Luau: what it sends, and how it batches and orders flows with
 * pushes (what it counts as lost: sdk-roblox-flows-losses.test.ts). The service's answers are the
 * flows contract's (test/support/flows-suite.ts).
 */
const { t, economyRequests, bodyOf, receivedFlows, dropped } = flowsSuite();
const { start } = t;
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
