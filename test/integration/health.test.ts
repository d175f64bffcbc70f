import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHealthJob } from "../../jobs/health.js";
import { writeEvents, type EventRow } from "../../db/events.js";
import { createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { healthState, MIN, playersExact, recount, sample, script, scriptBase, server, session } from "../support/health.js";

/**
 * Release health over real HTTP on a real PostgreSQL: a scripted rollout from version 41 to 42 with
 * an out-of-memory close and an abnormal end, the figures of /api/v1/releases and its detail and of
 * /api/v1/servers exactly, and retries, reordering and repetition changing none of them.
 */
let app: TestApp;
let apiKey: string;
let projectId: string;
let T: number;

const post = (body: unknown, key = apiKey) => postJson(app, "/api/health", body, key);
const nonZero = (rows: any[]) => rows.filter((r) => Object.entries(r).some(([k, v]) => typeof v === "number" && v !== 0 && k !== "hour"));

async function runScript() {
  for (const r of script(T)) expect((await post(r)).status).toBe(200);
  await silence("C");
}

/** The server's last report came 5 minutes ago; the job declares it ended abnormally. */
async function silence(jobId: string) {
  await app.sql`update health_servers set last_seen = now() - interval '5 minutes' where project_id = ${projectId} and job_id = ${jobId}`;
  expect(await runHealthJob(app.sql)).toBeGreaterThanOrEqual(1);
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());
beforeEach(async () => {
  ({ apiKey, projectId } = await createProject(app.sql, "Health Game"));
  T = scriptBase();
});

describe("POST /api/health", () => {
  it("answers what it received and stores the server, sessions and samples", async () => {
    const r = await post(script(T)[0]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ server: "A", sessions: 3, samples: 1 });
    const s = await healthState(app.sql, projectId);
    expect(s.servers).toHaveLength(1);
    expect(s.servers[0]).toMatchObject({ job_id: "A", place_version: "41", ended_at: null, lost: false, players: 2, memory_mb: 100 });
    expect(s.sessions.map((x: any) => x.session_id)).toEqual(["A/1/1", "A/2/1", "A/3/1"]);
    const [row] = await app.sql<any[]>`select * from health_samples where project_id = ${projectId}`;
    expect(row).toMatchObject({ players: 2, memory_mb: 100, heartbeat_ms: 16, physics_fps: 59.8, instances: 40213, ping_p50_ms: 60, ping_p90_ms: 140,
      sdk_queued: 3, sdk_dropped: 0, memory_tags: { Script: 80.1, PhysicsParts: 60.2 }, datastore_budget: { GetAsync: 300, SetIncrementAsync: 300 } });
  });

  it("keeps the latest sample by its time on the server's row, whatever order reports come in", async () => {
    const latest = async () =>
      (await app.sql<any[]>`select last_sample_at, players, memory_mb, heartbeat_ms from health_servers where project_id = ${projectId} and job_id = 'L'`)[0];
    const report = (samples: unknown[]) => ({ server: server("L", "41", T), sessions: [], samples });
    // the first report registers the server with its sample
    expect((await post(report([sample(T + 5 * MIN, 4, 300, 20)]))).status).toBe(200);
    expect(await latest()).toEqual({ last_sample_at: new Date(T + 5 * MIN), players: 4, memory_mb: 300, heartbeat_ms: 20 });
    // an earlier sample sent late, and a report without samples, leave it; both samples are stored
    expect((await post(report([sample(T + 2 * MIN, 7, 900, 90)]))).status).toBe(200);
    expect((await post(report([]))).status).toBe(200);
    expect(await latest()).toEqual({ last_sample_at: new Date(T + 5 * MIN), players: 4, memory_mb: 300, heartbeat_ms: 20 });
    // a later one replaces it, the latest of a report's samples whatever their order in it
    expect((await post(report([sample(T + 9 * MIN, 6, 500, 30), sample(T + 7 * MIN, 8, 600, 40)]))).status).toBe(200);
    expect(await latest()).toEqual({ last_sample_at: new Date(T + 9 * MIN), players: 6, memory_mb: 500, heartbeat_ms: 30 });
    const [{ n }] = await app.sql<any[]>`select count(*)::int as n from health_samples where project_id = ${projectId} and job_id = 'L'`;
    expect(n).toBe(4);
    const [{ samples }] = await app.sql<any[]>`select sum(samples)::int as samples from health_hour where project_id = ${projectId}`;
    expect(samples).toBe(4);
  });

  it("needs an API key like every ingest", async () => {
    const r = await post(script(T)[0], "");
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("unauthorized");
    const bad = await post(script(T)[0], "nope");
    expect(bad.status).toBe(401);
  });
});

describe("release health figures", () => {
  it("are exactly what the script did", async () => {
    await runScript();
    // two error-level occurrences on version 41
    expect((await postJson(app, "/api/ingest", { errors: [{ message: "boom", game_version: "41", count: 2 }] }, apiKey)).status).toBe(200);
    await countersApplied(app.sql);
    const r = await getJson(app, "/api/v1/releases", apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 2, limit: 50, offset: 0, window: "24h", environment: null });
    const byVersion = Object.fromEntries(r.body.data.map((v: any) => [v.version, v]));
    expect(r.body.data.map((v: any) => v.version).sort()).toEqual(["41", "42"]);
    // every existing field is still there
    expect(byVersion["41"]).toMatchObject({ occurrences: 2, issues: 1, new_issues: 1, regressions: 0 });
    expect(byVersion["42"]).toMatchObject({ occurrences: 0, issues: 0, new_issues: 0, regressions: 0 });
    const h41 = byVersion["41"].health;
    expect(h41).toEqual({
      servers: { live: 1, started: 1, ended: 0, abnormal: 0, out_of_memory: 0 },
      players: { live: 3, distinct: 3, error_free: 1, error_free_rate: 0.5 },
      sessions: { open: 1, ended: 2, error_free: 1, error_free_rate: 0.5 },
      player_minutes: 8,
      errors_per_1000_player_minutes: 250,
      adoption: { servers_share: 1, players_share: 1 },
      memory_mb: { p50: expect.any(Number), p90: expect.any(Number) },
      heartbeat_ms: { p50: expect.any(Number), p90: expect.any(Number) },
    });
    // 1% bins: within 0.5% of the exact percentiles (110 and 120; 17 and 18)
    expect(Math.abs(h41.memory_mb.p50 - 110) / 110).toBeLessThan(0.006);
    expect(Math.abs(h41.memory_mb.p90 - 120) / 120).toBeLessThan(0.006);
    expect(Math.abs(h41.heartbeat_ms.p50 - 17) / 17).toBeLessThan(0.006);
    expect(Math.abs(h41.heartbeat_ms.p90 - 18) / 18).toBeLessThan(0.006);
    expect(byVersion["42"].health).toMatchObject({
      servers: { live: 0, started: 2, ended: 1, abnormal: 1, out_of_memory: 1 },
      // user 1 ended clean on B; user 4's session ended with its server (ServerLost): not error-free
      players: { live: 0, distinct: 2, error_free: 1, error_free_rate: 0.5 },
      sessions: { open: 0, ended: 2, error_free: 1, error_free_rate: 0.5 },
      player_minutes: 5,
      errors_per_1000_player_minutes: 0,
      adoption: { servers_share: 0, players_share: 0 },
    });

    const d = await getJson(app, "/api/v1/releases/42", apiKey);
    expect(d.status).toBe(200);
    expect(d.body.health).toEqual(byVersion["42"].health);
    // one hour (or two, when the script crossed an hour): the hour's server-minutes and player-minutes shares
    const samples = d.body.adoption.filter((a: any) => a.servers_share !== null);
    expect(samples.length).toBeGreaterThanOrEqual(1);
    expect(d.body.memory_by_age).toHaveLength(7);
    expect(d.body.memory_by_age[0]).toMatchObject({ age_minutes_from: 0, age_minutes_to: 10, samples: 2 });
    expect(d.body.memory_by_age[6]).toMatchObject({ age_minutes_from: 480, age_minutes_to: null, samples: 0, memory_mb_p50: null });
    expect(d.body.errors_per_1000_player_minutes.reduce((s: number, p: any) => s + p.player_minutes, 0)).toBe(5);
    expect((await getJson(app, "/api/v1/releases/99", apiKey)).status).toBe(404);
  });

  it("keep the memory bins without the age split equal to those by age, summed (migration 131 fills them alike)", async () => {
    await runScript();
    const bins = async () => {
      const rows = [];
      for (const [table, time] of [["health_hist_hour", "hour"], ["health_hist_day", "day"]] as const) {
        const [byAge, anyAge] = await Promise.all(
          [1, 3].map((metric) => app.sql<any[]>`
            select place_version, ${app.sql(time)}::text as at, bin, sum(n)::int as n from ${app.sql(table)}
            where project_id = ${projectId} and metric = ${metric} group by 1, 2, 3 order by 1, 2, 3`),
        );
        expect(byAge.length).toBeGreaterThan(0);
        expect(anyAge).toEqual(byAge);
        rows.push(anyAge);
      }
      return rows;
    };
    const written = await bins();
    // the migration's backfill, over the same stored bins by age, makes the same rows
    // (every project's: the backfill is over the whole table, as at the upgrade)
    await app.sql`delete from health_hist_hour where metric = 3`;
    await app.sql`delete from health_hist_day where metric = 3`;
    await app.sql.unsafe(readFileSync(new URL("../../db/migrations/131_health_memory_any_age.sql", import.meta.url), "utf8"));
    expect(await bins()).toEqual(written);
  });

  it("count every error occurrence of a version, those the throttle kept out of the stored events too", async () => {
    await runScript();
    // a burst of 40 error events (and 6 warnings) on 41 in one batch: a throttle of 5 a minute stores a few
    const event = (level: "error" | "warn"): EventRow => ({
      projectId, fingerprint: `burst-${level}`, olderFingerprints: [], message: `burst ${level}`, level, stackTrace: null, userId: null,
      playerName: null, traceId: null, jobId: "A", placeId: null, gameVersion: "41", environment: "production", context: null, tags: null,
      timestamp: Date.now(), count: 1, culprit: null,
    });
    const burst = [...Array.from({ length: 40 }, () => event("error")), ...Array.from({ length: 6 }, () => event("warn"))];
    await writeEvents(app.sql, burst, { limit: 5, windowSeconds: 60 });
    await countersApplied(app.sql);
    const [{ stored }] = await app.sql<{ stored: number }[]>`
      select coalesce(sum(count), 0)::int as stored from events where project_id = ${projectId} and level = 'error'`;
    expect(stored).toBe(5);
    const r = await getJson(app, "/api/v1/releases", apiKey);
    const h41 = r.body.data.find((v: any) => v.version === "41").health;
    // 40 errors in 8 player-minutes; warnings are not errors
    expect(h41.player_minutes).toBe(8);
    expect(h41.errors_per_1000_player_minutes).toBe(5000);
    const d = await getJson(app, "/api/v1/releases/41", apiKey);
    expect(d.body.health).toEqual(h41);
    expect(d.body.errors_per_1000_player_minutes.reduce((s: number, p: any) => s + p.errors, 0)).toBe(40);
    // a server's errors of the last 10 minutes are its stored events' (5 errors and 5 warnings kept), one read for the page
    const servers = await getJson(app, "/api/v1/servers", apiKey);
    expect(Object.fromEntries(servers.body.data.map((x: any) => [x.job_id, x.errors_10m]))).toEqual({ A: 10, B: 0, C: 0 });
  });

  it("lists servers live first with their latest sample, and filters by state and version", async () => {
    await runScript();
    const r = await getJson(app, "/api/v1/servers", apiKey);
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
    expect(r.body.data.map((s: any) => [s.job_id, s.state, s.close_reason])).toEqual([
      ["A", "live", null],
      // the two others by their last report, newest first
      ...[
        ["B", "ended", "OutOfMemory"],
        ["C", "abnormal", null],
      ].sort((x, y) => (r.body.data.findIndex((s: any) => s.job_id === x[0]) - r.body.data.findIndex((s: any) => s.job_id === y[0]))),
    ]);
    const a = r.body.data[0];
    expect(a).toMatchObject({ place_version: "41", place_id: "123", players: 3, memory_mb: 120, heartbeat_ms: 18, errors_10m: 0, ended_at: null });
    expect(a.uptime_s).toBeGreaterThanOrEqual(2 * 3600 - 60);
    const b = r.body.data.find((s: any) => s.job_id === "B");
    expect(b.uptime_s).toBe(240);
    expect((await getJson(app, "/api/v1/servers?state=abnormal", apiKey)).body.data.map((s: any) => s.job_id)).toEqual(["C"]);
    expect((await getJson(app, "/api/v1/servers?version=42&state=live", apiKey)).body).toMatchObject({ data: [], total: 0 });
    expect((await getJson(app, "/api/v1/servers?state=gone", apiKey)).status).toBe(400);
  });

  it("repeating, reordering and replaying every report changes nothing", async () => {
    await runScript();
    const once = await healthState(app.sql, projectId);
    const reports = script(T);
    for (const r of [...reports].reverse()) expect((await post(r)).status).toBe(200);
    for (const r of reports) expect((await post(r)).status).toBe(200);
    // the replay revived C? no: C's reports came before its silence, and replaying them is a late report:
    // it revives C (it was only silent) and reopens s5; the job ends them again
    await silence("C");
    const again = await healthState(app.sql, projectId);
    expect(again.samples).toEqual(once.samples);
    expect(again.hist).toEqual(once.hist);
    expect(again.minutes).toEqual(once.minutes);
    expect(again.sessions.map(({ ended_at: _, ...s }: any) => s)).toEqual(once.sessions.map(({ ended_at: _, ...s }: any) => s));
    expect(nonZero(again.hours)).toEqual(nonZero(await recount(app.sql, projectId)));
    const players = await playersExact(app.sql, projectId);
    expect(players.counted).toEqual(players.recounted);
    expect(nonZero(again.hours).map(({ sa: _, ...h }: any) => h)).toEqual(nonZero(once.hours).map(({ sa: _, ...h }: any) => h));
    const r = await getJson(app, "/api/v1/releases", apiKey);
    expect(r.body.data.find((v: any) => v.version === "42").health.sessions).toEqual({ open: 0, ended: 2, error_free: 1, error_free_rate: 0.5 });
  });

  it("a late report revives a server declared lost, and its sessions are open again", async () => {
    await runScript();
    const late = { server: server("C", "42", T + MIN), sessions: [], samples: [sample(T + 3 * MIN, 1, 310, 31)] };
    expect((await post(late)).status).toBe(200);
    const r = await getJson(app, "/api/v1/releases", apiKey);
    const h42 = r.body.data.find((v: any) => v.version === "42").health;
    expect(h42.servers).toMatchObject({ live: 1, abnormal: 0 });
    expect(h42.sessions).toEqual({ open: 1, ended: 1, error_free: 1, error_free_rate: 1 });
    expect(h42.player_minutes).toBe(6);
    expect(nonZero((await healthState(app.sql, projectId)).hours)).toEqual(nonZero(await recount(app.sql, projectId)));
    const players = await playersExact(app.sql, projectId);
    expect(players.counted).toEqual(players.recounted);
  });

  it("an error counted after a session ended makes it not error-free, exactly once", async () => {
    await runScript();
    const more = { server: server("A", "41", T), sessions: [session("A/1/1", 1, T, T + 2 * MIN, { server: 0, client: 2 })], samples: [] };
    expect((await post(more)).status).toBe(200);
    expect((await post(more)).status).toBe(200);
    const h41 = (await getJson(app, "/api/v1/releases", apiKey)).body.data.find((v: any) => v.version === "41").health;
    expect(h41.sessions).toEqual({ open: 1, ended: 2, error_free: 0, error_free_rate: 0 });
    expect(h41.players).toMatchObject({ distinct: 3, error_free: 0, error_free_rate: 0 });
    expect(nonZero((await healthState(app.sql, projectId)).hours)).toEqual(nonZero(await recount(app.sql, projectId)));
    const players = await playersExact(app.sql, projectId);
    expect(players.counted).toEqual(players.recounted);
  });
});

describe("player summaries", () => {
  it("read the touched player's own days of the version, not every player's", async () => {
    // a version with 20,000 player days (2,000 players over 10 days) and one player to summarize
    await app.sql`
      insert into health_player_days (project_id, environment, place_version, day, user_id, sessions_started, sessions_ended, sessions_errored)
      select ${projectId}, 'production', '41', date '2026-01-01' + d, u, 1, 1, 0
      from generate_series(0, 9) d cross join generate_series(1, 2000) u`;
    await app.sql`analyze health_player_days`;
    // the look-up of summarizePlayers (db/health.ts): one player's days of one version
    const [{ "QUERY PLAN": [plan] }] = await app.sql<any[]>`
      explain (analyze, buffers, costs off, timing off, format json)
      select max(day) from health_player_days
      where project_id = ${projectId} and place_version = '41' and environment = 'production' and user_id = 1234`;
    const nodes = (p: any): any[] => [p, ...(p.Plans ?? []).flatMap(nodes)];
    const buffers = (p: any): number => p["Shared Hit Blocks"] + p["Shared Read Blocks"];
    expect(nodes(plan.Plan).filter((n) => n["Relation Name"] === "health_player_days").map((n) => n["Index Name"])).toEqual(["health_player_days_pkey"]);
    // the index's descent and the player's ten entries: a handful of pages (the version's whole range
    // of the index is over a hundred)
    expect(buffers(plan.Plan)).toBeLessThan(10);
  });
});

describe("histogram reads", () => {
  it("read one metric's day cells of the versions asked for, not every metric's in the window", async () => {
    // 30 days of 10 versions: memory by age (7 buckets), heartbeat and memory without the age split, 40 bins each
    await app.sql`
      insert into health_hist_day (project_id, environment, place_version, day, metric, age_bucket, bin, shard, n)
      select ${projectId}, 'production', 'h' || v, current_date - d, m, a, b, 0, 1
      from generate_series(0, 29) d cross join generate_series(1, 10) v cross join generate_series(1, 3) m
        cross join generate_series(0, 6) a cross join generate_series(0, 39) b
      where m = 1 or a = 0`;
    await app.sql`analyze health_hist_day`;
    // the day part of histogram() (db/health-reads.ts): heartbeat of two versions over 7 days
    const [{ "QUERY PLAN": [plan] }] = await app.sql<any[]>`
      explain (analyze, buffers, costs off, timing off, format json)
      select place_version, bin, sum(n) from health_hist_day
      where project_id = ${projectId} and place_version = any(${["h1", "h2"]}::text[]) and metric = 2 and day >= current_date - 6
      group by 1, 2`;
    const nodes = (p: any): any[] => [p, ...(p.Plans ?? []).flatMap(nodes)];
    const scans = nodes(plan.Plan).filter((n) => n["Relation Name"] === "health_hist_day" || String(n["Index Name"] ?? "").startsWith("health_hist_day"));
    expect(scans.map((n) => n["Index Name"]).filter(Boolean)).toEqual(["health_hist_day_metric"]);
    // the cells read are the ones summed: 2 versions × 7 days × 40 bins, none of another metric or version
    const rows = scans.find((n) => n["Relation Name"] === "health_hist_day");
    expect(rows["Actual Rows"]).toBe(2 * 7 * 40);
    expect(rows["Rows Removed by Filter"] ?? 0).toBe(0);
  });

  it("read one metric's hour cells before the window's first whole day, not every metric's of those hours", async () => {
    // a day of hours of 10 versions: memory by age (7 buckets), heartbeat and memory without the age split, 40 bins each
    await app.sql`
      insert into health_hist_hour (project_id, environment, place_version, hour, metric, age_bucket, bin, shard, n)
      select ${projectId}, 'production', 'h' || v, date_trunc('hour', now()) - make_interval(hours => h), m, a, b, 0, 1
      from generate_series(1, 24) h cross join generate_series(1, 10) v cross join generate_series(1, 3) m
        cross join generate_series(0, 6) a cross join generate_series(0, 39) b
      where m = 1 or a = 0`;
    await app.sql`analyze health_hist_hour`;
    // the hour part of histogram() (db/health-reads.ts): heartbeat and memory without the age split of two versions over 9 hours
    const [{ "QUERY PLAN": [plan] }] = await app.sql<any[]>`
      explain (analyze, buffers, costs off, timing off, format json)
      select place_version, metric, bin, sum(n) from health_hist_hour
      where project_id = ${projectId} and metric = any(${[2, 3]}::smallint[]) and place_version = any(${["h1", "h2"]}::text[])
        and hour >= date_trunc('hour', now()) - interval '12 hours' and hour < date_trunc('hour', now()) - interval '3 hours'
      group by 1, 2, 3`;
    const nodes = (p: any): any[] => [p, ...(p.Plans ?? []).flatMap(nodes)];
    const scans = nodes(plan.Plan).filter((n) => n["Relation Name"] === "health_hist_hour" || String(n["Index Name"] ?? "").startsWith("health_hist_hour"));
    expect(scans.map((n) => n["Index Name"]).filter(Boolean)).toEqual(["health_hist_hour_metric"]);
    // the cells read are the ones summed: 2 metrics × 2 versions × 9 hours × 40 bins, none of memory by age
    const rows = scans.find((n) => n["Relation Name"] === "health_hist_hour");
    expect(rows["Actual Rows"]).toBe(2 * 2 * 9 * 40);
    expect(rows["Rows Removed by Filter"] ?? 0).toBe(0);
  });
});
