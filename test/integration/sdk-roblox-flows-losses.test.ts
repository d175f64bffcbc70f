import { describe, expect, it } from "vitest";
import { flowsSuite } from "../support/flows-suite.js";

/**
 * `Monitor.economy.flow` in real Luau: what it counts as lost, and what it sends when a request is
 * refused, fails or the server closes. The service's answers are the flows contract's
 * (test/support/flows-suite.ts).
 */
const { t, answerEconomy, economyRequests, bodyOf, receivedFlows, dropped } = flowsSuite();
const { start } = t;

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
    answerEconomy(() =>
      refusals++ === 0
        ? {
            status: 400,
            body: { error: "invalid_payload", message: "No entry is valid", details: [{ path: "flows[1].currency", message: "is not in the project's currency map" }] },
          }
        : undefined,
    );
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
    answerEconomy((body) =>
      (body?.players?.length ?? 0) + (body?.flows?.length ?? 0) > 2 ? { status: 413, body: { error: "payload_too_large", message: "Too large" } } : undefined,
    );
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
    answerEconomy(() => (failing-- > 0 ? { status: 503, body: { error: "unavailable", message: "The database cannot be reached." } } : undefined));
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

    answerEconomy(() => ({ status: 503, body: { error: "unavailable", message: "The database cannot be reached." } }));
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
    answerEconomy((body) => ({ status: 200, body: { stored: body?.players?.length ?? 0, skipped: 0, skipped_values: 0, skipped_reasons: [] } }));
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
