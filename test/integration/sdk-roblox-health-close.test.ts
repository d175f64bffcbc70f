import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { scriptedProxy } from "../support/scripted-proxy.js";
import { healthAnswer, healthFigures, type HealthReport } from "../support/health-contract.js";
import { CLOSE_REASONS, type SentRequest } from "../support/roblox.js";

/**
 * How a server session ends, in real Luau: each Enum.CloseReason in the last report (with the
 * player sessions still open ended "ServerClosed"), an abnormal end (the engine stops the server
 * without BindToClose: no end is sent), and a memory leak as the samples show it. `POST /api/health`
 * is answered as the wire contract says (test/support/health-contract.ts).
 */
const t = sdkSuite();
const JOB = "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c";
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let proxy: Awaited<ReturnType<typeof scriptedProxy>>;
beforeAll(async () => {
  proxy = await scriptedProxy(
    () => t.app.url,
    (path, body) => (path === "/api/health" ? healthAnswer(body) : undefined),
  );
  t.proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy?.close();
});

const bodyOf = (r: SentRequest) => JSON.parse(r.body) as HealthReport;
const accepted = () => t.rbx.requests.filter((r) => r.url.endsWith("/api/health") && r.status === 200).map(bodyOf);

describe("Roblox SDK server sessions: how they end", () => {
  for (const reason of CLOSE_REASONS) {
    it(`closes with ${reason}: the last report ends the server and every session still open ("ServerClosed")`, async () => {
      expect(await t.start()).toBe(true);
      await t.rbx.addPlayer(401, "Ann");
      await t.rbx.addPlayer(402, "Bob");
      await t.rbx.advance(61);
      await t.rbx.removePlayer(401, "PlatformKick");
      await t.rbx.run(`Monitor.captureException("Trade failed", { player = mock.player(402) })`);
      await t.rbx.advance(5);
      // Bob is still connected while BindToClose runs
      expect(await t.rbx.shutdown(reason, true)).toBe(true);
      const reports = accepted();
      const last = reports.at(-1)!;
      expect(last.server).toEqual({
        job_id: JOB,
        place_id: "1818",
        place_version: "42",
        environment: "production",
        started_at: expect.stringMatching(ISO_MS),
        ended_at: expect.stringMatching(ISO_MS),
        close_reason: reason,
      });
      // the error was captured (and sent) before the last health report
      const ingest = t.rbx.requests.findIndex((r) => r.url.endsWith("/api/ingest"));
      expect(ingest).toBeGreaterThan(-1);
      expect(t.rbx.requests.findLastIndex((r) => r.url.endsWith("/api/health"))).toBeGreaterThan(ingest);
      // every session ended: Ann with her reason (an earlier report), Bob at the close
      expect(last.sessions).toEqual([
        expect.objectContaining({ id: `${JOB}/401/1`, exit_reason: "PlatformKick" }),
        { id: `${JOB}/402/1`, user_id: "402", started_at: expect.stringMatching(ISO_MS), ended_at: last.server.ended_at, exit_reason: "ServerClosed", errors: { server: 1, client: 0 } },
      ]);
      const figures = healthFigures(reports);
      expect(figures.versions["42"]).toEqual({
        servers: { started: 1, ended: 1, out_of_memory: reason === "OutOfMemory" ? 1 : 0, open: 0 },
        sessions: { open: 0, ended: 2, error_free: 1, error_free_rate: 0.5 },
        players: { distinct: 2, error_free: 1, error_free_rate: 0.5 },
        player_minutes: 2,
      });
      expect((await t.rbx.mock.closedAfter) as number).toBeLessThan(30);
    });
  }

  it("an abnormal end (the engine stops the server without BindToClose) sends no end", async () => {
    expect(await t.start()).toBe(true);
    await t.rbx.addPlayer(501, "Ann");
    await t.rbx.advance(125);
    await t.rbx.crash();
    await t.rbx.advance(600);
    const reports = accepted();
    expect(reports.length).toBeGreaterThanOrEqual(3);
    expect(reports.every((r) => r.server.ended_at === undefined && r.server.close_reason === undefined)).toBe(true);
    const figures = healthFigures(reports);
    expect(figures.versions["42"]).toEqual({
      servers: { started: 1, ended: 0, out_of_memory: 0, open: 1 },
      sessions: { open: 1, ended: 0, error_free: 0, error_free_rate: null },
      players: { distinct: 0, error_free: 0, error_free_rate: null },
      player_minutes: 2,
    });
  });

  it("a memory leak shows as rising memory in the samples, one a minute", async () => {
    expect(await t.start()).toBe(true);
    await t.rbx.addPlayer(601, "Ann");
    for (let minute = 0; minute < 5; minute += 1) {
      await t.rbx.setStats({ totalMb: 1000 + 150 * minute, tags: { LuaHeap: 100 + 120 * minute, Script: 40 }, instanceCount: 20000 + 5000 * minute });
      await t.rbx.advance(60);
    }
    expect(await t.rbx.shutdown("OutOfMemory")).toBe(true);
    const reports = accepted();
    const samples = reports.flatMap((r) => r.samples);
    expect(samples.map((s) => s.memory_mb)).toEqual([1000, 1150, 1300, 1450, 1600]);
    expect(samples.map((s) => s.memory_tags.LuaHeap)).toEqual([100, 220, 340, 460, 580]);
    expect(samples.map((s) => s.instances)).toEqual([20000, 25000, 30000, 35000, 40000]);
    // one a minute apart, none twice
    const at = samples.map((s) => Date.parse(s.at));
    expect(at.slice(1).map((x, i) => x - at[i])).toEqual([60_000, 60_000, 60_000, 60_000]);
    expect(reports.at(-1)!.server.close_reason).toBe("OutOfMemory");
    expect(healthFigures(reports).versions["42"].servers.out_of_memory).toBe(1);
  });
});
