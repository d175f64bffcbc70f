import { afterAll, expect, it } from "vitest";
import { startFakeOpenCloud, type FakeEntry, type FakeOpenCloud } from "../support/fake-open-cloud.js";
import { connect, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

/**
 * The acceptance scan: 5,000 entries, an injected 429, the process stopped halfway and
 * started again. The budget is set high for speed but below the total request count, so the
 * rolling-minute check has teeth.
 */
const BUDGET = 4000;
const ENTRIES = 5000;
const env = {
  JOBS_ENABLED: "true",
  OPEN_CLOUD_REQUESTS_PER_MINUTE: String(BUDGET),
  APP_SECRET: "economy-5k-test-app-secret-0123456789abcdef",
  NOTIFICATION_SECRET: "economy-5k-internal-key-0123456789",
};

let app: TestApp | undefined;
let fake: FakeOpenCloud | undefined;
afterAll(async () => {
  await app?.close();
  await fake?.close();
});

function buildEntries(): { entries: FakeEntry[]; deliberateSkips: number } {
  const entries: FakeEntry[] = [
    { id: "____PS", value: "ProfileService probe" },
    { id: "GlobalConfig", value: { motd: "welcome" } },
    { id: "Player_900001", value: { Settings: { Music: true } } },
    { id: "900002", value: { Data: { Inventory: [] }, MetaData: { LastUpdate: 1 } } },
    { id: "Player_900003", value: [] },
  ];
  const deliberateSkips = entries.length;
  for (let i = 1; entries.length < ENTRIES; i++) {
    const userId = 1_000_000 + i;
    const profile = {
      RPCharacterOne: { Name: `Char ${i}`, Cash: i, InATM: i * 10, DarkCoin: i % 3 },
      ...(i % 2 ? { RPCharacterTwo: { FirstName: "Alt", LastName: String(i), Cash: 1 } } : {}),
      DataCode: 2,
    };
    const value = i % 5 === 0 ? { Data: profile, MetaData: { ProfileCreateTime: 1, SessionLoadCount: i, LastUpdate: 2 } } : profile;
    entries.push({ id: i % 7 === 0 ? String(userId) : `Player_${userId}`, value, revisionCreateTime: "2026-11-20T12:00:00.000Z" });
  }
  return { entries, deliberateSkips };
}

it(`scans ${ENTRIES} entries across a 429 and a restart, within budget, reporting progress`, async () => {
  const { entries, deliberateSkips } = buildEntries();
  fake = await startFakeOpenCloud({ entries });
  fake.inject(429, 800, { "retry-after": "2" });
  const appEnv = { ...env, OPEN_CLOUD_BASE_URL: fake.url };
  app = await startTestApp(appEnv);
  const databaseUrl = app.databaseUrl;
  const owner = await makeUser(app.sql);
  const { projectId } = await makeProject(app.sql, owner.id);
  const cookie = await login(app, owner.email);
  const put = await call(app, "PUT", "/api/economy/key", {
    cookie,
    body: { project_id: projectId, api_key: fake.apiKey, universe_id: fake.universeId, datastore_name: fake.datastoreName },
  });
  expect(put.status).toBe(200);
  const internal = { "x-internal-key": env.NOTIFICATION_SECRET };
  const start = await call(app, "POST", "/api/economy/sync", { body: { project_id: projectId }, headers: internal });
  expect(start.status).toBe(202);

  const samples: { state: string; scanned: number; stored: number }[] = [];
  const poll = async () => {
    const r = await call(app!, "GET", `/api/economy/sync?project_id=${projectId}`, { headers: internal });
    expect(r.status).toBe(200);
    samples.push({ state: r.body.state, scanned: r.body.scanned, stored: r.body.stored });
    return r.body;
  };

  // first process: run until about half the store is done, then shut down gracefully
  for (;;) {
    const s = await poll();
    if (s.scanned >= ENTRIES / 2) break;
    expect(["queued", "running"]).toContain(s.state);
    await new Promise((r) => setTimeout(r, 250));
  }
  await app.close();
  app = undefined;
  const probe = connect(databaseUrl);
  const [mid] = await probe`select state, cursor, scanned::int as scanned from economy_sync`;
  await probe.end();
  expect(["queued", "running"]).toContain(mid.state);
  expect(mid.cursor).not.toBeNull();
  expect(mid.scanned).toBeGreaterThanOrEqual(ENTRIES / 2);
  expect(mid.scanned).toBeLessThan(ENTRIES);

  // second process on the same database: it picks the scan up from the saved cursor
  app = await startTestApp(appEnv, databaseUrl);
  let final;
  for (;;) {
    final = await poll();
    if (final.state !== "queued" && final.state !== "running") break;
    await new Promise((r) => setTimeout(r, 250));
  }

  expect(final).toMatchObject({
    state: "succeeded",
    scanned: ENTRIES,
    stored: ENTRIES - deliberateSkips,
    skipped: deliberateSkips,
    failed: 0,
    error: null,
  });
  const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_snapshots where project_id = ${projectId}`;
  expect(n).toBe(ENTRIES - deliberateSkips);
  const [{ h }] = await app.sql<{ h: number }[]>`select count(*)::int as h from economy_history where project_id = ${projectId}`;
  expect(h).toBe(ENTRIES - deliberateSkips);
  const [wrapped] = await app.sql`select cash::text, bank::text, display_names from economy_snapshots where project_id = ${projectId} and user_id = 1000005`;
  expect(wrapped).toEqual({ cash: "6", bank: "50", display_names: ["Char 5", "Alt 5"] });

  // the 429 was served and honoured; the pacing never went over budget in any rolling minute
  expect(fake.log.filter((l) => l.status === 429)).toHaveLength(1);
  expect(fake.arrivals.length).toBeGreaterThan(BUDGET);
  expect(fake.maxInWindow(60_000)).toBeLessThanOrEqual(BUDGET);
  expect(fake.maxInWindow(1_000)).toBeLessThanOrEqual(Math.ceil(BUDGET / 60) + 1);

  // progress throughout: counters only grow and were seen at many points before the end
  const scanned = samples.map((s) => s.scanned);
  expect(scanned).toEqual([...scanned].sort((a, b) => a - b));
  expect(new Set(scanned.filter((v) => v > 0 && v < ENTRIES)).size).toBeGreaterThanOrEqual(10);
}, 300_000);
