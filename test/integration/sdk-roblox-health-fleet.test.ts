import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkSuite, luaString } from "../support/sdk-suite.js";
import { scriptedProxy } from "../support/scripted-proxy.js";
import { countersApplied } from "../support/counters.js";
import { healthAnswer, healthFigures, type HealthReport } from "../support/health-contract.js";
import { createRobloxServer, type RobloxServer, type SentRequest } from "../support/roblox.js";

/**
 * Health across servers and over time, in real Luau: a version rollout (servers on two place
 * versions at once, on one clock), an outage (no loss, no duplicates, errors delivered before
 * health), and the budget rule (a burst of errors is never delayed by health). `POST /api/health`
 * is answered as the wire contract says (test/support/health-contract.ts); errors go on to the
 * real service.
 */
const t = sdkSuite();

let proxy: Awaited<ReturnType<typeof scriptedProxy>>;
beforeAll(async () => {
  proxy = await scriptedProxy(
    () => t.app.url,
    (path, body) => {
      // the service down: it answers 503 to everything (errors and health alike)
      if (t.mode.kind === "503") return { status: 503 };
      return path === "/api/health" ? healthAnswer(body) : undefined;
    },
  );
  t.proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy?.close();
});

const isHealth = (r: SentRequest) => r.url.endsWith("/api/health");
const isIngest = (r: SentRequest) => r.url.endsWith("/api/ingest");
const bodyOf = (r: SentRequest) => JSON.parse(r.body) as HealthReport;
const accepted = (rbx: RobloxServer) => rbx.requests.filter((r) => isHealth(r) && r.status === 200).map(bodyOf);

/** A game server on its own place version and JobId, every one on the same clock (`epochMs`). */
async function server(jobId: string, placeVersion: number, epochMs: number, options = "") {
  const rbx = await createRobloxServer({ placeId: 1818, placeVersion, jobId, epochMs });
  expect(await rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)}, ${options} })`)).toBe(true);
  return rbx;
}

describe("Roblox SDK health across servers and outages", () => {
  it("a version rollout: adoption, sessions and player-minutes per version follow what the servers did", async () => {
    // a minute boundary an hour ago: each server's minute-N sample falls in the same minute
    const epoch = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
    const a = await server("job-a", 41, epoch);
    const b = await server("job-b", 41, epoch);
    // the update: a server on 42 starts two minutes later
    const c = await server("job-c", 42, epoch + 120_000);
    for (const id of [1, 2, 3]) await a.addPlayer(id, `P${id}`);
    for (const id of [4, 5]) await b.addPlayer(id, `P${id}`);
    for (const id of [6, 7, 8, 9]) await c.addPlayer(id, `P${id}`);
    await a.run(`Monitor.captureException("Old bug", { player = mock.player(1) })`);
    await c.fireRemote(6, { message: "New UI bug", stack: "Players.P6.PlayerGui.Shop:9" });
    // A runs 4 minutes and is migrated to the update; C runs 4 minutes; B 6, then empties
    await a.advance(240.5);
    expect(await a.shutdown("DeveloperUpdate")).toBe(true);
    await c.advance(240.5);
    expect(await c.shutdown("ServerEmpty")).toBe(true);
    await b.advance(360.5);
    expect(await b.shutdown("ServerEmpty")).toBe(true);

    const reports = [...accepted(a), ...accepted(b), ...accepted(c)];
    const figures = healthFigures(reports);
    expect(figures.versions).toEqual({
      "41": {
        servers: { started: 2, ended: 2, out_of_memory: 0, open: 0 },
        sessions: { open: 0, ended: 5, error_free: 4, error_free_rate: 0.8 },
        players: { distinct: 5, error_free: 4, error_free_rate: 0.8 },
        player_minutes: 3 * 4 + 2 * 6,
      },
      "42": {
        servers: { started: 1, ended: 1, out_of_memory: 0, open: 0 },
        sessions: { open: 0, ended: 4, error_free: 3, error_free_rate: 0.75 },
        players: { distinct: 4, error_free: 3, error_free_rate: 0.75 },
        player_minutes: 4 * 4,
      },
    });
    const minute = (n: number) => new Date(epoch + n * 60_000).toISOString().slice(0, 16);
    const only41 = { "41": { servers_share: 1, players_share: 1 } };
    const three = { "41": { servers_share: 2 / 3, players_share: 5 / 9 }, "42": { servers_share: 1 / 3, players_share: 4 / 9 } };
    const two = { "41": { servers_share: 1 / 2, players_share: 2 / 6 }, "42": { servers_share: 1 / 2, players_share: 4 / 6 } };
    expect(figures.adoption).toEqual({ [minute(1)]: only41, [minute(2)]: only41, [minute(3)]: three, [minute(4)]: three, [minute(5)]: two, [minute(6)]: two });
    for (const rbx of [a, b, c]) expect(rbx.threadErrors).toEqual([]);
  });

  it("an outage: errors are delivered first, health waits, then every session and sample arrives once", async () => {
    expect(await t.start("maxRetryTime = 3600")).toBe(true);
    await t.rbx.addPlayer(701, "Ann");
    await t.rbx.advance(61);
    const before = accepted(t.rbx).length;
    expect(before).toBe(2);
    t.mode = { kind: "503" };
    await t.rbx.run(`Monitor.captureException("During the outage", { player = mock.player(701) })`);
    await t.rbx.advance(12);
    const firstFailure = t.rbx.requests.findIndex((r) => isIngest(r) && r.status === 503);
    expect(firstFailure).toBeGreaterThan(-1);
    await t.rbx.addPlayer(702, "Bob");
    await t.rbx.advance(100);
    await t.rbx.removePlayer(701, "CreatorKick");
    await t.rbx.run(`Monitor.captureException("Still out", { player = mock.player(702) })`);
    await t.rbx.advance(200);
    // while the errors lane retries, the health lane does not send at all
    expect(t.rbx.requests.slice(firstFailure).filter(isHealth)).toEqual([]);
    t.mode = { kind: "pass" };
    await t.rbx.advance(240);
    const requests = t.rbx.requests.slice(firstFailure);
    const firstIngest = requests.findIndex((r) => isIngest(r) && typeof r.status === "number" && r.status < 300);
    const firstHealth = requests.findIndex((r) => isHealth(r) && r.status === 200);
    expect(firstIngest).toBeGreaterThan(-1);
    expect(firstHealth).toBeGreaterThan(firstIngest);
    expect(await t.rbx.shutdown("DeveloperShutdown")).toBe(true);

    // no loss, no duplicates: each minute's sample once, every error once
    const reports = accepted(t.rbx);
    const at = reports.flatMap((r) => r.samples.map((s) => s.at));
    expect(new Set(at).size).toBe(at.length);
    expect(at).toHaveLength(10);
    await countersApplied(t.app.sql);
    const events = await t.events();
    expect(events.map((e: any) => e.message).sort()).toEqual(["During the outage", "Still out"]);
    const figures = healthFigures(reports);
    expect([...figures.sessions.values()].map((s) => [s.user_id, s.exit_reason, s.errors])).toEqual([
      ["701", "CreatorKick", { server: 1, client: 0 }],
      ["702", "Unknown", { server: 1, client: 0 }],
    ]);
    const status = JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status().dropped)`)) as string);
    expect(status).toEqual([]);
  });

  it("a burst of errors is never delayed by health: the errors go out exactly when they do without health, and health only spends what they leave", async () => {
    const epoch = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
    const options = "maxRequestsPerMinute = 5, maxBatchSize = 1";
    const withHealth = await server("job-burst-1", 42, epoch, options);
    const without = await server("job-burst-2", 42, epoch, `${options}, health = false`);
    for (const rbx of [withHealth, without]) {
      await rbx.addPlayer(801, "Ann");
      await rbx.advance(55);
      // 12 distinct errors, one a request at 5 a minute: the burst needs the budget for over two minutes
      await rbx.run(`for i = 1, 12 do Monitor.captureException("Burst " .. i, { player = mock.player(801) }) end`);
      await rbx.advance(300);
    }
    const ingestAt = (rbx: RobloxServer) => rbx.requests.filter(isIngest).map((r) => r.at);
    expect(ingestAt(withHealth)).toHaveLength(12);
    expect(ingestAt(withHealth)).toEqual(ingestAt(without));
    // each health request went while the minute's requests of every lane were under the budget,
    // and none while the errors lane had a batch waiting
    const all = withHealth.requests;
    const health = all.filter(isHealth);
    expect(health.length).toBeGreaterThan(1);
    for (const h of health) expect(all.filter((r) => r !== h && r.at > h.at - 60 && r.at <= h.at).length).toBeLessThan(5);
    const lastIngest = Math.max(...ingestAt(withHealth));
    expect(health.filter((h) => h.at > 55 && h.at < lastIngest)).toEqual([]);
    // and all health arrived: the samples of the minutes the burst held it back came later
    const samples = accepted(withHealth).flatMap((r) => r.samples.map((s) => s.at));
    expect(samples).toHaveLength(5);
    expect(accepted(withHealth).flatMap((r) => r.sessions).at(-1)).toMatchObject({ user_id: "801", errors: { server: 12, client: 0 } });
    for (const rbx of [withHealth, without]) expect(rbx.threadErrors).toEqual([]);
  });
});
