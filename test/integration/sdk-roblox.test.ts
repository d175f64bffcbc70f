import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";
import { notHealth } from "../support/roblox.js";

/**
 * The Luau SDK in real Luau (luau-web), on a simulated Roblox server whose HttpService makes real
 * HTTP requests to the real service on a real PostgreSQL, through a proxy that can answer 429 or
 * drop connections. Time is simulated: `advance` runs the SDK's timers, so a minute of game time
 * takes well under a second. The API's finer points are in sdk-roblox-api.test.ts.
 */
const t = sdkSuite();
const { start, groups, events } = t;
const ingestRequests = () => t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"));

const STACK = "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40\n";

describe("Roblox SDK against the real service", () => {
  it("sends 10,000 fires of one error in a minute as a handful of requests, counted exactly", async () => {
    expect(await start()).toBe(true);
    let fired = 0;
    for (let second = 0; second < 60; second++) {
      const n = second < 59 ? 167 : 10_000 - 167 * 59;
      await t.rbx.fireError("ServerScriptService.Combat:123: attempt to index nil with 'Health'", STACK, "ServerScriptService.Combat", n);
      fired += n;
      await t.rbx.advance(1);
    }
    await t.rbx.advance(15);
    expect(fired).toBe(10_000);
    const sent = ingestRequests();
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThanOrEqual(8);
    expect(sent.every((r) => r.status === 200)).toBe(true);
    const [group, ...others] = await groups();
    expect(others).toEqual([]);
    expect(group).toMatchObject({ message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", count: "10000", level: "error" });
    const [first] = await events();
    expect(first).toMatchObject({
      stack_trace: STACK,
      job_id: "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c",
      place_id: "1818",
      game_version: "42",
      environment: "production",
      context: { script: "ServerScriptService.Combat" },
    });
    expect(t.rbx.warnings).toEqual([]);
  });

  it("waits Retry-After on 429, then delivers everything once", async () => {
    // the errors lane alone: the proxy answers its next request 429
    await start("health = false");
    t.mode = { kind: "429", retryAfter: "5", times: 1 };
    for (let i = 0; i < 50; i++) await t.rbx.fireError("ServerScriptService.Shop:7: bad price", "ServerScriptService.Shop:7\n", "ServerScriptService.Shop");
    await t.rbx.fireError("ServerScriptService.Quests:9: nil quest", "ServerScriptService.Quests:9\n", "ServerScriptService.Quests");
    await t.rbx.advance(11);
    expect(t.rbx.requests.map((r) => r.status)).toEqual([429]);
    const limitedAt = t.rbx.requests[0].at;
    // more errors arrive during the pause
    for (let i = 0; i < 20; i++) await t.rbx.fireError("ServerScriptService.Shop:7: bad price", "ServerScriptService.Shop:7\n", "ServerScriptService.Shop");
    await t.rbx.advance(3.5);
    expect(t.rbx.requests).toHaveLength(1);
    await t.rbx.advance(30);
    const [, next] = t.rbx.requests;
    expect(next.at - limitedAt).toBeGreaterThanOrEqual(5);
    expect(t.rbx.requests.slice(1).every((r) => r.status === 200)).toBe(true);
    expect((await groups()).map((g) => [g.message, g.count])).toEqual([
      ["ServerScriptService.Quests:9: nil quest", "1"],
      ["ServerScriptService.Shop:7: bad price", "70"],
    ]);
  });

  it("sends each batch with its own Idempotency-Key and the same key on its retries, so a lost response counts nothing twice", async () => {
    // the errors lane alone: the proxy loses the answers of its next requests
    await start("health = false");
    t.mode = { kind: "lose-response", times: 2 };
    for (let i = 0; i < 30; i++) await t.rbx.fireError("ServerScriptService.Bank:12: withdraw failed", "ServerScriptService.Bank:12\n", "ServerScriptService.Bank");
    await t.rbx.advance(20);
    const [lost, lostAgain, delivered, ...rest] = ingestRequests();
    expect(rest).toEqual([]);
    expect([lost.status, lostAgain.status, delivered.status]).toEqual(["network error", "network error", 200]);
    const key = lost.headers["idempotency-key"];
    expect(key).toMatch(/^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/i);
    expect([lostAgain.headers["idempotency-key"], delivered.headers["idempotency-key"]]).toEqual([key, key]);
    expect(delivered.body).toBe(lost.body);
    // the service wrote the batch on the first attempt; the retries answered it without writing
    expect((await groups()).map((g) => [g.message, g.count])).toEqual([["ServerScriptService.Bank:12: withdraw failed", "30"]]);
    // the next batch has a key of its own
    await t.rbx.fireError("ServerScriptService.Bank:12: withdraw failed", "ServerScriptService.Bank:12\n", "ServerScriptService.Bank");
    await t.rbx.advance(10);
    const next = ingestRequests()[3];
    expect(next.status).toBe(200);
    expect(next.headers["idempotency-key"]).toMatch(/^[0-9A-F-]{36}$/i);
    expect(next.headers["idempotency-key"]).not.toBe(key);
    expect((await groups())[0].count).toBe("31");
  });

  it("keeps events through a 30 s outage, up to the queue bound, and reports what it dropped", async () => {
    await start("maxQueueSize = 5");
    t.mode = { kind: "down" };
    for (const name of ["A", "B", "C"]) await t.rbx.fireError(`ServerScriptService.${name}:1: outage ${name}`, "", `ServerScriptService.${name}`);
    await t.rbx.advance(12);
    expect(t.rbx.requests.filter(notHealth).length).toBeGreaterThanOrEqual(1);
    // the failed batch is kept aside; eight more distinct errors overflow a queue of five
    for (const name of ["D", "E", "F", "G", "H", "I", "J", "K"]) await t.rbx.fireError(`ServerScriptService.${name}:1: outage ${name}`, "", `ServerScriptService.${name}`);
    await t.rbx.advance(18);
    const failed = t.rbx.requests.filter(notHealth).length;
    expect(failed).toBeGreaterThanOrEqual(2);
    expect(t.rbx.requests.every((r) => r.status === "network error")).toBe(true);
    // retries back off: far fewer than one a second
    expect(failed).toBeLessThanOrEqual(6);
    expect(await groups()).toEqual([]);
    t.mode = { kind: "pass" };
    await t.rbx.advance(150);
    const stored = await groups();
    expect(stored.map((g) => g.message)).toEqual(["A", "B", "C", "G", "H", "I", "J", "K"].map((n) => `ServerScriptService.${n}:1: outage ${n}`));
    expect(stored.every((g) => g.count === "1")).toBe(true);
    // the overflow is reported once, with the first batch delivered after it
    expect(reportedLosses(t.rbx.requests)).toEqual({ "error:queue_overflow": 3 });
    expect(ingestRequests().filter((r) => JSON.parse(r.body).client_report)).toHaveLength(1);
  });

  it("flush with less than 0.1 s left waits what is left instead of raising", async () => {
    expect(await start()).toBe(true);
    t.mode = { kind: "down" };
    try {
      await t.rbx.run(`Monitor.captureMessage("Nobody is listening")`);
      // before: math.clamp(wait, 0.1, remaining) with remaining below 0.1 raised "invalid argument #3 to 'clamp'"
      expect(await t.rbx.run(`return Monitor.flush(0.05)`)).toBe(false);
    } finally {
      t.mode = { kind: "pass" };
    }
  });

  it("warns once and sends nothing when HTTP requests are off", async () => {
    expect(await start("", { httpEnabled: false })).toBe(false);
    for (let i = 0; i < 100; i++) await t.rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await t.rbx.run(`Monitor.captureMessage("hello") return Monitor.flush(5)`);
    await t.rbx.advance(60);
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/Allow HTTP Requests/);
    expect(t.rbx.requests).toEqual([]);
  });

  it("where HttpEnabled cannot be read, the first refused request gives the one warning and stops", async () => {
    expect(await start("", { httpEnabled: false, httpEnabledReadable: false })).toBe(true);
    for (let i = 0; i < 100; i++) await t.rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await t.rbx.advance(60);
    await t.rbx.fireError("ServerScriptService.A:1: later", "", "ServerScriptService.A");
    await t.rbx.advance(60);
    expect(await t.rbx.shutdown()).toBe(true);
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/Allow HTTP Requests/);
    expect(t.rbx.requests).toEqual([]);
    expect(await t.rbx.run(`return Monitor.status().running`)).toBe(false);
  });

  it("caps a flooding client per player, refuses malformed payloads, and takes identity from the Player", async () => {
    await start();
    await t.rbx.addPlayer(111, "Exploiter");
    await t.rbx.addPlayer(222, "Honest");
    const spoof = { user_id: 222, player_name: "Honest", level: "info", tags: ["server"], trace_id: "not-a-uuid", count: 1000 };
    const bad: unknown[] = [42, "text", null, true, { message: 123 }, { message: "" }, { message: "   " }, { message: "x", stack: { a: 1 } }, { message: "x", script: 7 }, []];
    for (const payload of bad) await t.rbx.fireRemote(111, payload);
    for (let second = 0; second < 60; second++) {
      for (let i = 0; i < 3; i++) await t.rbx.fireRemote(111, { message: `Players.Exploiter.PlayerScripts.Spam:1: spam ${i}`, stack: "Players.Exploiter.PlayerScripts.Spam:1\n", script: "Players.Exploiter.PlayerScripts.Spam", ...spoof }, i === 0 ? 57 : 55);
      if (second === 30) {
        await t.rbx.fireRemote(222, { message: "Players.Honest.PlayerGui.Hud:5: attempt to index nil", stack: "Players.Honest.PlayerGui.Hud:5\n", script: "Players.Honest.PlayerGui.Hud" });
        await t.rbx.fireRemote(222, { message: "y".repeat(50_000), stack: "z".repeat(50_000) });
      }
      await t.rbx.advance(1);
    }
    await t.rbx.advance(15);
    const rows = await events();
    const fromExploiter = rows.filter((e) => e.message.includes("spam"));
    const occurrences = fromExploiter.reduce((sum, e) => sum + e.count, 0);
    // a burst of 5 and 10 a minute: at most 5 + 10 in a minute (one more for the boundary)
    expect(occurrences).toBeGreaterThanOrEqual(5);
    expect(occurrences).toBeLessThanOrEqual(16);
    expect(fromExploiter.every((e) => e.user_id === "111" && e.player_name === "Exploiter")).toBe(true);
    expect(rows.every((e) => e.level === "error" && e.trace_id === null)).toBe(true);
    expect(rows.every((e) => JSON.stringify(e.tags) === JSON.stringify(["origin:client"]))).toBe(true);
    expect(rows.filter((e) => e.user_id === "222").map((e) => [e.player_name, e.message.length, e.stack_trace.length])).toEqual([
      ["Honest", "Players.Honest.PlayerGui.Hud:5: attempt to index nil".length, "Players.Honest.PlayerGui.Hud:5\n".length],
      ["Honest", 1000, 4000],
    ]);
    expect(rows.find((e) => e.user_id === "222")?.context).toMatchObject({ script: "Players.Honest.PlayerGui.Hud" });
    // what the relay refused is reported with later batches (or alone), each count once
    await t.rbx.run(`Monitor.captureMessage("reports the rest", "info") return Monitor.flush(10)`);
    expect(reportedLosses(t.rbx.requests)).toEqual({ "error:client_invalid": bad.length, "error:rate_limited": 167 * 60 - occurrences });
  });
});
