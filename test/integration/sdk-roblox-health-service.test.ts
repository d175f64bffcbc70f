import { describe, expect, it } from "vitest";
import { runHealthJob } from "../../jobs/health.js";
import { getJson } from "../support/server.js";
import { sdkSuite, luaString } from "../support/sdk-suite.js";
import { countersApplied } from "../support/counters.js";
import { applyReports, healthFigures, type HealthReport } from "../support/health-contract.js";
import { createRobloxServer, type RobloxServer, type SentRequest } from "../support/roblox.js";

/**
 * The SDK and the service together, in real Luau: game servers run a version rollout with an
 * out-of-memory close and a crash, their health reports go to the real `POST /api/health`, and the
 * figures `/api/v1/releases` answers equal what the test engine did, exactly (sessions, error-free
 * sessions and players, player-minutes, servers, adoption per hour).
 */
const t = sdkSuite();

const isHealth = (r: SentRequest) => r.url.endsWith("/api/health");
const accepted = (rbx: RobloxServer) => rbx.requests.filter((r) => isHealth(r) && r.status === 200).map((r) => JSON.parse(r.body) as HealthReport);

async function server(jobId: string, placeVersion: number, epochMs: number) {
  const rbx = await createRobloxServer({ placeId: 1818, placeVersion, jobId, epochMs });
  expect(await rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)} })`)).toBe(true);
  return rbx;
}

describe("Roblox SDK health through the service", () => {
  it("a rollout with an out-of-memory close and a crash: the service's figures are the engine's", async () => {
    const epoch = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
    const a = await server("svc-a", 41, epoch);
    const b = await server("svc-b", 41, epoch);
    const c = await server("svc-c", 42, epoch + 120_000);
    const d = await server("svc-d", 42, epoch + 120_000);
    for (const id of [1, 2, 3]) await a.addPlayer(id, `P${id}`);
    for (const id of [4, 5]) await b.addPlayer(id, `P${id}`);
    for (const id of [6, 7, 8, 9]) await c.addPlayer(id, `P${id}`);
    for (const id of [10, 11]) await d.addPlayer(id, `P${id}`);
    await a.run(`Monitor.captureException("Old bug", { player = mock.player(1) })`);
    await c.fireRemote(6, { message: "New UI bug", stack: "Players.P6.PlayerGui.Shop:9" });
    await a.advance(240.5);
    await a.removePlayer(2, "CreatorKick");
    expect(await a.shutdown("DeveloperUpdate")).toBe(true);
    await c.advance(240.5);
    expect(await c.shutdown("OutOfMemory")).toBe(true);
    await b.advance(360.5);
    expect(await b.shutdown("ServerEmpty")).toBe(true);
    // D reports for three minutes, then the engine stops it without BindToClose
    await d.advance(180.5);
    await d.crash();
    for (const rbx of [a, b, c, d]) expect(rbx.threadErrors).toEqual([]);

    // silence is counted on the service's clock: four minutes on, the job declares D ended abnormally
    expect(await runHealthJob(t.app.sql, { now: new Date(Date.now() + 4 * 60_000) })).toBe(1);
    await countersApplied(t.app.sql);

    const reports = [...accepted(a), ...accepted(b), ...accepted(c), ...accepted(d)];
    const figures = healthFigures(reports);
    const answer = (await getJson(t.app, "/api/v1/releases?window=24h", t.apiKey)).body;
    const health = (v: string) => answer.data.find((i: { version: string }) => i.version === v).health;
    for (const v of ["41", "42"]) {
      const want = figures.versions[v];
      const got = health(v);
      expect(got.player_minutes, v).toBe(want.player_minutes);
      expect(got.servers.started, v).toBe(want.servers.started);
      expect(got.servers.out_of_memory, v).toBe(want.servers.out_of_memory);
      expect(got.servers.live, v).toBe(0);
      // D sent no end: the engine's figures count its sessions open; the service ended them "ServerLost"
      if (v === "41") {
        expect(got.sessions).toEqual(want.sessions);
        expect(got.players).toMatchObject({ distinct: want.players.distinct, error_free: want.players.error_free, error_free_rate: want.players.error_free_rate });
        expect(got.servers).toMatchObject({ ended: 2, abnormal: 0 });
      } else {
        expect(want.sessions).toMatchObject({ open: 2, ended: 4, error_free: 3 });
        // a session its server's loss ended never counts as error-free (docs/health.md)
        expect(got.sessions).toEqual({ open: 0, ended: 6, error_free: 3, error_free_rate: 0.5 });
        expect(got.servers).toMatchObject({ abnormal: 1 });
      }
    }
    // the engine: 41 had 3 + 2 players, one met an error; 42 had 4 players on C (one met an error) and 2 on D
    expect(figures.versions["41"].sessions).toEqual({ open: 0, ended: 5, error_free: 4, error_free_rate: 0.8 });
    expect(figures.versions["42"].player_minutes).toBe(4 * 4 + 2 * 3);

    // adoption per hour: each version's share of the hour's server-minutes and player-minutes
    const { samples } = applyReports(reports);
    const perHour = new Map<string, { servers: Map<string, number>; players: Map<string, number> }>();
    for (const s of samples.values()) {
      const hour = `${s.at.slice(0, 13)}:00:00.000Z`;
      const h = perHour.get(hour) ?? { servers: new Map(), players: new Map() };
      perHour.set(hour, h);
      h.servers.set(s.place_version, (h.servers.get(s.place_version) ?? 0) + 1);
      h.players.set(s.place_version, (h.players.get(s.place_version) ?? 0) + s.players);
    }
    const share = (m: Map<string, number>, v: string) => (m.get(v) ?? 0) / [...m.values()].reduce((x, y) => x + y, 0);
    for (const v of ["41", "42"]) {
      const detail = (await getJson(t.app, `/api/v1/releases/${v}?window=24h`, t.apiKey)).body;
      const points = (detail.adoption as { at: string; servers_share: number | null; players_share: number | null }[]).filter((p) => perHour.has(new Date(p.at).toISOString()));
      expect(points.length, v).toBe(perHour.size);
      for (const p of points) {
        const h = perHour.get(new Date(p.at).toISOString())!;
        expect(p.servers_share, `${v} ${p.at}`).toBeCloseTo(share(h.servers, v), 12);
        expect(p.players_share, `${v} ${p.at}`).toBeCloseTo(share(h.players, v), 12);
      }
    }
  });
});
