/**
 * What every bench script stands on: a fresh database, the service as a child process, autocannon as
 * the load client, the CPU the service and PostgreSQL spend (from /proc), and the figures and rows the
 * reports print. Nothing here runs at import; the scripts call it.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import autocannon from "autocannon";
import postgres from "postgres";
import type { Sql } from "../../db/client.js";
import { freeLoopbackPort as freePort, startEmbeddedPostgres } from "../../db/embedded.js";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tsx = path.join(root, "node_modules/.bin/tsx");
/** Connections of a load scenario; the query scenarios use 10. */
export const CONNECTIONS = 50;
/** Seconds each query of a query scenario is measured. */
const QUERY_DURATION = 5;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export type Log = (s: string) => void;
export const logger = (name: string): Log => (s) => console.log(`[${name} ${new Date().toISOString().slice(11, 19)}] ${s}`);
/** A positive whole number from the environment, else `def`. */
export const envInt = (name: string, def: number) => (process.env[name] ? Math.max(1, Number.parseInt(process.env[name]!, 10) || def) : def);

/** What a scenario needs from the run: the service, the database, and the run's way of logging a phase. */
export type Bench = {
  url: string;
  sql: Sql;
  databaseUrl: string;
  embedded: boolean;
  servicePid: number;
  workDir: string;
  /** seconds per load scenario (BENCH_DURATION) */
  duration: number;
  log: Log;
  /** One phase: logs it, runs it, fails the run if the server died meanwhile, lets its writes drain. */
  step: <T>(title: string, fn: () => Promise<T>) => Promise<T>;
};

// ---------------------------------------------------------------- database and processes

/**
 * A new database `name` on BENCH_DATABASE_URL or on a fresh embedded server (in `workDir`, on a free
 * port); `drop` removes all of it, except the database itself on BENCH_DATABASE_URL with `keep`.
 */
export async function freshDatabase(o: { workDir: string; name: string; keep: boolean; log: Log }) {
  mkdirSync(o.workDir, { recursive: true });
  const embedded = process.env.BENCH_DATABASE_URL ? null : await startEmbeddedPostgres(o.workDir, "free");
  const serverUrl = process.env.BENCH_DATABASE_URL ?? embedded!.url;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${o.name}`);
  } catch (err) {
    await admin.end({ timeout: 5 });
    await embedded?.stop();
    rmSync(o.workDir, { recursive: true, force: true });
    throw err;
  }
  const url = new URL(serverUrl);
  url.pathname = `/${o.name}`;
  const keep = o.keep && !embedded;
  const drop = async () => {
    if (keep) o.log(`BENCH_KEEP: database ${o.name} left in place`);
    else await admin.unsafe(`drop database if exists ${o.name} with (force)`).catch((e) => o.log(`drop database failed: ${e.message}`));
    await admin.end({ timeout: 5 });
    await embedded?.stop().catch((e) => o.log(`embedded stop failed: ${e}`));
    rmSync(o.workDir, { recursive: true, force: true });
  };
  return { url: url.toString(), name: o.name, embedded: Boolean(embedded), drop };
}

/** The environment of the service and of the CLI on the bench database. */
export function serviceEnv(databaseUrl: string, workDir: string, port = 0, jobs = true): NodeJS.ProcessEnv {
  return {
    // (s) opens its 1,000 issues within seconds, past the default bound of new issues per minute: the
    // bench measures the steady state, where they exist (BENCH_SENTRY_NEW_ISSUES sets it, e.g. 100)
    SENTRY_MAX_NEW_ISSUES_PER_MINUTE: process.env.BENCH_SENTRY_NEW_ISSUES ?? "1000000",
    ...process.env,
    NODE_ENV: "production" as const, DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1", JOBS_ENABLED: String(jobs), DATA_DIR: workDir, LOG_REQUESTS: "", WEBHOOK_ALLOW_PRIVATE: "true",
  };
}

/** Polls GET /api/ingest (120 tries, `everyMs` apart) until it answers 2xx; false if the child exits first or time runs out. */
async function answers(url: string, child: ChildProcess, everyMs: number): Promise<boolean> {
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) return false;
    if (await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)) return true;
    await sleep(everyMs);
  }
  return false;
}

/**
 * Starts the service (`server.ts`, production build; of the checkout at `root`, this one by default) on a free port. With `logFile` its output goes
 * there and its exit is logged, else only its stderr shows here. `jobs: false` runs it without pg-boss workers.
 */
export async function startService(databaseUrl: string, o: { workDir: string; log: Log; logFile?: string; jobs?: boolean; tsxCli?: boolean; root?: string }) {
  const port = await freePort();
  const env = serviceEnv(databaseUrl, o.workDir, port, o.jobs ?? true);
  // as `npm start` runs it: node with tsx's loader (the tsx CLI's wrapper costs the API a large share of
  // its throughput; `tsxCli` keeps it for the economy push bench, whose figures were measured that way)
  // BENCH_CPU_PROF=<dir>: the service writes a V8 CPU profile there when it stops
  const prof = process.env.BENCH_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(process.env.BENCH_CPU_PROF)] : [];
  const [command, args] = o.tsxCli ? [tsx, ["server.ts"]] : [process.execPath, [...prof, "--import", "tsx", "server.ts"]];
  const child = spawn(command, args, { cwd: o.root ?? root, env, stdio: o.logFile ? ["ignore", "pipe", "pipe"] : ["ignore", "ignore", "inherit"] });
  if (o.logFile) {
    const out = createWriteStream(o.logFile);
    child.stdout!.pipe(out);
    child.stderr!.pipe(out);
    child.once("exit", (code, signal) => o.log(`server exited (code ${code}, signal ${signal})`));
  }
  const url = `http://127.0.0.1:${port}`;
  if (await answers(url, child, 500)) return { url, child };
  const see = o.logFile ? `; see ${o.logFile}` : "";
  throw new Error(child.exitCode !== null ? `server exited with ${child.exitCode}${see}` : `server did not answer GET /api/ingest within 60 s${see}`);
}

export async function stopService(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  if (!(await Promise.race([exited.then(() => true), sleep(20_000).then(() => false)]))) child.kill("SIGKILL");
}

/** A reference server of the bench (`scripts/bench/<script>`, port as its argument), as a child process like the service. */
async function startReference(script: string, what: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", `scripts/bench/${script}`, String(port)], {
    cwd: root,
    env: { ...process.env, ...env, NODE_ENV: "production" },
    stdio: "ignore",
  });
  const url = `http://127.0.0.1:${port}`;
  if (await answers(url, child, 250)) return { url, child };
  child.kill("SIGKILL");
  throw new Error(`${what} did not start`);
}

/** (a0): plain Express with one no-op route (noop-server.ts). */
export const startNoop = () => startReference("noop-server.ts", "the no-op Express server");

/** (b-hand): the hand-written anchor (hand-server.ts) on the bench database. */
export const startHand = (databaseUrl: string, key: string) =>
  startReference("hand-server.ts", "the hand-written Express server", { BENCH_HAND_DATABASE_URL: databaseUrl, BENCH_HAND_KEY: key });

export type Project = { project_id: string; api_key: string };

/** A project and its API key, made by the CLI as an operator would. */
export async function createProject(b: Pick<Bench, "databaseUrl" | "workDir">, name: string, owner?: string): Promise<Project> {
  const args = ["scripts/cli.ts", "project:create", "--name", name, ...(owner ? ["--owner", owner] : [])];
  const { stdout } = await promisify(execFile)(tsx, args, { cwd: root, env: serviceEnv(b.databaseUrl, b.workDir) });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

/**
 * A user (through the CLI) signed in: the session cookie a page's data is read with. The password is
 * random: one made of words from the email would be refused by the password rules.
 */
export async function signedInUser(b: Pick<Bench, "databaseUrl" | "workDir" | "url">, email: string): Promise<string> {
  // base64url may start with "-", which the command line would read as an option
  const password = `pw${randomBytes(18).toString("base64url")}`;
  await promisify(execFile)(tsx, ["scripts/cli.ts", "user:create", "--email", email, "--password", password], { cwd: root, env: serviceEnv(b.databaseUrl, b.workDir) });
  const login = await fetch(`${b.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email, password }) });
  if (!login.ok) throw new Error(`sign-in failed: ${login.status}`);
  return (login.headers.get("set-cookie") ?? "").split(";")[0];
}

/** Waits (at most 30 s) until no deferred counter is pending: a load's drain is part of its cost. */
export async function countersDrained(sql: Sql) {
  for (let i = 0; i < 600 && (await sql<{ pending: boolean }[]>`select exists (select 1 from counter_deltas) as pending`)[0].pending; i++) await sleep(50);
}

/**
 * Waits (at most a minute) until no statement has run in the bench database for a second, so phases do
 * not overlap: requests a load client gave up on may still be queued in the server's writer.
 */
export async function quiesce(sql: Sql, log: Log) {
  let idle = 0;
  for (const until = performance.now() + 60_000; performance.now() < until; await sleep(250)) {
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state in ('active', 'idle in transaction') and pid <> pg_backend_pid() and backend_type = 'client backend'`;
    idle = n === 0 ? idle + 1 : 0;
    if (idle >= 4) return;
  }
  log("warning: statements still running in the database after 60 s");
}

// ---------------------------------------------------------------- load

export type Measured = { rps: number; ok: number; p50: number; p99: number; non2xx: number; errors: number; timeouts: number; codes: Record<string, number> };

function percentile(sorted: number[], p: number) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

/** Runs autocannon; latencies are taken (in float ms) from each 2xx response, not autocannon's 1 ms histogram. */
export function cannon(opts: { url: string; path: string; key?: string; cookie?: string; body?: () => string; seconds: number; connections: number }): Promise<Measured> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    ...(opts.key ? { "x-api-key": opts.key } : {}),
    ...(opts.cookie ? { cookie: opts.cookie } : {}),
  };
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

/** Each GET of `queries` in turn, on a quiet database, for QUERY_DURATION seconds over 10 connections. */
export async function measureQueries(b: Bench, key: string, queries: { name: string; path: string; cookie?: string }[]) {
  const out: Record<string, Measured> = {};
  for (const q of queries) {
    await quiesce(b.sql, b.log);
    // a page's data is read signed in (its session cookie), an API route with the project's key
    out[q.name] = await cannon({ url: b.url, path: q.path, ...(q.cookie ? { cookie: q.cookie } : { key }), seconds: QUERY_DURATION, connections: 10 });
    b.log(`  ${q.name}: p50 ${out[q.name].p50.toFixed(2)} ms, p99 ${out[q.name].p99.toFixed(2)} ms, ${out[q.name].rps.toFixed(0)} req/s`);
  }
  return out;
}

// ---------------------------------------------------------------- CPU

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const CLK_TCK = 100;

/** CPU time (user + system) a process has used so far, in µs; 0 when it is gone. */
export function cpuMicros(pid: number): number {
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
export async function postgresPids(sql: Sql, embedded: boolean): Promise<number[]> {
  const rows = embedded
    ? await sql<{ pid: number }[]>`select pid from pg_stat_activity`
    : await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database()`;
  return rows.map((r) => r.pid);
}

/** The pids started by `pid`, their children, and so on (a tsx CLI wrapper's node process). */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
      if (text) children.push(...text.split(" ").map(Number));
    }
  } catch {
    return [];
  }
  children = [...new Set(children)];
  return [...children, ...children.flatMap(descendants)];
}

/** CPU time of a process and every process it started, in µs. */
export const treeCpuMicros = (pid: number) => [pid, ...descendants(pid)].reduce((us, p) => us + cpuMicros(p), 0);

export type Cpu = { nodeUs: number; postgresUs: number };

/**
 * Runs `fn` and measures the CPU the service process and PostgreSQL spent meanwhile (from /proc, so the
 * load generator in this process is not counted). A backend that exits during the run takes its CPU
 * with it; the service's pool keeps its connections, so that is rare and only undercounts.
 */
export async function withCpu<T>(b: Pick<Bench, "sql" | "embedded" | "servicePid">, fn: () => Promise<T>): Promise<T & { cpu: Cpu }> {
  const before = new Map((await postgresPids(b.sql, b.embedded)).map((pid) => [pid, cpuMicros(pid)]));
  const nodeBefore = treeCpuMicros(b.servicePid);
  const result = await fn();
  const nodeUs = treeCpuMicros(b.servicePid) - nodeBefore;
  let postgresUs = 0;
  for (const pid of new Set([...before.keys(), ...(await postgresPids(b.sql, b.embedded))])) {
    const now = cpuMicros(pid);
    if (now > 0) postgresUs += now - (before.get(pid) ?? 0);
  }
  return { ...result, cpu: { nodeUs, postgresUs } };
}

// ---------------------------------------------------------------- rows

export type Row = { scenario: string; figure: string; detail: string; ratio: string; target: string; result: "PASS" | "MISS" | "" };
export const fmt = (n: number, d = 0) => (!Number.isFinite(n) ? "n/a" : n.toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }));
export const verdict = (ok: boolean) => (ok ? "PASS" : "MISS");
export const health = (m: Measured) => `p50 ${fmt(m.p50, 1)} / p99 ${fmt(m.p99, 1)} ms, non2xx ${m.non2xx}, errors ${m.errors}`;

/** Rows comparing each query's latency at a small and a large size, measured in this run. */
export function compareRows(prefix: string, names: string[], a: Record<string, Measured>, b: Record<string, Measured>, targeted: (name: string) => boolean): Row[] {
  return names.map((name) => {
    const x = a[name];
    const y = b[name];
    const r50 = y.p50 / x.p50;
    const r99 = y.p99 / x.p99;
    const bad = x.non2xx + x.errors + y.non2xx + y.errors;
    const target = targeted(name);
    return {
      scenario: `${prefix} ${name}`,
      figure: `p50 ${fmt(x.p50, 1)} -> ${fmt(y.p50, 1)} ms`,
      detail: `p99 ${fmt(x.p99, 1)} -> ${fmt(y.p99, 1)} ms, ${fmt(x.ok)} -> ${fmt(y.ok)} answered${bad ? `, non2xx/errors ${bad}` : ""}`,
      ratio: `${fmt(r50, 2)} / ${fmt(r99, 2)}`,
      target: target ? "<= 1.5x (p50 / p99)" : "(none)",
      result: target ? verdict(r50 <= 1.5 && r99 <= 1.5 && bad === 0) : "",
    };
  });
}
