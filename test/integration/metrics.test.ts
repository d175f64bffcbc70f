import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { holdDrain } from "../support/locks.js";
import { metricsScraper } from "../../db/metrics.js";
import { createSql } from "../../db/client.js";
import { loadConfig, ConfigError } from "../../app/env.server.js";
import { createProject, postJson, startTestApp, type TestApp } from "../support/server.js";
import { sleep } from "../support/wait.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { startReceiver } from "../support/webhook-receiver.js";

/**
 * Prometheus metrics (docs/operations.md, "Metrics"): GET /metrics is not served without
 * METRICS_TOKEN, answers 401 without the right bearer token, and its exposition counts exactly the
 * traffic sent, names requests by route (never by path), and writes nothing to the database.
 */
const TOKEN = "metrics-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}` };

type Sample = { name: string; labels: Record<string, string>; value: number };

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
// values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any case; prom-client writes "Nan")
const SAMPLE = new RegExp(`^(${NAME})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\.)*",?)*)\\})? (-?(?:[0-9]+(?:\\.[0-9]*)?(?:e[+-]?[0-9]+)?|\\.[0-9]+)|[Nn]a[Nn]|[+-]Inf)$`);
const COMMENT = new RegExp(`^# (HELP ${NAME} .*|TYPE ${NAME} (counter|gauge|histogram|summary|untyped))$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\.)*)"/g;

/** The text exposition format, line by line: every line is a comment or a sample, or the test fails. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    if (line.startsWith("#")) {
      expect(line, "a comment line").toMatch(COMMENT);
      continue;
    }
    const m = SAMPLE.exec(line);
    expect(m, `a sample line: ${line}`).not.toBeNull();
    const labels: Record<string, string> = {};
    for (const l of (m![2] ?? "").matchAll(LABEL)) labels[l[1]] = l[2];
    samples.push({ name: m![1], labels, value: /^nan$/i.test(m![3]) ? NaN : Number(m![3].replace("Inf", "Infinity")) });
  }
  return samples;
}

/** The value of the one sample of `name` with these labels (0 when there is none yet). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(hits.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return hits[0]?.value ?? 0;
}

async function scrape(app: TestApp): Promise<Sample[]> {
  const r = await app.request("/metrics", { headers: auth });
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parse(await r.text());
}

/** Every row of every table of the app's database, as one digest per table. */
async function contents(app: TestApp): Promise<Record<string, string>> {
  const tables = await app.sql<{ name: string }[]>`
    select format('%I.%I', schemaname, relname) as name from pg_stat_user_tables order by 1`;
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    const [{ digest }] = await app.sql.unsafe(`select count(*) || ':' || md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${name} t`);
    out[name] = digest;
  }
  return out;
}

describe("metrics off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it("does not serve /metrics without METRICS_TOKEN, whatever the request sends", async () => {
    for (const headers of [{}, auth]) {
      const r = await app.request("/metrics", { headers });
      expect(r.status).toBe(404);
      expect(await r.text()).not.toContain("roblox_monitor_");
    }
  });

  it("refuses a token too short to be a secret or holding spaces, naming the variable; empty is unset", () => {
    const base = { NODE_ENV: "test", APP_SECRET: "x".repeat(32), NOTIFICATION_SECRET: "y".repeat(16), DATA_DIR: "/tmp/rbx-monitor-metrics-config" } as const;
    for (const METRICS_TOKEN of ["short", "sixteen chars but spaces"]) {
      expect(() => loadConfig({ ...base, METRICS_TOKEN })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, METRICS_TOKEN })).toThrow(/METRICS_TOKEN: must be at least 16 characters/);
    }
    expect(loadConfig({ ...base, METRICS_TOKEN: "" }).metricsToken).toBeUndefined();
    expect(loadConfig({ ...base, METRICS_TOKEN: TOKEN }).metricsToken).toBe(TOKEN);
  });
});

describe("metrics on", () => {
  let app: TestApp;
  let project: Awaited<ReturnType<typeof createProject>>;
  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN: TOKEN, THROTTLE_LIMIT: "3" });
    project = await createProject(app.sql, "Metrics");
  });
  afterAll(() => app?.close());

  it("answers 401 with the error body without the right bearer token", async () => {
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`, `bearer  ${TOKEN}`]) {
      const r = await app.request("/metrics", { headers: authorization === undefined ? {} : { authorization } });
      expect(r.status, String(authorization)).toBe(401);
      expect(r.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
      const body = (await r.json()) as { error: string; message: string };
      expect(body.error).toBe("unauthorized");
      expect(body.message).toContain("METRICS_TOKEN");
    }
  });

  it("serves every metric the docs list, in the exposition format", async () => {
    const samples = await scrape(app);
    const names = new Set(samples.map((s) => s.name));
    for (const name of [
      "roblox_monitor_writer_pending_events",
      "roblox_monitor_counter_drain_lag_seconds",
      "roblox_monitor_db_pool_max_connections",
      "roblox_monitor_database_up",
      "process_resident_memory_bytes",
      "nodejs_eventloop_lag_seconds",
      "nodejs_heap_size_used_bytes",
    ]) {
      expect(names, name).toContain(name);
    }
    expect(value(samples, "roblox_monitor_database_up")).toBe(1);
    expect(value(samples, "roblox_monitor_db_pool_max_connections")).toBe(app.services.config.dbPoolSize);
    // this pool's other sessions (the scrape's own is left out): the API-key cache's LISTEN connection at least
    expect(samples.filter((s) => s.name === "roblox_monitor_db_connections").reduce((n, s) => n + s.value, 0)).toBeGreaterThanOrEqual(1);
  });

  it("counts accepted, throttled and refused events exactly, from the app's own code", async () => {
    const before = await scrape(app);
    // 5 events of one issue with THROTTLE_LIMIT 3: 3 stored, 2 throttled; and 2 of two other issues
    const same = Array.from({ length: 5 }, () => ({ message: "metrics: the same error" }));
    const a = await postJson(app, "/api/ingest", { errors: same }, project.apiKey);
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ count: 5, throttled: 2 });
    const b = await postJson(app, "/api/ingest", { errors: [{ message: "metrics: other one" }, { message: "metrics: other two" }] }, project.apiKey);
    expect(b.body).toMatchObject({ count: 2, throttled: 0 });
    // refused: 2 without a valid key, 1 invalid body, 1 Sentry request without a key
    const refusals: string[] = [];
    for (const key of ["rbx_not_a_key", undefined]) {
      const r = await postJson(app, "/api/ingest", { message: "never written" }, key);
      expect(r.status).toBe(401);
      refusals.push(r.body.error);
    }
    const bad = await postJson(app, "/api/ingest", { errors: "not a list" }, project.apiKey);
    expect(bad.status).toBe(400);
    refusals.push(bad.body.error);
    const sentry = await app.request(`/api/${project.projectId}/store/`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(sentry.status).toBe(401);
    const sentryReason = ((await sentry.json()) as { error: string }).error;
    expect(refusals).toEqual(["unauthorized", "unauthorized", "invalid_payload"]);

    const after = await scrape(app);
    const delta = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(delta("roblox_monitor_ingest_events_total", { outcome: "accepted" })).toBe(5);
    expect(delta("roblox_monitor_ingest_events_total", { outcome: "throttled" })).toBe(2);
    expect(delta("roblox_monitor_ingest_events_total", { outcome: "ignored" })).toBe(0);
    expect(delta("roblox_monitor_ingest_refused_requests_total", { protocol: "native", reason: "unauthorized" })).toBe(2);
    expect(delta("roblox_monitor_ingest_refused_requests_total", { protocol: "native", reason: "invalid_payload" })).toBe(1);
    expect(delta("roblox_monitor_ingest_refused_requests_total", { protocol: "sentry", reason: sentryReason })).toBe(1);
    // the writer committed them in one or more transactions, each timed
    expect(delta("roblox_monitor_writer_transaction_seconds_count", {})).toBeGreaterThanOrEqual(1);
    // the requests themselves, by route and status
    expect(delta("roblox_monitor_http_request_duration_seconds_count", { route: "routes/api.ingest", method: "POST", status: "200" })).toBe(2);
    expect(delta("roblox_monitor_http_request_duration_seconds_count", { route: "routes/api.ingest", method: "POST", status: "401" })).toBe(2);
    expect(delta("roblox_monitor_http_request_duration_seconds_count", { route: "routes/api.ingest", method: "POST", status: "400" })).toBe(1);
  });

  it("names requests by route id or a bounded kind, never by their path", async () => {
    const { projectId } = project;
    const token = "sharetokenthatmustnotshow0123456789";
    const groupId = "00000000-0000-4000-8000-00000000abcd";
    const paths = [
      "/api/v1/errors",
      `/api/v1/errors/${groupId}`,
      `/share/${token}`,
      `/projects/${projectId}/issues`,
      `/api/no-such-endpoint/${projectId}`,
      "/assets/no-such-file.js",
    ];
    for (const p of paths) await (await app.request(p, { headers: { "x-api-key": project.apiKey } })).arrayBuffer();
    // an /api request no API route serves here (Remix answers it)
    await (await app.request(`/api/v1/errors/${groupId}`, { method: "OPTIONS" })).arrayBuffer();
    const samples = await scrape(app);
    const routes = new Set(samples.filter((s) => s.name === "roblox_monitor_http_request_duration_seconds_count").map((s) => s.labels.route));
    for (const route of routes) expect(route).toMatch(/^(routes\/[\w.$-]+|assets|api|page|metrics)$/);
    const all = samples.flatMap((s) => Object.values(s.labels)).join("\n");
    expect(all).not.toContain(projectId);
    expect(all).not.toContain(groupId);
    expect(all).not.toContain(token);
    expect(all).not.toContain(project.apiKey);
    expect(routes).toContain("routes/api.v1.errors");
    expect(routes).toContain("routes/api.v1.errors.$groupId");
    // an unknown API path is the catch-all API route's
    expect(routes).toContain("routes/api.$");
    expect(routes).toContain("page");
    expect(routes).toContain("api");
    expect(routes).toContain("assets");
    expect(routes).toContain("metrics");
  });

  it("writes nothing to the database when scraped", async () => {
    // nothing pending for the drain, which would write
    for (let i = 0; i < 200 && (await app.sql`select 1 from counter_deltas limit 1`).length > 0; i++) await sleep(50);
    const before = await contents(app);
    // a scraper that reads the database on every scrape, as the endpoint does every few seconds
    const scrapeFresh = metricsScraper({ sql: app.sql, writer: app.services.writer }, { maxAgeMs: 0 });
    for (let i = 0; i < 3; i++) expect(parse(await scrapeFresh()).length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) await scrape(app);
    expect(await contents(app)).toEqual(before);
  });

  it("reports the age of the oldest pending counter row as the drain lag", async () => {
    const scrapeFresh = metricsScraper({ sql: app.sql, writer: app.services.writer }, { maxAgeMs: 0 });
    for (let i = 0; i < 200 && (await app.sql`select 1 from counter_deltas limit 1`).length > 0; i++) await sleep(50);
    expect(value(parse(await scrapeFresh()), "roblox_monitor_counter_drain_lag_seconds")).toBe(0);
    // no drain runs while this holds its lock
    const drain = await holdDrain(app.sql);
    try {
      expect((await postJson(app, "/api/ingest", { message: "metrics: lagging" }, project.apiKey)).status).toBe(200);
      await app.sql`update counter_deltas set created_at = now() - interval '60 seconds'`;
      const lag = value(parse(await scrapeFresh()), "roblox_monitor_counter_drain_lag_seconds");
      expect(lag).toBeGreaterThanOrEqual(60);
      expect(lag).toBeLessThan(3600);
    } finally {
      await drain.release();
    }
  });
});

describe("a database that does not answer", () => {
  it("gives no figure it could not read, says so, and still serves the process's own", async () => {
    // nothing listens on port 1: every connection is refused at once
    const sql = createSql("postgres://postgres@127.0.0.1:1/none", 1, { connectTimeoutSeconds: 1 });
    try {
      const samples = parse(await metricsScraper({ sql, writer: { pendingEvents: 7 } }, { maxAgeMs: 0 })());
      expect(value(samples, "roblox_monitor_database_up")).toBe(0);
      expect(value(samples, "roblox_monitor_counter_drain_lag_seconds")).toBeNaN();
      expect(samples.some((s) => s.name === "roblox_monitor_db_connections")).toBe(false);
      expect(value(samples, "roblox_monitor_writer_pending_events")).toBe(7);
      expect(value(samples, "roblox_monitor_db_pool_max_connections")).toBe(1);
    } finally {
      await sql.end({ timeout: 0 });
    }
  });
});

describe("jobs and alerts", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ METRICS_TOKEN: TOKEN, JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" });
  });
  afterAll(() => app?.close());

  it("counts each queue's jobs by state, failed ones included", async () => {
    // two jobs failed for good in a queue of this release (pg-boss keeps them until it archives them)
    await app.sql`
      insert into pgboss.job (name, state, completed_on, data)
      select 'retention', 'failed', now(), '{}'::jsonb from generate_series(1, 2)`;
    const scrapeFresh = metricsScraper({ sql: app.sql, writer: app.services.writer }, { maxAgeMs: 0 });
    const samples = parse(await scrapeFresh());
    expect(value(samples, "roblox_monitor_jobs", { queue: "retention", state: "failed" })).toBe(2);
    // and the endpoint serves the same series
    expect(value(await scrape(app), "roblox_monitor_jobs", { queue: "retention", state: "failed" })).toBe(2);
  });

  it("counts alert deliveries by channel kind and outcome", async () => {
    const owner = await makeUser(app.sql);
    const cookie = await login(app, owner.email);
    const { projectId } = await makeProject(app.sql, owner.id);
    const receiver = await startReceiver();
    const gone = await startReceiver();
    gone.close();
    const channel = async (url: string) =>
      (await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "Hook", kind: "webhook", url } })).body.channel.id as string;
    const up = await channel(receiver.url);
    const down = await channel(gone.url);
    const before = await scrape(app);
    for (const id of [up, up, down]) await call(app, "POST", "/api/notifications/test", { cookie, body: { channel_id: id } });
    receiver.close();
    expect(receiver.got.length).toBe(2);
    const after = await scrape(app);
    const delta = (outcome: string) =>
      value(after, "roblox_monitor_alert_deliveries_total", { channel: "webhook", outcome }) - value(before, "roblox_monitor_alert_deliveries_total", { channel: "webhook", outcome });
    expect(delta("sent")).toBe(2);
    expect(delta("failed")).toBe(1);
  });
});
