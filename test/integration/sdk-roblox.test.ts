import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { LuauState } from "luau-web";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { createRobloxServer, type RobloxServer } from "../support/roblox.js";

/**
 * The Luau SDK in real Luau (luau-web), on a simulated Roblox server whose HttpService makes real
 * HTTP requests to the real service on a real PostgreSQL. Time is simulated: `advance` runs the
 * SDK's timers, so a minute of game time takes well under a second.
 */

let app: TestApp;
let apiKey: string;
let projectId: string;
let rbx: RobloxServer;

/** A proxy in front of the service that can answer 429 or drop connections, as a real outage would. */
type ProxyMode = { kind: "pass" } | { kind: "429"; retryAfter: string; times: number } | { kind: "down" };
let proxy: http.Server;
let proxyUrl: string;
let mode: ProxyMode = { kind: "pass" };

beforeAll(async () => {
  app = await startTestApp();
  proxy = http.createServer(async (req, res) => {
    if (mode.kind === "down") {
      req.socket.destroy();
      return;
    }
    if (mode.kind === "429" && mode.times > 0) {
      mode.times -= 1;
      req.resume();
      res.writeHead(429, { "content-type": "application/json", "retry-after": mode.retryAfter });
      res.end(JSON.stringify({ error: "rate_limited", message: "Too many requests." }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k))) as Record<string, string>;
    const upstream = await fetch(app.url + req.url, { method: req.method, headers, body: req.method === "GET" ? undefined : Buffer.concat(chunks) });
    res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
    res.end(Buffer.from(await upstream.arrayBuffer()));
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await app?.close();
});
beforeEach(async () => {
  mode = { kind: "pass" };
  ({ apiKey, projectId } = await createProject(app.sql, "SDK Game"));
});
afterEach(() => {
  // no SDK thread may have died with an error, whatever the test checked
  expect(rbx?.threadErrors ?? []).toEqual([]);
  rbx?.destroy();
});

const luaString = (s: string) => JSON.stringify(s);

async function start(options = "", robloxOptions: Parameters<typeof createRobloxServer>[0] = {}) {
  rbx = await createRobloxServer({ placeId: 1818, placeVersion: 42, jobId: "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c", ...robloxOptions });
  const started = await rbx.run(`return Monitor.init({ url = ${luaString(proxyUrl)}, apiKey = ${luaString(apiKey)}, ${options} })`);
  return started;
}

const groups = () =>
  app.sql<{ message: string; count: string; level: string; user_count: string }[]>`
    select message, count::text, level, user_count::text from error_groups where project_id = ${projectId} order by message`;
const events = () =>
  app.sql<any[]>`
    select message, level, stack_trace, user_id::text, player_name, trace_id::text, job_id, place_id::text, game_version,
      environment, context, tags, count from events where project_id = ${projectId} order by id`;
const ingestRequests = () => rbx.requests.filter((r) => r.url.endsWith("/api/ingest"));

const STACK = "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40\n";

describe("Roblox SDK against the real service", () => {
  it("sends 10,000 fires of one error in a minute as a handful of requests, counted exactly", async () => {
    expect(await start()).toBe(true);
    let fired = 0;
    for (let second = 0; second < 60; second++) {
      const n = second < 59 ? 167 : 10_000 - 167 * 59;
      for (let i = 0; i < n; i++) {
        await rbx.fireError("ServerScriptService.Combat:123: attempt to index nil with 'Health'", STACK, "ServerScriptService.Combat");
        fired++;
      }
      await rbx.advance(1);
    }
    await rbx.advance(15);
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
    expect(rbx.warnings).toEqual([]);
  });

  it("waits Retry-After on 429, then delivers everything once", async () => {
    await start();
    mode = { kind: "429", retryAfter: "5", times: 1 };
    for (let i = 0; i < 50; i++) await rbx.fireError("ServerScriptService.Shop:7: bad price", "ServerScriptService.Shop:7\n", "ServerScriptService.Shop");
    await rbx.fireError("ServerScriptService.Quests:9: nil quest", "ServerScriptService.Quests:9\n", "ServerScriptService.Quests");
    await rbx.advance(11);
    expect(rbx.requests.map((r) => r.status)).toEqual([429]);
    const limitedAt = rbx.requests[0].at;
    // more errors arrive during the pause
    for (let i = 0; i < 20; i++) await rbx.fireError("ServerScriptService.Shop:7: bad price", "ServerScriptService.Shop:7\n", "ServerScriptService.Shop");
    await rbx.advance(3.5);
    expect(rbx.requests).toHaveLength(1);
    await rbx.advance(30);
    const [, next] = rbx.requests;
    expect(next.at - limitedAt).toBeGreaterThanOrEqual(5);
    expect(rbx.requests.slice(1).every((r) => r.status === 200)).toBe(true);
    expect((await groups()).map((g) => [g.message, g.count])).toEqual([
      ["ServerScriptService.Quests:9: nil quest", "1"],
      ["ServerScriptService.Shop:7: bad price", "70"],
    ]);
  });

  it("keeps events through a 30 s outage, up to the queue bound, and reports what it dropped", async () => {
    await start("maxQueueSize = 5");
    mode = { kind: "down" };
    for (const name of ["A", "B", "C"]) await rbx.fireError(`ServerScriptService.${name}:1: outage ${name}`, "", `ServerScriptService.${name}`);
    await rbx.advance(12);
    expect(rbx.requests.length).toBeGreaterThanOrEqual(1);
    // the failed batch is kept aside; eight more distinct errors overflow a queue of five
    for (const name of ["D", "E", "F", "G", "H", "I", "J", "K"]) await rbx.fireError(`ServerScriptService.${name}:1: outage ${name}`, "", `ServerScriptService.${name}`);
    await rbx.advance(18);
    const failed = rbx.requests.length;
    expect(failed).toBeGreaterThanOrEqual(2);
    expect(rbx.requests.every((r) => r.status === "network error")).toBe(true);
    // retries back off: far fewer than one a second
    expect(failed).toBeLessThanOrEqual(6);
    expect(await groups()).toEqual([]);
    mode = { kind: "pass" };
    await rbx.advance(150);
    const stored = await groups();
    expect(stored.map((g) => g.message)).toEqual(["A", "B", "C", "G", "H", "I", "J", "K"].map((n) => `ServerScriptService.${n}:1: outage ${n}`));
    expect(stored.every((g) => g.count === "1")).toBe(true);
    const reported = (await events()).filter((e) => e.context?.sdk);
    expect(reported).toHaveLength(1);
    expect(reported[0].context.sdk).toMatchObject({ dropped_events: 3, dropped_occurrences: 3 });
  });

  it("warns once and sends nothing when HTTP requests are off", async () => {
    expect(await start("", { httpEnabled: false })).toBe(false);
    for (let i = 0; i < 100; i++) await rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await rbx.run(`Monitor.captureMessage("hello") return Monitor.flush(5)`);
    await rbx.advance(60);
    expect(rbx.warnings).toHaveLength(1);
    expect(rbx.warnings[0]).toMatch(/Allow HTTP Requests/);
    expect(rbx.requests).toEqual([]);
  });

  it("where HttpEnabled cannot be read, the first refused request gives the one warning and stops", async () => {
    expect(await start("", { httpEnabled: false, httpEnabledReadable: false })).toBe(true);
    for (let i = 0; i < 100; i++) await rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await rbx.advance(60);
    await rbx.fireError("ServerScriptService.A:1: later", "", "ServerScriptService.A");
    await rbx.advance(60);
    expect(await rbx.shutdown()).toBe(true);
    expect(rbx.warnings).toHaveLength(1);
    expect(rbx.warnings[0]).toMatch(/Allow HTTP Requests/);
    expect(rbx.requests).toEqual([]);
    expect(await rbx.run(`return Monitor.status().running`)).toBe(false);
  });

  it("caps a flooding client per player, refuses malformed payloads, and takes identity from the Player", async () => {
    await start();
    await rbx.addPlayer(111, "Exploiter");
    await rbx.addPlayer(222, "Honest");
    const spoof = { user_id: 222, player_name: "Honest", level: "info", tags: ["server"], trace_id: "not-a-uuid", count: 1000 };
    const bad: unknown[] = [42, "text", null, true, { message: 123 }, { message: "" }, { message: "   " }, { message: "x", stack: { a: 1 } }, { message: "x", script: 7 }, []];
    for (const payload of bad) await rbx.fireRemote(111, payload);
    for (let second = 0; second < 60; second++) {
      for (let i = 0; i < 167; i++) await rbx.fireRemote(111, { message: `Players.Exploiter.PlayerScripts.Spam:1: spam ${i % 3}`, stack: "Players.Exploiter.PlayerScripts.Spam:1\n", script: "Players.Exploiter.PlayerScripts.Spam", ...spoof });
      if (second === 30) {
        await rbx.fireRemote(222, { message: "Players.Honest.PlayerGui.Hud:5: attempt to index nil", stack: "Players.Honest.PlayerGui.Hud:5\n", script: "Players.Honest.PlayerGui.Hud" });
        await rbx.fireRemote(222, { message: "y".repeat(50_000), stack: "z".repeat(50_000) });
      }
      await rbx.advance(1);
    }
    await rbx.advance(15);
    const rows = await events();
    const fromExploiter = rows.filter((e) => e.message.includes("spam"));
    const occurrences = fromExploiter.reduce((sum, e) => sum + e.count, 0);
    // a burst of 5 and 10 a minute: at most 5 + 10 in a minute (one more for the boundary)
    expect(occurrences).toBeGreaterThanOrEqual(5);
    expect(occurrences).toBeLessThanOrEqual(16);
    expect(fromExploiter.every((e) => e.user_id === "111" && e.player_name === "Exploiter")).toBe(true);
    expect(rows.every((e) => e.level === "error" && e.trace_id === null)).toBe(true);
    expect(rows.every((e) => JSON.stringify(e.tags) === JSON.stringify(["client"]))).toBe(true);
    expect(rows.filter((e) => e.user_id === "222").map((e) => [e.player_name, e.message.length, e.stack_trace.length])).toEqual([
      ["Honest", "Players.Honest.PlayerGui.Hud:5: attempt to index nil".length, "Players.Honest.PlayerGui.Hud:5\n".length],
      ["Honest", 1000, 4000],
    ]);
    expect(rows.find((e) => e.user_id === "222")?.context).toMatchObject({ script: "Players.Honest.PlayerGui.Hud" });
    // what the relay refused is reported with later batches, each count once
    const reports = rows.filter((e) => e.context?.sdk).map((e) => e.context.sdk);
    expect(reports.reduce((sum, r) => sum + r.client_refused, 0)).toBe(bad.length);
    expect(reports.reduce((sum, r) => sum + r.client_limited, 0)).toBe(167 * 60 - occurrences);
  });

  it("flushes the queue and economy pushes when the server closes", async () => {
    await start();
    await rbx.run(`
      local Players = game:GetService("Players")
      Players.PlayerRemoving:Connect(function(player)
        -- a ProfileStore profile: the SDK sends profile.Data
        local profile = { Data = { RPCharacterOne = { Name = "Char " .. player.Name, Cash = player.UserId, InATM = 5, DarkCoin = 1 } },
          MetaData = { SessionLoadCount = 3 } }
        Monitor.economy.push(player, profile)
      end)
    `);
    for (let id = 3001; id <= 3150; id++) await rbx.addPlayer(id, `Player${id}`);
    await rbx.fireError("ServerScriptService.Save:3: save failed", "ServerScriptService.Save:3\n", "ServerScriptService.Save");
    for (let id = 3001; id <= 3150; id++) await rbx.removePlayer(id);
    expect(rbx.requests).toEqual([]);
    expect(await rbx.shutdown()).toBe(true);
    const economy = rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
    expect(economy.map((r) => JSON.parse(r.body).players.length)).toEqual([100, 50]);
    expect(rbx.requests.every((r) => r.status === 200)).toBe(true);
    expect((await groups()).map((g) => g.count)).toEqual(["1"]);
    const snapshots = await app.sql<{ user_id: string; cash: string; bank: string; username: string; display_names: string[] }[]>`
      select user_id::text, cash::text, bank::text, username, display_names from economy_snapshots where project_id = ${projectId} order by user_id`;
    expect(snapshots).toHaveLength(150);
    expect(snapshots[0]).toMatchObject({ user_id: "3001", cash: "3001", bank: "5", username: "Player3001", display_names: ["Char Player3001"] });
  });

  it("stops with one warning when the key is refused", async () => {
    apiKey = "rbx_not_a_key";
    await start();
    await rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await rbx.advance(12);
    expect(rbx.requests.map((r) => r.status)).toEqual([401]);
    for (let i = 0; i < 10; i++) await rbx.fireError(`ServerScriptService.A:1: y${i}`, "", "ServerScriptService.A");
    await rbx.run(`Monitor.captureMessage("after") Monitor.economy.push({ UserId = 5, Name = "p" }, { RPCharacterOne = {} })`);
    await rbx.advance(120);
    expect(await rbx.shutdown()).toBe(true);
    expect(rbx.requests).toHaveLength(1);
    expect(rbx.warnings).toHaveLength(1);
    expect(rbx.warnings[0]).toMatch(/refused the API key/);
  });
});

describe("Roblox SDK API", () => {
  it("attaches scope, user, trace id and tags, and reads the key from a Roblox secret", async () => {
    const key = apiKey;
    apiKey = "unused";
    rbx = await createRobloxServer({ placeId: 7, secrets: { monitor_key: key } });
    await rbx.addPlayer(261, "Builderman");
    const traceId = await rbx.run(`
      assert(Monitor.init({ url = ${luaString(proxyUrl)}, apiKeySecret = "monitor_key", release = "1.4.2", environment = "staging" }))
      local player = mock.player(261)
      local traceId = Monitor.newTraceId()
      Monitor.setTag("region", "eu")
      local ok, err = Monitor.withScope({ user = player, traceId = traceId, extra = { item = "Sword" } }, function()
        Monitor.captureMessage("purchase started", "info")
        error("purchase failed")
      end)
      assert(ok == false and string.find(err, "purchase failed"))
      Monitor.captureMessage("outside the scope", "warn", { shop = "Armory" })
      assert(Monitor.flush(10))
      return traceId
    `);
    const rows = await events();
    expect(rows.map((e) => [e.message.replace(/^.*:\d+: /, ""), e.level])).toEqual([
      ["purchase started", "info"],
      ["purchase failed", "error"],
      ["outside the scope", "warn"],
    ]);
    const [started, failed, outside] = rows;
    const trace = String(traceId).replace(/[{}]/g, "").toLowerCase();
    for (const e of [started, failed]) expect(e).toMatchObject({ user_id: "261", player_name: "Builderman", trace_id: trace, context: { item: "Sword" } });
    expect(failed.stack_trace).toMatch(/ServerScriptService\.Test/);
    expect(outside).toMatchObject({ user_id: null, trace_id: null, context: { shop: "Armory" }, tags: ["region:eu"], game_version: "1.4.2", environment: "staging", place_id: "7" });
    expect(rbx.requests[0].headers["x-api-key"]).toBe(key);
    const [trace_row] = await app.sql`select event_count from traces where project_id = ${projectId} and trace_id = ${trace}`;
    expect(trace_row.event_count).toBe(2);
  });

  it("never reports its own failures or warnings, and sends nothing from Studio unless asked", async () => {
    await start(`captureWarnings = true, beforeSend = function(event)
      if event.message == "drop me" then return nil end
      if event.message == "break me" then error("beforeSend bug") end
      event.tags = { "checked" }
      return event
    end`);
    await rbx.run(`
      Monitor.captureMessage("drop me", "error")
      Monitor.captureMessage("break me", "error")
      Monitor.captureMessage("break me", "error")
      warn("Infinite yield possible on 'Workspace:WaitForChild(\\"Map\\")'")
    `);
    // an error raised inside the SDK module is the SDK's, not the game's
    await rbx.fireError("ReplicatedStorage.RobloxMonitor:10: internal", "ReplicatedStorage.RobloxMonitor:10\n", "ReplicatedStorage.RobloxMonitor");
    await rbx.run(`return Monitor.flush(10)`);
    expect(rbx.warnings.filter((w) => w.startsWith("[RobloxMonitor]"))).toHaveLength(1);
    expect(rbx.warnings[0]).toMatch(/beforeSend raised an error/);
    expect((await events()).map((e) => [e.message, e.level, e.tags])).toEqual([
      ["break me", "error", null],
      ["Infinite yield possible on 'Workspace:WaitForChild(\"Map\")'", "warn", ["checked"]],
    ]);
    expect((await groups()).find((g) => g.message === "break me")?.count).toBe("2");
    rbx.destroy();

    rbx = await createRobloxServer({ studio: true });
    expect(await rbx.run(`return Monitor.init({ url = ${luaString(proxyUrl)}, apiKey = ${luaString(apiKey)} })`)).toBe(false);
    await rbx.fireError("ServerScriptService.A:1: x", "", "ServerScriptService.A");
    await rbx.advance(30);
    expect(rbx.requests).toEqual([]);
    expect(rbx.prints.join("\n")).toMatch(/sendInStudio/);
    rbx.destroy();

    rbx = await createRobloxServer({ studio: true });
    await rbx.run(`return Monitor.init({ url = ${luaString(proxyUrl)}, apiKey = ${luaString(apiKey)}, sendInStudio = true })`);
    await rbx.fireError("ServerScriptService.A:1: studio error", "", "ServerScriptService.A");
    await rbx.run(`return Monitor.flush(10)`);
    expect((await events()).at(-1)).toMatchObject({ message: "ServerScriptService.A:1: studio error", environment: "studio", place_id: null, job_id: null });
  });

  it("shapes what the API would refuse, so one odd event never costs its batch", async () => {
    await start();
    await rbx.run(`
      local blob = {}
      for i = 1, 50 do blob["k" .. i] = string.rep("x", 1999) end
      Monitor.captureMessage("   ", "error")
      Monitor.captureMessage("bad trace", "warn", { traceId = "not-a-uuid" })
      Monitor.captureMessage("huge context", "info", { blob = blob })
      Monitor.captureMessage("bytes \\255\\254 here", "info", { tags = { string.rep("t", 300) } })
      Monitor.captureMessage("fine", "info")
      return Monitor.flush(10)
    `);
    expect(rbx.requests.map((r) => r.status)).toEqual([200]);
    const rows = await events();
    expect(rows.map((e) => e.message)).toEqual(["(empty message)", "bad trace", "huge context", "bytes ?? here", "fine"]);
    expect(rows[1]).toMatchObject({ trace_id: null, context: { trace: "not-a-uuid" } });
    expect(rows[2].context).toEqual({ context_dropped: "larger than 16 KiB" });
    expect(rows[3].tags).toEqual(["t".repeat(200)]);
    expect(rbx.warnings).toEqual([]);
  });

  it("the client module reports client errors through the server, which attaches the real player", async () => {
    await start();
    await rbx.addPlayer(555, "Player555");
    const client = await createRobloxServer({ client: { userId: 555, name: "Player555" } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    const hud = "Players.Player555.PlayerGui.Hud.Controller";
    for (let i = 0; i < 3; i++) await client.fireError(`${hud}:8: attempt to call a nil value`, `${hud}:8\n`, hud);
    await client.fireError(`${hud}:20: bad argument`, `${hud}:20\n`, hud);
    // a repeat of the same error after 10 s is sent again
    await client.advance(11);
    await client.fireError(`${hud}:8: attempt to call a nil value`, `${hud}:8\n`, hud);
    await client.deliverTo(rbx);
    expect(client.threadErrors).toEqual([]);
    await rbx.run(`return Monitor.flush(10)`);
    const rows = await events();
    expect(rows.map((e) => [e.message, e.count, e.user_id, e.player_name, e.tags, e.context?.script, e.stack_trace])).toEqual([
      [`${hud}:8: attempt to call a nil value`, 2, "555", "Player555", ["client"], hud, `${hud}:8\n`],
      [`${hud}:20: bad argument`, 1, "555", "Player555", ["client"], hud, `${hud}:20\n`],
    ]);
  });

  it("serves the bundled SDK, which loads in Luau and returns the public API", async () => {
    rbx = undefined as unknown as RobloxServer;
    const res = await app.request("/sdk/RobloxMonitor.luau");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const source = await res.text();
    expect(source).toMatch(/^--!nocheck\n-- RobloxMonitor /);
    const state = await LuauState.createAsync({});
    try {
      const chunk = state.loadstring(`${source.replace(/\nreturn __require\("init"\)\n$/, "\n")}\nlocal keys = {} for k in __require("init") do table.insert(keys, k) end table.sort(keys) return table.concat(keys, ",")`, "=bundle", true);
      expect(await chunk()).toEqual(["captureException,captureMessage,close,economy,flush,init,newTraceId,setContext,setTag,setUser,startClient,status,withScope"]);
    } finally {
      state.destroy();
    }
  });
});
