import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sdkSuite, luaString } from "../support/sdk-suite.js";
import { scriptedProxy, type Scripted } from "../support/scripted-proxy.js";
import { healthAnswer, healthFigures, type HealthReport } from "../support/health-contract.js";
import type { RobloxServer, SentRequest } from "../support/roblox.js";

/**
 * Sessions and server health in real Luau: what the SDK reports on `POST /api/health`, answered
 * here as the wire contract says (test/support/health-contract.ts); errors and loss reports go on
 * to the real service. Joins, leaves with each exit reason, errors met per session, the samples.
 */
const t = sdkSuite();
const JOB = "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c";
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let healthAnswerFor: (body: any) => Scripted = () => undefined;
let proxy: Awaited<ReturnType<typeof scriptedProxy>>;

beforeAll(async () => {
  proxy = await scriptedProxy(
    () => t.app.url,
    (path, body) => (path === "/api/health" ? (healthAnswerFor(body) ?? healthAnswer(body)) : undefined),
  );
  t.proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy?.close();
});
beforeEach(() => {
  healthAnswerFor = () => undefined;
});

const healthRequests = (rbx: RobloxServer = t.rbx) => rbx.requests.filter((r) => r.url.endsWith("/api/health"));
const bodyOf = (r: SentRequest) => JSON.parse(r.body) as HealthReport;
/** The reports the contract server took, in order. */
const accepted = (rbx: RobloxServer = t.rbx) => healthRequests(rbx).filter((r) => r.status === 200).map(bodyOf);
const status = async () => JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status())`)) as string);

describe("Roblox SDK sessions and server health", () => {
  it("reports the server at start, each join and leave with its exit reason, errors met per session, and a sample a minute", async () => {
    expect(await t.start()).toBe(true);
    await t.rbx.advance(1.5);
    // the server session starts at once, before any sample
    const [first] = accepted();
    expect(first).toEqual({
      server: { job_id: JOB, place_id: "1818", place_version: "42", environment: "production", started_at: expect.stringMatching(ISO_MS) },
      sessions: [],
      samples: [],
    });
    for (const [id, name] of [[101, "Ann"], [102, "Bob"], [103, "Cid"], [104, "Dee"], [105, "Eve"]] as const) await t.rbx.addPlayer(id, name);
    await t.rbx.setPing(101, 0.04);
    await t.rbx.setPing(102, 0.08);
    await t.rbx.setPing(103, 0.12);
    await t.rbx.setPing(104, 0.2);
    await t.rbx.setPing(105, 0.3);
    await t.rbx.advance(1);
    // Ann meets a server error (attributed with extra.player), twice; Bob one on his client
    await t.rbx.run(`
      local Players = game:GetService("Players")
      local ann = mock.player(101)
      Monitor.captureException("Sword broke", { player = ann })
      Monitor.withScope({ user = ann }, function() Monitor.captureMessage("Quest failed", "error") end)
      -- a warning is not an error met
      Monitor.captureMessage("Shop slow", "warning", { player = mock.player(103) })
    `);
    await t.rbx.fireRemote(102, { message: "GUI nil index", stack: "Players.Bob.PlayerGui.Shop:3" });
    await t.rbx.advance(1);
    await t.rbx.removePlayer(101, "PlatformKick");
    await t.rbx.removePlayer(102, "CreatorKick");
    await t.rbx.removePlayer(103, "Unknown");
    await t.rbx.addPlayer(101, "Ann"); // Ann again: a second session
    await t.rbx.setStats({ totalMb: 1234.56, tags: { LuaHeap: 300.04, Script: 80.1, Sounds: 2, Gui: 3, Animation: 4, Navigation: 5, Signals: 6, Instances: 7, BaseParts: 8, HttpCache: 1 } });
    await t.rbx.setDataStoreBudget({ GetAsync: 260, UpdateAsync: 255 });
    await t.rbx.advance(58);

    const reports = accepted();
    expect(reports).toHaveLength(2);
    const minute = reports[1];
    expect(minute.server).toEqual(first.server);
    const session = (id: number, n: number, errors: { server: number; client: number }, exit?: string) => ({
      id: `${JOB}/${id}/${n}`,
      user_id: String(id),
      started_at: expect.stringMatching(ISO_MS),
      ...(exit ? { ended_at: expect.stringMatching(ISO_MS), exit_reason: exit } : {}),
      errors,
    });
    expect(minute.sessions).toEqual([
      session(101, 1, { server: 2, client: 0 }, "PlatformKick"),
      session(102, 1, { server: 0, client: 1 }, "CreatorKick"),
      session(103, 1, { server: 0, client: 0 }, "Unknown"),
      session(104, 1, { server: 0, client: 0 }),
      session(105, 1, { server: 0, client: 0 }),
      session(101, 2, { server: 0, client: 0 }),
    ]);
    expect(minute.samples).toEqual([
      {
        at: expect.stringMatching(ISO_MS),
        players: 3,
        memory_mb: 1234.6,
        // the largest 8 tags
        memory_tags: { LuaHeap: 300, Script: 80.1, BaseParts: 8, Instances: 7, Signals: 6, Navigation: 5, Animation: 4, Gui: 3 },
        heartbeat_ms: 16.67,
        physics_fps: 60,
        instances: 20000,
        data_in_kbps: 10,
        data_out_kbps: 50,
        // Ann (re-joined: 50 ms default), Dee 200, Eve 300: nearest rank
        ping_ms: { p50: 200, p90: 300 },
        sdk: { queued: 0, dropped: 0 },
        datastore_budget: {
          GetAsync: 260,
          SetIncrementAsync: 300,
          UpdateAsync: 255,
          GetSortedAsync: 300,
          SetIncrementSortedAsync: 300,
          ListAsync: 300,
          GetVersionAsync: 300,
          RemoveVersionAsync: 300,
        },
      },
    ]);
    // the sample is taken a minute after init
    expect(Date.parse(minute.samples[0].at) - Date.parse(first.server.started_at)).toBe(60_000);

    // only what changed goes in the next report: Dee leaves
    await t.rbx.removePlayer(104, "Unknown");
    await t.rbx.advance(60);
    const third = accepted()[2];
    expect(third.sessions).toEqual([session(104, 1, { server: 0, client: 0 }, "Unknown")]);
    expect(third.samples.map((s) => s.players)).toEqual([2]);
    // each report under its own key
    const keys = healthRequests().map((r) => r.headers["idempotency-key"]);
    expect(new Set(keys).size).toBe(keys.length);
    expect(t.rbx.warnings).toEqual([]);
  });

  it("ends every session at close: players who left with their reason, the server with its CloseReason, in the last report", async () => {
    expect(await t.start()).toBe(true);
    await t.rbx.addPlayer(201, "Ann");
    await t.rbx.addPlayer(202, "Bob");
    await t.rbx.advance(30);
    await t.rbx.removePlayer(201, "CreatorKick");
    await t.rbx.advance(10);
    expect(await t.rbx.shutdown("DeveloperUpdate")).toBe(true);
    const reports = accepted();
    const last = reports.at(-1)!;
    expect(last.server).toMatchObject({ job_id: JOB, close_reason: "DeveloperUpdate", ended_at: expect.stringMatching(ISO_MS) });
    // Bob left as the server shut down (PlayerRemoving before BindToClose: Unknown)
    const figures = healthFigures(reports);
    expect([...figures.sessions.values()].map((s) => [s.user_id, s.exit_reason])).toEqual([
      ["201", "CreatorKick"],
      ["202", "Unknown"],
    ]);
    expect(figures.versions["42"]).toEqual({
      servers: { started: 1, ended: 1, out_of_memory: 0, open: 0 },
      sessions: { open: 0, ended: 2, error_free: 2, error_free_rate: 1 },
      players: { distinct: 2, error_free: 2, error_free_rate: 1 },
      player_minutes: 0,
    });
  });

  it("health = false sends no health report", async () => {
    expect(await t.start("health = false")).toBe(true);
    await t.rbx.addPlayer(301, "Ann");
    await t.rbx.run(`Monitor.captureException("boom", { player = mock.player(301) })`);
    await t.rbx.advance(130);
    expect(await t.rbx.shutdown("ServerEmpty")).toBe(true);
    expect(healthRequests()).toEqual([]);
    expect(t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"))).toHaveLength(1);
  });

  it("a missing engine API is a null measure, never an error; memory tags only where memory tracking is on (no warnings)", async () => {
    expect(await t.start()).toBe(true);
    await t.rbx.setStats({ memoryTrackingEnabled: false });
    await t.rbx.run(`
      mock.services.Stats.GetTotalMemoryUsageMb = function() error("not here") end
      workspace.GetRealPhysicsFPS = nil
    `);
    await t.rbx.advance(61);
    const [sample] = accepted().flatMap((r) => r.samples);
    expect(sample).toMatchObject({ players: 0, memory_mb: null, memory_tags: {}, physics_fps: null, ping_ms: null, heartbeat_ms: 16.67 });
    expect(t.rbx.warnings).toEqual([]);
    expect((await status()).healthQueued).toBe(0);
  });

  it("keeps the key and the body on a retry of the same state, and a report made again with newer state is exact", async () => {
    let failures = 1;
    healthAnswerFor = () => (failures-- > 0 ? { status: 503 } : undefined);
    expect(await t.start()).toBe(true);
    await t.rbx.advance(10);
    const [a, b] = healthRequests();
    expect(a.status).toBe(503);
    expect(b.status).toBe(200);
    expect(b.headers["idempotency-key"]).toBe(a.headers["idempotency-key"]);
    expect(b.body).toBe(a.body);
    // a report sent twice changes nothing: the figures are those of the state
    const reports = accepted();
    expect(healthFigures([...reports, ...reports])).toEqual(healthFigures(reports));
    expect(luaString("x")).toBe('"x"');
  });
});
