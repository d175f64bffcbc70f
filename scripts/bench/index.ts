/**
 * `npm run bench`: one end-to-end performance report on a fresh database.
 *
 * A fresh database (`bench_<stamp>` on BENCH_DATABASE_URL, or an embedded PostgreSQL under
 * ./data/bench-<pid>), the service as a child process (`tsx server.ts`), autocannon as the load client
 * in this process. Prints a table with the targets and writes the same as JSON under bench-results/.
 * Exits 0 on MISS (it is a report); non-zero only when something crashes.
 *
 * Env: BENCH_DATABASE_URL, BENCH_EVENTS (default 1,000,000 raw events for the query phase),
 * BENCH_LOAD_SECONDS (time cap on loading them, default 210), BENCH_DURATION (s per ingest scenario, 10),
 * BENCH_KEEP=1 (leave the database on BENCH_DATABASE_URL in place for inspection),
 * BENCH_SQL_EVENTS (raw events generated in SQL for the large query scenario (g), default 1,000,000;
 * 10,000,000 takes tens of minutes on a small machine), BENCH_ECONOMY_HISTORY (history rows for (h),
 * default 1,000,000), BENCH_SCENARIOS (comma list of: ingest, http-queries, sql-queries, economy; default all),
 * BENCH_CPU_PROF=<dir> (the service writes a V8 CPU profile there when it stops), BENCH_SENTRY_NEW_ISSUES
 * (the service's SENTRY_MAX_NEW_ISSUES_PER_MINUTE, default 1,000,000: (s) measures issues that exist).
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import autocannon from "autocannon";
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.js";
import { startEmbeddedPostgres } from "../../db/embedded.js";
import { loadConfig } from "../../app/env.server.js";
import { seal, maskUrl } from "../../app/alerts/seal.server.js";
import { FakeDiscord } from "../../test/support/fake-discord.js";
import { ECONOMY_BENCH_MAP, economyPushBody } from "./economy-push.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { generateEconomy, generateEvents, generateGroups } from "./sql-data.js";
import { groupEvent } from "../../app/ingest/fingerprint.server.js";
import { CORPUS } from "../../test/support/grouping-corpus.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const envInt = (name: string, def: number) => (process.env[name] ? Math.max(1, Number.parseInt(process.env[name]!, 10) || def) : def);
const DURATION = envInt("BENCH_DURATION", 10);
const QUERY_DURATION = 5;
const CONNECTIONS = 50;
const TARGET_EVENTS = envInt("BENCH_EVENTS", 1_000_000);
const LOAD_SECONDS = envInt("BENCH_LOAD_SECONDS", 210);
const SQL_EVENTS = envInt("BENCH_SQL_EVENTS", 1_000_000);
const ECONOMY_HISTORY = envInt("BENCH_ECONOMY_HISTORY", 1_000_000);
const ECONOMY_PLAYERS = 10_000;
const SEARCH_GROUPS = 100_000;
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? "ingest,http-queries,sql-queries,economy").split(",").map((s) => s.trim()));
const LOAD_CLIENTS = 8;
const RAW_WRITERS = 8;
const FINGERPRINTS = 1000;
const USERS = 5000;
const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
const outDir = path.join(root, "bench-results");
const workDir = path.join(root, "data", `bench-${process.pid}`);
const tsx = path.join(root, "node_modules/.bin/tsx");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---------------------------------------------------------------- events

const LEVELS = ["error", "error", "error", "warn", "info"];
const ENVS = ["production", "production", "production", "production", "staging", "dev"];
const TEXTS = [
  "attempt to index nil with 'Damage'",
  "attempt to perform arithmetic (add) on nil and number",
  "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'",
  "HTTP 429 (Too Many Requests)",
];
const SEARCH = "Damage"; // matches a quarter of the fingerprints
const pick = <T>(a: T[]) => a[Math.floor(Math.random() * a.length)];

/** One event; `script:line` decides the fingerprint (both are kept by normalization), `k` picks the text. */
function event(script: string, line: number, k: number, traceId?: string) {
  const userId = 1 + Math.floor(Math.random() * USERS);
  return {
    message: `ServerScriptService.${script}:${line}: ${TEXTS[k % TEXTS.length]}`,
    stack_trace: `ServerScriptService.${script}:${line} function run\nServerScriptService.Main:5\nStack End`,
    level: pick(LEVELS),
    environment: pick(ENVS),
    user_id: userId,
    player_name: `Player${userId}`,
    game_version: "1.4.2",
    ...(traceId ? { trace_id: traceId } : {}),
  };
}
const batch = (make: (i: number) => object) => JSON.stringify({ errors: Array.from({ length: 100 }, (_, i) => make(i)) });

// ---------------------------------------------------------------- measuring

type Measured = { rps: number; ok: number; p50: number; p99: number; non2xx: number; errors: number; timeouts: number; codes: Record<string, number> };

/** The event of `event()` as a Sentry SDK sends it (exception with frames, user, tags, release); EVENT_ID is filled per request. */
function sentryEvent(script: string, line: number, k: number) {
  const userId = 1 + Math.floor(Math.random() * USERS);
  return JSON.stringify({
    event_id: "EVENT_ID",
    timestamp: Date.now() / 1000,
    platform: "other",
    level: pick(["error", "warning", "info"]),
    environment: pick(ENVS),
    release: "1.4.2",
    user: { id: String(userId), username: `Player${userId}` },
    tags: { realm: "server" },
    exception: {
      values: [{
        type: "Error",
        value: `ServerScriptService.${script}:${line}: ${TEXTS[k % TEXTS.length]}`,
        stacktrace: { frames: [{ filename: "ServerScriptService.Main", lineno: 5 }, { filename: `ServerScriptService.${script}`, lineno: line, function: "run" }] },
      }],
    },
    sdk: { name: "sentry.roblox", version: "1.0.0" },
  });
}

function percentile(sorted: number[], p: number) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** Runs autocannon; latencies are taken (in float ms) from each 2xx response, not autocannon's 1 ms histogram. */
function cannon(opts: { url: string; path: string; key?: string; body?: () => string; seconds: number; connections: number }): Promise<Measured> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(opts.key ? { "x-api-key": opts.key } : {}) };
  const request = opts.body
    ? { method: "POST" as const, path: opts.path, headers, setupRequest: (r: autocannon.Request) => ({ ...r, body: opts.body!() }) }
    : { method: "GET" as const, path: opts.path, headers };
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const inst = autocannon(
      { url: opts.url, connections: opts.connections, pipelining: 1, duration: opts.seconds, timeout: 30, requests: [request] },
      (err, r) => {
        if (err) return reject(err);
        latencies.sort((a, b) => a - b);
        const codes = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([c, v]) => [c, (v as { count: number }).count]));
        resolve({ rps: r["2xx"] / r.duration, ok: r["2xx"], p50: percentile(latencies, 50), p99: percentile(latencies, 99), non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts, codes });
      },
    );
    // the emitted arguments are (client, status, bytes, ms); @types/autocannon leaves out the client
    (inst as unknown as NodeJS.EventEmitter).on("response", (_c: unknown, status: number, _b: number, ms: number) => {
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

/** (d2-ceiling): the same rows the service stores for (d2), as plain 100-row INSERTs from several writers. */
async function rawInsert(sql: Sql, projectId: string, seconds: number) {
  let rows = 0;
  let line = 0;
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const writer = async () => {
    while (performance.now() < deadline) {
      const chunk = Array.from({ length: 100 }, () => {
        const e = event("RawInsert", ++line, 0);
        return {
          project_id: projectId, group_id: randomUUID(), message: e.message, level: e.level, stack_trace: e.stack_trace,
          user_id: e.user_id, player_name: e.player_name, trace_id: null, job_id: null, place_id: null, game_version: e.game_version,
          environment: e.environment, context: null, tags: null, count: 1, timestamp: new Date(),
        };
      });
      await sql`insert into events ${sql(chunk)}`;
      rows += chunk.length;
    }
  };
  await Promise.all(Array.from({ length: RAW_WRITERS }, writer));
  return { rowsPerSec: rows / ((performance.now() - started) / 1000), rows };
}

/** Loads traced events (always stored) for the query project until `target` are sent or time runs out. */
async function load(url: string, key: string, from: number, target: number, maxSeconds: number) {
  let sent = from;
  let failures = 0;
  let firstFailure = "";
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  let lastReport = started;
  const client = async () => {
    while (sent < target && performance.now() < deadline && failures < 20) {
      const base = sent;
      const n = Math.min(100, target - sent);
      sent += n;
      let trace = randomUUID();
      const errors = Array.from({ length: n }, (_, i) => {
        if ((base + i) % 10 === 0) trace = randomUUID();
        const k = (base + i) % FINGERPRINTS;
        return event(`Game${k}`, 10 + (k % 7), k, trace);
      });
      const res = await fetch(`${url}/api/ingest`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify({ errors }) });
      const text = await res.text();
      if (res.status !== 200) {
        failures++;
        sent -= n;
        firstFailure ||= `${res.status} ${text.slice(0, 200)}`;
      }
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        log(`  loaded ${sent.toLocaleString()} / ${target.toLocaleString()} (${Math.round((sent - from) / ((lastReport - started) / 1000)).toLocaleString()} events/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, client));
  const seconds = (performance.now() - started) / 1000;
  if (failures) log(`  load failures: ${failures}, first: ${firstFailure}`);
  return { sent, seconds, rate: (sent - from) / seconds, failures, firstFailure };
}

const QUERIES = [
  { name: "errors raw first page", path: "/api/v1/errors", target: true },
  { name: "errors grouped first page", path: "/api/v1/errors?grouped=true", target: true },
  ...["1h", "24h", "7d", "30d"].map((t) => ({ name: `stats ${t}`, path: `/api/v1/stats?timeframe=${t}`, target: true })),
  // last: a search counts its matches by scanning, and must not leave work behind for the targeted queries
  { name: "errors raw search", path: `/api/v1/errors?search=${SEARCH}`, target: false },
  { name: "errors grouped search", path: `/api/v1/errors?grouped=true&search=${SEARCH}`, target: false },
];

/**
 * Waits (at most a minute) until no statement has run in the bench database for a second, so phases do
 * not overlap: requests a load client gave up on may still be queued in the server's writer.
 */
async function quiesce(sql: Sql) {
  let idle = 0;
  for (const until = performance.now() + 60_000; performance.now() < until; await sleep(250)) {
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state in ('active', 'idle in transaction') and pid <> pg_backend_pid() and backend_type = 'client backend'`;
    idle = n === 0 ? idle + 1 : 0;
    if (idle >= 4) return;
  }
  log("warning: statements still running in the database after 60 s");
}

async function queries(url: string, key: string, sql: Sql) {
  const out: Record<string, Measured> = {};
  for (const q of QUERIES) {
    await quiesce(sql);
    out[q.name] = await cannon({ url, path: q.path, key, seconds: QUERY_DURATION, connections: 10 });
    log(`  ${q.name}: p50 ${out[q.name].p50.toFixed(2)} ms, p99 ${out[q.name].p99.toFixed(2)} ms, ${out[q.name].rps.toFixed(0)} req/s`);
  }
  return out;
}

// ---------------------------------------------------------------- CPU per event

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** CPU time (user + system) a process has used so far, in µs; 0 when it is gone. */
function cpuMicros(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK;
  } catch {
    return 0;
  }
}

/**
 * The PostgreSQL processes whose CPU a scenario is charged: on the embedded server all of them
 * (backends, WAL writer, checkpointer, autovacuum); on a shared BENCH_DATABASE_URL server only the
 * backends connected to the bench database (others' work on that server is not ours).
 */
async function postgresPids(sql: Sql, embedded: boolean): Promise<number[]> {
  const rows = embedded
    ? await sql<{ pid: number }[]>`select pid from pg_stat_activity`
    : await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database()`;
  return rows.map((r) => r.pid);
}

type Cpu = { nodeUs: number; postgresUs: number };

/**
 * Runs `fn` and measures the CPU the service process and PostgreSQL spent meanwhile (from /proc, so the
 * load generator in this process is not counted). A backend that exits during the run takes its CPU
 * with it; the service's pool keeps its connections, so that is rare and only undercounts.
 */
async function withCpu<T>(servicePid: number, sql: Sql, embedded: boolean, fn: () => Promise<T>): Promise<T & { cpu: Cpu }> {
  const before = new Map((await postgresPids(sql, embedded)).map((pid) => [pid, cpuMicros(pid)]));
  const nodeBefore = cpuMicros(servicePid);
  const result = await fn();
  const nodeUs = cpuMicros(servicePid) - nodeBefore;
  let postgresUs = 0;
  for (const pid of new Set([...before.keys(), ...(await postgresPids(sql, embedded))])) {
    const now = cpuMicros(pid);
    if (now > 0) postgresUs += now - (before.get(pid) ?? 0);
  }
  return { ...result, cpu: { nodeUs, postgresUs } };
}

// ---------------------------------------------------------------- environment

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A new database on BENCH_DATABASE_URL or on a fresh embedded server; `drop` removes all of it. */
async function freshDatabase() {
  mkdirSync(workDir, { recursive: true });
  const embedded = process.env.BENCH_DATABASE_URL ? null : await startEmbeddedPostgres(workDir, 54339);
  const serverUrl = process.env.BENCH_DATABASE_URL ?? embedded!.url;
  const name = `bench_${stamp}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${name}`);
  } catch (err) {
    await admin.end({ timeout: 5 });
    await embedded?.stop();
    rmSync(workDir, { recursive: true, force: true });
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const keep = Boolean(process.env.BENCH_KEEP) && !embedded;
  const drop = async () => {
    if (keep) log(`BENCH_KEEP: database ${name} left in place`);
    else await admin.unsafe(`drop database if exists ${name} with (force)`).catch((e) => log(`drop database failed: ${e.message}`));
    await admin.end({ timeout: 5 });
    await embedded?.stop().catch((e) => log(`embedded stop failed: ${e}`));
    rmSync(workDir, { recursive: true, force: true });
  };
  return { url: url.toString(), name, embedded: Boolean(embedded), drop };
}

function childEnv(databaseUrl: string, port = 0): NodeJS.ProcessEnv {
  return {
    // (s) opens its 1,000 issues within seconds, past the default bound of new issues per minute: the
    // bench measures the steady state, where they exist (BENCH_SENTRY_NEW_ISSUES sets it, e.g. 100)
    SENTRY_MAX_NEW_ISSUES_PER_MINUTE: process.env.BENCH_SENTRY_NEW_ISSUES ?? "1000000",
    ...process.env,
    NODE_ENV: "production" as const, DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1", JOBS_ENABLED: "true", DATA_DIR: workDir, LOG_REQUESTS: "", WEBHOOK_ALLOW_PRIVATE: "true",
  };
}

async function startService(databaseUrl: string, logFile: string) {
  const port = await freePort();
  const out = createWriteStream(logFile);
  // as `npm start` runs it: node with tsx's loader (the tsx CLI's wrapper costs the API a large share of its throughput)
  // BENCH_CPU_PROF=<dir>: the service writes a V8 CPU profile there when it stops
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(process.env.BENCH_CPU_PROF)] : [];
  const child = spawn(process.execPath, [...prof, "--import", "tsx", "server.ts"], { cwd: root, env: childEnv(databaseUrl, port), stdio: ["ignore", "pipe", "pipe"] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  child.once("exit", (code, signal) => log(`server exited (code ${code}, signal ${signal})`));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}; see ${logFile}`);
    const ok = await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false);
    if (ok) return { url, child };
    await sleep(500);
  }
  throw new Error(`server did not answer GET /api/ingest within 60 s; see ${logFile}`);
}

async function stopService(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  if (!(await Promise.race([exited.then(() => true), sleep(20_000).then(() => false)]))) child.kill("SIGKILL");
}

/** (a0): plain Express with one no-op route, as a child process like the service. */
async function startNoop() {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/bench/noop-server.ts", String(port)], { cwd: root, env: { ...process.env, NODE_ENV: "production" }, stdio: "ignore" });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)) return { url, child };
    await sleep(250);
  }
  child.kill("SIGKILL");
  throw new Error("the no-op Express server did not start");
}

async function createProject(databaseUrl: string, name: string): Promise<{ project_id: string; api_key: string }> {
  const { stdout } = await promisify(execFile)(tsx, ["scripts/cli.ts", "project:create", "--name", name], { cwd: root, env: childEnv(databaseUrl) });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

// ---------------------------------------------------------------- report

/**
 * (g) What grouping costs an event, as the ingest computes it (fingerprint and culprit), in this
 * process, over the benchmark's events and the grouping corpus: for texts seen recently (the
 * analysis is kept for recent texts, as in a storm or the repeated events of (b)-(d)), and for texts
 * never seen before, whose previous-version fingerprint is computed too (a fingerprint's first
 * sighting). Repeated for about a second each; microseconds per event.
 */
function groupingCost(): { usPerEvent: number; firstSightingUs: number; events: number } {
  const sample = [
    ...Array.from({ length: 200 }, (_, k) => event(`Single${k}`, 10 + (k % 7), k)),
    ...CORPUS.map((c) => ({ message: c.message, stack_trace: c.stack, player_name: c.player, user_id: c.userId })),
  ];
  let unique = 0;
  const run = (fresh: boolean) => {
    let events = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0n;
    while (elapsed < 1_000_000_000n) {
      for (const e of sample) {
        const message = fresh ? `${e.message} (${++unique})` : e.message;
        groupEvent(message, e.stack_trace, null, e.player_name, () => fresh, e.user_id);
      }
      events += sample.length;
      elapsed = process.hrtime.bigint() - start;
    }
    return { us: Number(elapsed) / 1000 / events, events };
  };
  run(false); // warm-up
  const repeated = run(false);
  const first = run(true);
  return { usPerEvent: repeated.us, firstSightingUs: first.us, events: repeated.events + first.events };
}

type Row = { scenario: string; figure: string; detail: string; ratio: string; target: string; result: "PASS" | "MISS" | "" };
const fmt = (n: number, d = 0) => (!Number.isFinite(n) ? "n/a" : n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
const health = (m: Measured) => `p50 ${fmt(m.p50, 1)} / p99 ${fmt(m.p99, 1)} ms, non2xx ${m.non2xx}, errors ${m.errors}`;

/** CPU µs per answered event of a scenario (each request carries `size` events). */
function cpuPerEvent(m: Measured & { cpu: Cpu }, size: number) {
  const events = m.ok * size;
  const node = m.cpu.nodeUs / events;
  const postgres = m.cpu.postgresUs / events;
  return { node, postgres, total: node + postgres, events };
}

function cpuRow(name: string, m: Measured & { cpu: Cpu }, size: number, targeted: boolean): Row {
  const c = cpuPerEvent(m, size);
  return {
    scenario: `${name} CPU per event`,
    figure: `${fmt(c.total, 1)} µs/event`,
    detail: `Node ${fmt(c.node, 1)} + PostgreSQL ${fmt(c.postgres, 1)} µs over ${fmt(c.events)} events`,
    ratio: `${fmt(c.node / c.total, 2)} Node`,
    target: targeted ? "<= 50 µs/event" : "(reported)",
    result: targeted ? verdict(c.total <= 50) : "",
  };
}

function printTable(rows: Row[]) {
  const cols = ["scenario", "figure", "detail", "ratio", "target", "result"] as const;
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...rows.map((r) => r[c].length))]));
  const line = (r: Record<string, string>) => cols.map((c) => r[c].padEnd(width[c])).join("  ");
  console.log(`\n${line(Object.fromEntries(cols.map((c) => [c, c])))}\n${cols.map((c) => "-".repeat(width[c])).join("  ")}`);
  for (const r of rows) console.log(line(r));
}

// ---------------------------------------------------------------- main

async function main() {
  mkdirSync(outDir, { recursive: true });
  const serverLog = path.join(outDir, `server-${stamp}.log`);
  const db = await freshDatabase();
  let child: ChildProcess | undefined;
  let sql: Sql | undefined;
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    if (child) await stopService(child);
    await sql?.end({ timeout: 5 });
    await db.drop();
  };
  process.once("SIGINT", () => void cleanup().finally(() => process.exit(130)));
  const loadBefore = loadavg()[0];
  if (loadBefore > 0.5) log(`warning: 1-min load average is ${loadBefore.toFixed(2)} before the run; other work on this machine skews the figures`);
  try {
    log(`database ${db.name} (${db.embedded ? "embedded PostgreSQL" : "BENCH_DATABASE_URL"}); server log ${serverLog}`);
    const service = await startService(db.url, serverLog);
    child = service.child;
    const url = service.url;
    sql = createSql(db.url, RAW_WRITERS);
    const ingestProject = await createProject(db.url, "bench-ingest");
    const queryProject = await createProject(db.url, "bench-queries");
    const settings = Object.fromEntries(
      (await sql<{ name: string; setting: string }[]>`select name, setting from pg_settings
        where name in ('server_version', 'autovacuum', 'synchronous_commit', 'fsync', 'shared_buffers', 'max_connections')`).map((r) => [r.name, r.setting]),
    );
    log(`PostgreSQL ${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(" ")}`);
    if (settings.autovacuum === "off") log("warning: autovacuum is off on this server; hot rows (groups, users, rollups) bloat until the explicit vacuum");
    const cpu = <T>(fn: () => Promise<T>) => withCpu(child!.pid!, sql!, db.embedded, fn);
    const ingest = (body: () => string) => cannon({ url, path: "/api/ingest", key: ingestProject.api_key, body, seconds: DURATION, connections: CONNECTIONS });
    let n = 0;
    /** One phase: logs it, runs it, and fails the run if the server died meanwhile. */
    const step = async <T>(title: string, fn: () => Promise<T>): Promise<T> => {
      log(title);
      const result = await fn();
      if (child!.exitCode !== null || child!.signalCode !== null) {
        throw new Error(`the server died during "${title}" (code ${child!.exitCode}, signal ${child!.signalCode}); see ${serverLog}`);
      }
      await sleep(500);
      await quiesce(sql!); // let the server's writes drain before the next phase
      return result;
    };
    const count = async () => Number((await sql!`select count(*)::bigint as n from events where project_id = ${queryProject.project_id}`)[0].n);
    /** Records the dead rows the load left behind, then vacuums: queries are measured in the steady state autovacuum keeps. */
    const settle = async () => {
      const tables = await sql!<{ relname: string; live: number; dead: number }[]>`select relname, n_live_tup::int as live, n_dead_tup::int as dead
        from pg_stat_user_tables where relname in ('events', 'error_groups', 'project_users', 'rollup_minute') order by relname`;
      log(`  before vacuum: ${tables.map((t) => `${t.relname} ${fmt(t.live)} live / ${fmt(t.dead)} dead`).join(", ")}`);
      await sql!`vacuum analyze`;
      return tables;
    };

    const warm = JSON.stringify(event("Warmup", 10, 0));
    await step("warm-up (not measured): GET and POST /api/ingest, 3 s each", async () => {
      await cannon({ url, path: "/api/ingest", seconds: 3, connections: 10 });
      await cannon({ url, path: "/api/ingest", key: ingestProject.api_key, body: () => warm, seconds: 3, connections: 10 });
    });
    // (a) and (a0) alternate, twice each, and each keeps its better run: load from outside the bench
    // then skews both alike instead of whichever happened to run during it
    const grouping = groupingCost();
    log(`  grouping: ${fmt(grouping.usPerEvent, 1)} µs per event (${fmt(grouping.firstSightingUs, 1)} µs for a text never seen)`);
    const noopServer = await startNoop();
    await cannon({ url: noopServer.url, path: "/api/ingest", seconds: 3, connections: 10 });
    const better = (x: Measured, y: Measured) => (x.rps >= y.rps ? x : y);
    let ceiling: Measured | undefined;
    let noop: Measured | undefined;
    for (let round = 1; round <= 2; round++) {
      const c = await step(`(a) ceiling: GET /api/ingest (${round}/2)`, () => cannon({ url, path: "/api/ingest", seconds: DURATION, connections: CONNECTIONS }));
      const o = await step(`(a0) plain Express, one no-op route (${round}/2)`, () => cannon({ url: noopServer.url, path: "/api/ingest", seconds: DURATION, connections: CONNECTIONS }));
      log(`  ${fmt(c.rps)} vs ${fmt(o.rps)} req/s`);
      ceiling = ceiling ? better(ceiling, c) : c;
      noop = noop ? better(noop, o) : o;
    }
    noopServer.child.kill("SIGTERM");
    if (!ceiling || !noop) throw new Error("no ceiling measured");
    const rows: Row[] = [
      { scenario: "(a0) plain Express no-op route", figure: `${fmt(noop.rps)} req/s`, detail: health(noop), ratio: "", target: "", result: "" },
      { scenario: "(a) ceiling GET /api/ingest", figure: `${fmt(ceiling.rps)} req/s`, detail: health(ceiling), ratio: `${fmt(ceiling.rps / noop.rps, 2)} of (a0)`, target: ">= 0.6 of (a0)", result: verdict(ceiling.rps / noop.rps >= 0.6) },
    ];
    const results: Record<string, unknown> = { grouping, ceiling, noop };
    /** Rows comparing each query's latency at a small and a large size, measured in this run. */
    const compare = (prefix: string, names: string[], a: Record<string, Measured>, b: Record<string, Measured>, targeted: (name: string) => boolean) => {
      for (const name of names) {
        const x = a[name];
        const y = b[name];
        const r50 = y.p50 / x.p50;
        const r99 = y.p99 / x.p99;
        const bad = x.non2xx + x.errors + y.non2xx + y.errors;
        const target = targeted(name);
        rows.push({
          scenario: `${prefix} ${name}`,
          figure: `p50 ${fmt(x.p50, 1)} -> ${fmt(y.p50, 1)} ms`,
          detail: `p99 ${fmt(x.p99, 1)} -> ${fmt(y.p99, 1)} ms, ${fmt(x.ok)} -> ${fmt(y.ok)} answered${bad ? `, non2xx/errors ${bad}` : ""}`,
          ratio: `${fmt(r50, 2)} / ${fmt(r99, 2)}`,
          target: target ? "<= 1.5x (p50 / p99)" : "(none)",
          result: target ? verdict(r50 <= 1.5 && r99 <= 1.5 && bad === 0) : "",
        });
      }
    };
    const measure = async (key: string, qs: { name: string; path: string }[]) => {
      const out: Record<string, Measured> = {};
      for (const q of qs) {
        await quiesce(sql!);
        out[q.name] = await cannon({ url, path: q.path, key, seconds: QUERY_DURATION, connections: 10 });
        log(`  ${q.name}: p50 ${out[q.name].p50.toFixed(2)} ms, p99 ${out[q.name].p99.toFixed(2)} ms, ${out[q.name].rps.toFixed(0)} req/s`);
      }
      return out;
    };

    let small = 0;
    let q10k: Record<string, Measured> | undefined;
    if (SCENARIOS.has("http-queries")) {
      await step("(e) loading 10,000 raw events for the query project", () => load(url, queryProject.api_key, 0, 10_000, 120));
      results.bloatSmall = await settle();
      small = await count();
      q10k = await step(`(e) queries at ${fmt(small)} raw events`, () => queries(url, queryProject.api_key, sql!));
    }

    if (SCENARIOS.has("ingest")) {
      const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Single${k}`, 10, k)));
      // (b0) the bound of a POST that writes nothing: the same bodies, refused by validation (a level
      // no event may have) after the key check, the body read, the JSON parse and the schema ran
      const refusedBodies = singles.map((b) => b.replace(/"level":"\w+"/, '"level":"fatal"'));
      const refused = await step("(b0) the same single events, refused after validation (nothing written)", () =>
        ingest(() => refusedBodies[n++ % FINGERPRINTS]),
      );
      const refusedRps = (refused.codes["400"] ?? 0) / DURATION;
      const single = await step("(b) single events over 1,000 fingerprints", () => cpu(() => ingest(() => singles[n++ % FINGERPRINTS])));

      // (s) the same single events as Sentry envelopes (one event each, a fresh event_id per request, as SDKs send them)
      const sentryKey = randomBytes(16).toString("hex");
      // the key's per-minute limit is set past what the run can send: its check still runs on every request
      const [{ dsn_id: dsnId }] = await sql<{ dsn_id: string }[]>`with k as (insert into dsn_keys (project_id, public_key, name, rate_limit_per_minute)
        values (${ingestProject.project_id}, ${sentryKey}, 'bench', 100000000)) select dsn_id::text from projects where id = ${ingestProject.project_id}`;
      const sentryEvents = Array.from({ length: FINGERPRINTS }, (_, k) => sentryEvent(`Single${k}`, 10, k));
      const sentry = await step("(s) Sentry envelopes of one event, 1,000 fingerprints", () =>
        cannon({
          url,
          path: `/api/${dsnId}/envelope/?sentry_key=${sentryKey}`,
          body: () => {
            const id = randomBytes(16).toString("hex");
            return `{"event_id":"${id}","sent_at":"${new Date().toISOString()}"}\n{"type":"event"}\n${sentryEvents[n++ % FINGERPRINTS].replace("EVENT_ID", id)}\n`;
          },
          seconds: DURATION,
          connections: CONNECTIONS,
        }),
      );

      const stormBodies = Array.from({ length: 100 }, () => JSON.stringify(event("Storm", 10, 0)));
      const storm = await step("(c) storm: single events, one fingerprint", () => cpu(() => ingest(() => stormBodies[n++ % stormBodies.length])));

      // (c-alerts) the same storm once the project has a new_group and a frequency rule on a (fake) Discord channel
      const discord = await new FakeDiscord().start();
      const hook = discord.webhookUrl();
      const { appSecret } = loadConfig(childEnv(db.url));
      const pid = ingestProject.project_id;
      const [channel] = await sql<{ id: string }[]>`insert into alert_channels (project_id, name, kind, url_sealed, url_hint)
        values (${pid}, 'bench', 'discord', ${seal(appSecret, pid, hook)}, ${maskUrl(hook)}) returning id`;
      await sql`insert into alert_rules (project_id, name, trigger, threshold_count, window_minutes, channel_ids) values
        (${pid}, 'new', 'new_group', null, null, ${[channel.id]}::uuid[]), (${pid}, 'spike', 'frequency', 1000, 10, ${[channel.id]}::uuid[])`;
      await sleep(6000); // the server's per-project "has rules" cache lives 5 s
      const jobsBefore = Number((await sql`select count(*)::int as n from pgboss.job where name = 'alerts'`)[0].n);
      const stormAlerts = await step("(c-alerts) storm with alert rules enabled", () => ingest(() => stormBodies[n++ % stormBodies.length]));
      const alertJobs = Number((await sql`select count(*)::int as n from pgboss.job where name = 'alerts'`)[0].n) - jobsBefore;
      log(`  ${alertJobs} alert jobs, ${discord.messages.length} Discord message(s) during the run`);
      await sql`update alert_rules set enabled = false where project_id = ${pid}`; // the later scenarios run without alerts
      await discord.close();

      const batches = Array.from({ length: 50 }, (_, b) => batch((i) => event(`Batch${(b * 100 + i) % FINGERPRINTS}`, 10, b * 100 + i)));
      const batched = await step("(d) batches of 100 over 1,000 fingerprints", () => cpu(() => ingest(() => batches[n++ % batches.length])));

      let line = 0;
      const stored = await step("(d2) batches of 100, every event a new fingerprint (all stored)", () => cpu(() => ingest(() => batch(() => event("Fresh", ++line, 0)))));
      const raw = await step("(d2-ceiling) raw 100-row INSERTs into events", () => rawInsert(sql!, ingestProject.project_id, DURATION));
      // (f) reads each profile through a five-currency map with wildcards
      await putEconomyMap(sql, ingestProject.project_id, ECONOMY_BENCH_MAP, null);
      const push = await step("(f) economy push through a 5-currency map: POST /api/economy/ingest, 100 players per request", () =>
        cannon({ url, path: "/api/economy/ingest", key: ingestProject.api_key, body: () => economyPushBody(), seconds: DURATION, connections: CONNECTIONS }),
      );
      const [d2Check] = await sql`select coalesce(sum(stored_count), 0)::bigint as stored, coalesce(sum(count), 0)::bigint as occurrences
        from error_groups where project_id = ${ingestProject.project_id} and culprit = 'ServerScriptService.Fresh'`;
      console.log(`(d2) check: ${d2Check.stored} of ${d2Check.occurrences} events stored as rows.`);
      rows.push(
        {
          scenario: "(b0) POST refused by validation",
          figure: `${fmt(refusedRps)} req/s`,
          detail: `${refused.codes["400"] ?? 0} answered 400, ${refused.ok} 2xx, ${refused.errors} errors; (b) ${fmt(single.rps / refusedRps, 2)} and (c) ${fmt(storm.rps / refusedRps, 2)} of it`,
          ratio: fmt(refusedRps / ceiling.rps, 2),
          target: "(bound of (b), (c): reported)",
          result: "",
        },
        { scenario: "(b) single event, 1k fingerprints", figure: `${fmt(single.rps)} req/s`, detail: health(single), ratio: fmt(single.rps / ceiling.rps, 2), target: ">= 0.6 of (a)", result: verdict(single.rps / ceiling.rps >= 0.6) },
        { scenario: "(s) Sentry envelope, 1 event, 1k fingerprints", figure: `${fmt(sentry.rps)} req/s`, detail: health(sentry), ratio: fmt(sentry.rps / single.rps, 2), target: ">= 0.8 of (b)", result: verdict(sentry.rps / single.rps >= 0.8) },
        { scenario: "(c) storm, 1 fingerprint", figure: `${fmt(storm.rps)} req/s`, detail: health(storm), ratio: fmt(storm.rps / ceiling.rps, 2), target: ">= 0.6 of (a), 0 errors", result: verdict(storm.rps / ceiling.rps >= 0.6 && storm.non2xx + storm.errors === 0) },
        { scenario: "(c-alerts) storm, alert rules on", figure: `${fmt(stormAlerts.rps)} req/s`, detail: `${health(stormAlerts)}, ${alertJobs} alert jobs`, ratio: fmt(stormAlerts.rps / storm.rps, 2), target: ">= 0.9 of (c)", result: verdict(stormAlerts.rps / storm.rps >= 0.9) },
        { scenario: "(d) batches of 100, 1k fingerprints", figure: `${fmt(batched.rps * 100)} events/s`, detail: `${fmt(batched.rps)} req/s, ${health(batched)}`, ratio: fmt(batched.rps / ceiling.rps, 2), target: ">= 20,000 events/s", result: verdict(batched.rps * 100 >= 20_000) },
        {
          scenario: "(fp) grouping: fingerprints per event",
          figure: `${fmt(grouping.usPerEvent, 1)} µs/event`,
          detail: `new text ${fmt(grouping.firstSightingUs, 1)} µs; write: ${fmt(1e6 / (batched.rps * 100), 1)} µs/event in (d), ${fmt(1e6 / single.rps, 1)} µs/request in (b)`,
          ratio: fmt(grouping.usPerEvent / (1e6 / (batched.rps * 100)), 3),
          target: "<= 0.05 of (d)'s time per event",
          result: verdict(grouping.usPerEvent / (1e6 / (batched.rps * 100)) <= 0.05),
        },
        { scenario: "(d2) batches of 100, all stored", figure: `${fmt(stored.rps * 100)} rows/s`, detail: `${fmt(stored.rps)} req/s, ${health(stored)}`, ratio: fmt((stored.rps * 100) / raw.rowsPerSec, 2), target: ">= 0.35 of raw insert", result: verdict((stored.rps * 100) / raw.rowsPerSec >= 0.35) },
        { scenario: "(d2-ceiling) raw INSERT 100 rows", figure: `${fmt(raw.rowsPerSec)} rows/s`, detail: `${RAW_WRITERS} writers, ${fmt(raw.rows)} rows`, ratio: "1.00", target: "", result: "" },
        cpuRow("(b)", single, 1, false),
        cpuRow("(c)", storm, 1, false),
        cpuRow("(d)", batched, 100, true),
        cpuRow("(d2)", stored, 100, false),
        { scenario: "(f) economy push, 100 players, 5-currency map", figure: `${fmt(push.rps * 100)} players/s`, detail: `${fmt(push.rps)} req/s, ${health(push)}`, ratio: fmt(push.rps / ceiling.rps, 2), target: "(vs (a), reported)", result: "" },
      );
      Object.assign(results, {
        refused: { ...refused, rps: refusedRps }, single, storm, stormAlerts, alertJobs, batched, stored, raw, d2Check,
        cpuPerEvent: { single: cpuPerEvent(single, 1), storm: cpuPerEvent(storm, 1), batched: cpuPerEvent(batched, 100), stored: cpuPerEvent(stored, 100) },
      });
    }

    if (SCENARIOS.has("http-queries") && q10k) {
      const loaded = await step(`(e) loading up to ${fmt(TARGET_EVENTS)} raw events (cap ${LOAD_SECONDS} s)`, () =>
        load(url, queryProject.api_key, small, TARGET_EVENTS, LOAD_SECONDS),
      );
      log(`  loaded ${fmt(loaded.sent)} in ${fmt(loaded.seconds, 1)} s (${fmt(loaded.rate)} events/s)`);
      results.bloatLarge = await settle();
      const large = await count();
      const qBig = await step(`(e) queries at ${fmt(large)} raw events`, () => queries(url, queryProject.api_key, sql!));
      compare("(e)", QUERIES.map((q) => q.name), q10k, qBig, (name) => QUERIES.find((q) => q.name === name)!.target);
      console.log(`\nQueries (e): ${fmt(small)} -> ${fmt(large)} raw events (loaded at ${fmt(loaded.rate)} events/s); ratio = latency at large / at small.`);
      if (loaded.sent < TARGET_EVENTS) {
        console.log(`NOTE: only ${fmt(loaded.sent)} of ${fmt(TARGET_EVENTS)} events loaded within BENCH_LOAD_SECONDS=${LOAD_SECONDS}; at this rate ${fmt(TARGET_EVENTS)} takes ~${fmt(TARGET_EVENTS / loaded.rate / 60, 1)} min.`);
      }
      Object.assign(results, { q10k, qBig, loaded: { ...loaded, small, large } });
    }

    if (SCENARIOS.has("sql-queries")) {
      // (g) the same queries over 10,000 and over BENCH_SQL_EVENTS raw events generated in SQL (1,000 groups
      // each, 30 days in daily partitions); then grouped search over 100,000 groups
      const targeted = ["errors raw first page", "errors grouped first page", "group detail", "stats 1h", "stats 24h", "stats 7d", "stats 30d"];
      // the group detail of the project's busiest group (every group holds about the same share of events)
      const gq = async (projectId: string) => {
        const [g] = await sql!<{ id: string }[]>`select id from error_groups where project_id = ${projectId} order by count desc, id limit 1`;
        return [
          ...QUERIES.filter((q) => targeted.includes(q.name)),
          { name: "group detail", path: `/api/v1/errors/${g.id}` },
          { name: "errors raw search", path: "/api/v1/errors?search=Damage" },
          // also reads the newest events' messages and player names (ISSUE_SEARCH_WINDOW)
          { name: "errors grouped search", path: "/api/v1/errors?grouped=true&search=Damage" },
        ];
      };
      const smallSql = await createProject(db.url, "bench-sql-small");
      const bigSql = await createProject(db.url, "bench-sql-large");
      await step("(g) generating 10,000 raw events in SQL", async () => {
        await generateGroups(sql!, smallSql.project_id, 1000, "Gen");
        await generateEvents(sql!, smallSql.project_id, 10_000);
        await sql!`vacuum analyze`;
      });
      const gqSmall = await gq(smallSql.project_id);
      const gSmall = await step("(g) queries at 10,000 SQL-generated events", () => measure(smallSql.api_key, gqSmall));
      const started = performance.now();
      await step(`(g) generating ${fmt(SQL_EVENTS)} raw events in SQL`, async () => {
        await generateGroups(sql!, bigSql.project_id, 1000, "Gen");
        await generateEvents(sql!, bigSql.project_id, SQL_EVENTS, (done) => log(`  ${fmt(done)} generated`));
        await sql!`vacuum analyze`;
      });
      log(`  generated in ${fmt((performance.now() - started) / 1000, 0)} s`);
      const gBig = await step(`(g) queries at ${fmt(SQL_EVENTS)} SQL-generated events`, async () => measure(bigSql.api_key, await gq(bigSql.project_id)));
      compare(`(g) 10k -> ${fmt(SQL_EVENTS)}:`, gqSmall.map((q) => q.name), gSmall, gBig, (name) => targeted.includes(name));

      const searchProject = await createProject(db.url, "bench-search");
      await step(`(g) generating ${fmt(SEARCH_GROUPS)} groups in SQL`, async () => {
        await generateGroups(sql!, searchProject.project_id, SEARCH_GROUPS, "Mod");
        await sql!`vacuum analyze error_groups`;
      });
      const searches = await step("(g) grouped search over 100,000 groups", () =>
        measure(searchProject.api_key, [
          { name: "grouped search, 1 in 4 groups match", path: "/api/v1/errors?grouped=true&search=Damage" },
          { name: "grouped search, 1 group matches", path: "/api/v1/errors?grouped=true&search=Mod4242:" },
        ]),
      );
      for (const [name, m] of Object.entries(searches)) {
        rows.push({ scenario: `(g) ${name}`, figure: `p50 ${fmt(m.p50, 1)} ms`, detail: health(m), ratio: "", target: "p50 < 50 ms", result: verdict(m.p50 < 50 && m.non2xx + m.errors === 0) });
      }
      Object.assign(results, { sqlEvents: SQL_EVENTS, gSmall, gBig, searches });
    }

    if (SCENARIOS.has("economy")) {
      // (h) economy summary and anomalies at 10,000 players with 10,000 and with BENCH_ECONOMY_HISTORY history
      // rows: over the total (the default) and over one currency read from the balances (gems)
      const eq = [
        { name: "economy summary", path: "/api/v1/economy/summary?days=30" },
        { name: "economy anomalies", path: "/api/v1/economy/anomalies?days=30" },
        { name: "economy summary, gems", path: "/api/v1/economy/summary?days=30&currency=gems" },
        { name: "economy anomalies, gems", path: "/api/v1/economy/anomalies?days=30&currency=gems" },
      ];
      const perPlayer = Math.max(1, Math.round(ECONOMY_HISTORY / ECONOMY_PLAYERS));
      const eSmall = await createProject(db.url, "bench-economy-small");
      const eBig = await createProject(db.url, "bench-economy-large");
      await step("(h) generating 10,000 players with one history row each", async () => {
        await generateEconomy(sql!, eSmall.project_id, ECONOMY_PLAYERS, 1);
        await sql!`vacuum analyze`;
      });
      const hSmall = await step("(h) economy reads at 10,000 history rows", () => measure(eSmall.api_key, eq));
      await step(`(h) generating 10,000 players with ${fmt(perPlayer)} history rows each`, async () => {
        await generateEconomy(sql!, eBig.project_id, ECONOMY_PLAYERS, perPlayer);
        await sql!`vacuum analyze`;
      });
      const hBig = await step(`(h) economy reads at ${fmt(perPlayer * ECONOMY_PLAYERS)} history rows`, () => measure(eBig.api_key, eq));
      compare(`(h) 10k -> ${fmt(perPlayer * ECONOMY_PLAYERS)} history:`, eq.map((q) => q.name), hSmall, hBig, () => true);
      Object.assign(results, { hSmall, hBig, economyHistory: perPlayer * ECONOMY_PLAYERS });
    }

    console.log(`Server log: ${serverLog}`);
    printTable(rows);
    console.log(`\n1-min load average: ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after (${cpus().length} CPUs).`);

    const logText = readFileSync(serverLog, "utf8");
    const serverErrors = logText.split("\n").filter((l) => /error|fail|exception/i.test(l));
    if (serverErrors.length) console.log(`\nServer log has ${serverErrors.length} error lines, first: ${serverErrors.slice(0, 3).join(" | ")}`);
    const file = path.join(outDir, `bench-${stamp}.json`);
    const meta = { stamp, loadavgBefore: loadBefore, loadavgAfter: loadavg()[0], node: process.version, cpus: cpus().length, postgres: settings, database: db.embedded ? "embedded" : "external", duration: DURATION, connections: CONNECTIONS, targetEvents: TARGET_EVENTS, sqlEvents: SQL_EVENTS, economyHistory: ECONOMY_HISTORY, scenarios: [...SCENARIOS] };
    writeFileSync(file, JSON.stringify({ meta, table: rows, results, serverLog, serverErrorLines: serverErrors.length }, null, 2));
    console.log(`\nResults: ${file}`);
  } finally {
    await cleanup();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error("bench crashed:", err);
    process.exit(1);
  },
);
