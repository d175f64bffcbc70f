import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { releaseHealthChoices, releaseHealthData, serverErrors, SERIES_STEP_HOURS } from "~/health/pages.server";

/**
 * The Release health and Live servers pages' own reads (app/health/pages.server.ts): a server's
 * errors are its JobId's events over its life in its project only; the page's choices from an
 * address are safe defaults, never an error page; the pages render for members only; and a share
 * page carries none of the health data.
 */
let app: TestApp;
let projectId = "";
let otherProjectId = "";
let cookie = "";
let outsiderCookie = "";
let owner: { id: string; email: string };
let apiKeyOf = "";
let shareToken = "";
const JOB = "job-pages-4c1e-live";
const ENDED = "job-pages-77aa-ended";
const minute = Math.floor(Date.now() / 60_000) * 60_000;
const ago = (min: number) => new Date(minute - min * 60_000).toISOString();

/** The page's HTML without React's text separators (`<!-- -->`). */
const text = (html: string) => html.replaceAll("<!-- -->", "");

async function health(apiKey: string, body: unknown) {
  const r = await call(app, "POST", "/api/health", { body, headers: { "x-api-key": apiKey } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

beforeAll(async () => {
  app = await startTestApp();
  const u = await makeUser(app.sql);
  owner = u;
  const outsider = await makeUser(app.sql);
  const p = await makeProject(app.sql, u.id, [], "Pages Game");
  const other = await makeProject(app.sql, u.id, [], "Other Game");
  projectId = p.projectId;
  apiKeyOf = p.apiKey;
  otherProjectId = other.projectId;
  cookie = await login(app, u.email);
  outsiderCookie = await login(app, outsider.email);
  const samples = (from: number, to: number, memory: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => ({ at: ago(from + i), players: 7, memory_mb: memory, heartbeat_ms: 16.5 }));
  await health(p.apiKey, {
    server: { job_id: JOB, place_id: "99", place_version: "7", environment: "production", started_at: ago(30) },
    sessions: [{ id: `${JOB}/1/1`, user_id: "1", started_at: ago(29), ended_at: ago(5), errors: { server: 0, client: 0 } }],
    samples: samples(0, 29, 1357.5),
  });
  await health(p.apiKey, {
    server: { job_id: ENDED, place_id: "99", place_version: "7", environment: "production", started_at: ago(90), ended_at: ago(60), close_reason: "OutOfMemory" },
    samples: samples(61, 89, 2468.5),
  });
  let traced = 0;
  const event = (message: string, job: string, minutesAgo: number) => ({
    message,
    stack_trace: message.split(": ")[0],
    level: "error",
    game_version: "7",
    job_id: job,
    timestamp: ago(minutesAgo),
    // traced, so each one is stored
    trace_id: `0a1b2c3d-0000-4000-8000-${String(++traced).padStart(12, "0")}`,
  });
  await ingest(app, p.apiKey, {
    errors: [
      event("ServerScriptService.Pets:40: pet limit reached", JOB, 3),
      event("ServerScriptService.Pets:40: pet limit reached", JOB, 2),
      // the same JobId before the server started (another server's life), and another server
      event("ServerScriptService.Pets:40: pet limit reached", JOB, 240),
      event("ServerScriptService.Pets:40: pet limit reached", ENDED, 70),
    ],
  });
  // the same JobId in another project
  await ingest(app, other.apiKey, { errors: [event("ServerScriptService.Shop:1: other project", JOB, 2)] });
  const [group] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} limit 1`;
  const share = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: group.id, role: "viewer" } });
  expect(share.status).toBe(201);
  shareToken = share.body.token;
});
afterAll(() => app?.close());

describe("a server's errors", () => {
  it("counts its JobId's events over its life, in its project only", async () => {
    const r = await serverErrors(app.sql, projectId, JOB);
    expect(r.known).toBe(true);
    expect(r.issues).toHaveLength(1);
    expect(r.issues[0]).toMatchObject({ title: "ServerScriptService.Pets:40: pet limit reached", occurrences: 2, level: "error" });
    expect(r.occurrences).toBe(2);
    const ended = await serverErrors(app.sql, projectId, ENDED);
    expect(ended.occurrences).toBe(1);
    const other = await serverErrors(app.sql, otherProjectId, JOB);
    expect(other.known).toBe(false);
    expect(other.issues.map((i) => i.title)).toEqual(["ServerScriptService.Shop:1: other project"]);
  });

  it("a JobId without a health report is read over the last 24 hours", async () => {
    const r = await serverErrors(app.sql, projectId, "no-such-job");
    expect(r).toMatchObject({ known: false, issues: [], occurrences: 0 });
    expect(Date.now() - r.from.getTime()).toBeGreaterThanOrEqual(86_400_000);
  });
});

describe("the page's choices", () => {
  it("an unknown window, a page out of range or an over-long environment are the defaults", () => {
    expect(releaseHealthChoices(new URLSearchParams("window=1y&page=-3&environment=" + "x".repeat(300)))).toEqual({ window: "24h", environment: "", page: 1, a: "", b: "" });
    expect(releaseHealthChoices(new URLSearchParams("window=30d&page=2&environment=%20staging%20&a=7&b=8"))).toEqual({ window: "30d", environment: "staging", page: 2, a: "7", b: "8" });
  });
});

describe("the compared versions' series", () => {
  it("step by the window (an hour, 6 hours, a day) and sum to the API's hourly figures", async () => {
    const hourly = await call(app, "GET", `/api/v1/releases/7?window=30d`, { headers: { "x-api-key": apiKeyOf } });
    expect(hourly.status).toBe(200);
    const sum = (xs: { errors: number; player_minutes: number }[]) => xs.reduce((a, x) => ({ errors: a.errors + x.errors, player_minutes: a.player_minutes + x.player_minutes }), { errors: 0, player_minutes: 0 });
    for (const window of ["24h", "7d", "30d"] as const) {
      const data = await releaseHealthData(app.sql, owner, projectId, new URLSearchParams({ window, a: "7" }));
      const [detail] = data.compare;
      const step = SERIES_STEP_HOURS[window] * 3_600_000;
      const from = new Date(detail.adoption[0].at).getTime();
      for (const p of detail.adoption) expect((new Date(p.at).getTime() - from) % step).toBe(0);
      expect(detail.adoption.length).toBeLessThanOrEqual({ "24h": 25, "7d": 29, "30d": 31 }[window]);
      // every occurrence and player-minute of the hours is in a point
      expect(sum(detail.errors_per_1000_player_minutes)).toEqual(sum(hourly.body.errors_per_1000_player_minutes));
    }
    // the charts say what a point spans
    for (const [window, per] of [["24h", "per hour"], ["7d", "per 6 hours"], ["30d", "per day"]]) {
      const r = await call(app, "GET", `/projects/${projectId}/releases?window=${window}&a=7`, { cookie });
      expect(text(r.body)).toContain(`Errors per 1,000 player-minutes, ${per}`);
      expect(text(r.body)).toContain(`Adoption ${per}`);
    }
  });
});

describe("two compared versions", () => {
  it("each read as the API reads it alone, in one read of each kind for both", async () => {
    // two versions over different hours: 8 rolled out to 9, each with samples, sessions and errors
    const p = await makeProject(app.sql, owner.id, [], "Compared Game");
    // a sample every 3 minutes (a report carries at most 120)
    const samples = (from: number, to: number, players: number, memory: number) =>
      Array.from({ length: Math.floor((to - from) / 3) + 1 }, (_, i) => ({ at: ago(from + 3 * i), players, memory_mb: memory + i, heartbeat_ms: 15 + (i % 4) }));
    await health(p.apiKey, {
      server: { job_id: "cmp-8", place_id: "5", place_version: "8", environment: "production", started_at: ago(400) },
      sessions: [{ id: "cmp-8/1", user_id: "81", started_at: ago(390), ended_at: ago(200), errors: { server: 1, client: 0 } }],
      samples: samples(150, 399, 9, 900),
    });
    await health(p.apiKey, {
      server: { job_id: "cmp-9", place_id: "5", place_version: "9", environment: "production", started_at: ago(160) },
      sessions: [{ id: "cmp-9/1", user_id: "91", started_at: ago(150), ended_at: ago(10), errors: { server: 0, client: 0 } }],
      samples: samples(0, 159, 12, 700),
    });
    let n = 0;
    const event = (version: string, minutesAgo: number) => ({
      message: `ServerScriptService.Round:${version}: round failed`,
      level: "error",
      game_version: version,
      job_id: `cmp-${version}`,
      timestamp: ago(minutesAgo),
      trace_id: `0a1b2c3d-0000-4000-8000-${String(900 + ++n).padStart(12, "0")}`,
    });
    await ingest(app, p.apiKey, { errors: [event("8", 300), event("8", 170), event("9", 120), event("9", 5), event("9", 4)] });
    // every statement the page's reads send
    const statements: string[] = [];
    const recorded = app.sql;
    const debug = recorded.options.debug;
    Object.assign(recorded.options, { debug: (_c: number, text: string) => statements.push(text) });
    let data: Awaited<ReturnType<typeof releaseHealthData>>;
    try {
      data = await releaseHealthData(recorded, owner, p.projectId, new URLSearchParams({ window: "24h", a: "9", b: "8" }));
    } finally {
      Object.assign(recorded.options, { debug });
    }
    expect(data.compare.map((d) => d.version)).toEqual(["9", "8"]);
    for (const d of data.compare) {
      // the API's detail of the version alone (hourly, as the 24-hour page steps)
      const alone = await call(app, "GET", `/api/v1/releases/${d.version}?window=24h`, { headers: { "x-api-key": p.apiKey } });
      expect(alone.status).toBe(200);
      expect(JSON.parse(JSON.stringify(d))).toEqual(alone.body);
      expect(d.errors_per_1000_player_minutes.reduce((s, x) => s + x.errors, 0)).toBe(d.version === "9" ? 3 : 2);
    }
    // the two versions' series (health, errors) in one statement, their memory by age in another;
    // versions of the list shown are not looked up again
    const reads = (table: string) => statements.filter((t) => t.includes(table));
    expect(reads("rollup_version_hour")).toHaveLength(2); // the list's error counts, the compared series
    expect(reads("health_hist_day")).toHaveLength(2); // the list's percentiles, the compared memory by age
    expect(statements.filter((t) => /select 1 from health_versions where project_id = \$1 and place_version/.test(t))).toHaveLength(0);
  });
});

describe("the pages", () => {
  it("Release health shows the version's health; a bad window is the default, not an error", async () => {
    for (const q of ["", "?window=7d&environment=production", "?window=bogus&page=abc", "?a=no-such-version&b=7"]) {
      const r = await call(app, "GET", `/projects/${projectId}/releases${q}`, { cookie });
      expect(r.status).toBe(200);
      expect(r.body).toContain("Health by version");
      expect(r.body).toContain('data-version="7"');
      // 30 + 29 samples of 7 players
      expect(text(r.body)).toContain("413 player-min");
    }
  });

  it("Live servers lists the running server and, asked, its errors", async () => {
    const r = await call(app, "GET", `/projects/${projectId}/servers?job=${JOB}`, { cookie });
    expect(r.status).toBe(200);
    expect(r.body).toContain(`data-job="${JOB}"`);
    expect(r.body).not.toContain(`data-job="${ENDED}"`);
    expect(text(r.body)).toContain("2 occurrences in 1 issue");
  });

  it("someone outside the project gets no page", async () => {
    for (const path of ["releases", "servers"]) {
      const r = await call(app, "GET", `/projects/${projectId}/${path}`, { cookie: outsiderCookie });
      expect(r.status).toBe(404);
      expect(r.body).not.toContain(JOB);
    }
  });
});

describe("share pages", () => {
  it("a share page's HTML carries no health data", async () => {
    const res = await app.request(`/share/${shareToken}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("pet limit reached");
    for (const leak of [JOB, ENDED, "Release health", "Live servers", "player-min", "Error-free", "Heartbeat", "1,357", "1357.5", "2468.5", "OutOfMemory", "/servers", "health_"]) {
      expect(html, leak).not.toContain(leak);
    }
  });
});
