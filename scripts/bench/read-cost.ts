/**
 * `npx tsx scripts/bench/read-cost.ts`: what each read of (g) costs, one request at a time: the median
 * wall time on one connection and the CPU the service and PostgreSQL spend per request (from /proc).
 * Those figures hold on a busy machine, where the p50 at 10 connections measures the machine's load
 * as much as the read (docs/benchmarks.md, "Reading the figures").
 *
 * Env: BENCH_DATABASE_URL (required), READ_COST_DB (a database this script made before: reused as it
 * is; otherwise a new `reads_<stamp>` is made and kept, with READ_COST_EVENTS events generated as (g)
 * does, default 1,000,000), READ_COST_ROUNDS (requests per read, default 40), READ_COST_ONLY (a comma
 * list of substrings of the reads' names), READ_COST_TREE (another checkout whose service to measure on
 * the same database, e.g. the tree before a change, for pairs of runs under the same load). The service runs with its jobs (the stats windows move each minute, as in (g)). The reused database's
 * project and reader are in `<database>.json` next to this script's output in bench-results/.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { execFile } from "node:child_process";
import postgres from "postgres";
import { createSql } from "../../db/client.js";
import { moveStatsWindows } from "../../db/stats.js";
import { cpuMicros, createProject, envInt, fmt, logger, postgresPids, root, serviceEnv, startService, stopService, treeCpuMicros } from "./harness.js";
import { generateEvents, generateGroups } from "./sql-data.js";
import { queriesOf } from "./sql-queries.js";

const log = logger("read-cost");
const ROUNDS = envInt("READ_COST_ROUNDS", 40);
const EVENTS = envInt("READ_COST_EVENTS", 1_000_000);
const ONLY = (process.env.READ_COST_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);

async function main() {
  const server = process.env.BENCH_DATABASE_URL;
  if (!server) throw new Error("BENCH_DATABASE_URL is required");
  const outDir = path.join(root, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const name = process.env.READ_COST_DB || `reads_${new Date().toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15)}`;
  const url = new URL(server);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const workDir = path.join(root, "data", `read-cost-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  const stateFile = path.join(outDir, `${name}.json`);
  const fresh = !process.env.READ_COST_DB;
  if (fresh) {
    const admin = postgres(server, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
  }
  const tree = process.env.READ_COST_TREE ? path.resolve(process.env.READ_COST_TREE) : undefined;
  const service = await startService(databaseUrl, { workDir, log, root: tree });
  const sql = createSql(databaseUrl, 2);
  try {
    let state: { projectId: string; apiKey: string; email: string; password: string };
    if (fresh || !existsSync(stateFile)) {
      const email = `reader-${randomBytes(4).toString("hex")}@example.test`;
      const password = randomBytes(18).toString("base64url");
      const tsx = path.join(root, "node_modules/.bin/tsx");
      await promisify(execFile)(tsx, ["scripts/cli.ts", "user:create", "--email", email, "--password", password], { cwd: root, env: serviceEnv(databaseUrl, workDir) });
      const project = await createProject({ databaseUrl, workDir }, "read-cost", email);
      log(`generating ${fmt(EVENTS)} events in ${name}`);
      await generateGroups(sql, project.project_id, 1000, "Gen");
      await generateEvents(sql, project.project_id, EVENTS, (done) => log(`  ${fmt(done)} generated`));
      await sql`vacuum analyze`;
      state = { projectId: project.project_id, apiKey: project.api_key, email, password };
      writeFileSync(stateFile, JSON.stringify(state));
    } else {
      state = JSON.parse(readFileSync(stateFile, "utf8"));
    }
    // as the minute's job keeps them in (g): each stats window current, so no read corrects a stale one
    await moveStatsWindows(sql);
    const login = await fetch(`${service.url}/api/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: state.email, password: state.password }) });
    if (!login.ok) throw new Error(`sign-in failed: ${login.status}`);
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0];
    const apiKey = state.apiKey;
    const queries = (await queriesOf({ sql } as never, state.projectId, cookie)).filter((q) => ONLY.length === 0 || ONLY.some((o) => q.name.includes(o)));
    const results: Record<string, { wallMs: number; nodeUs: number; postgresUs: number; bytes: number }> = {};
    for (const q of queries) {
      const headers: Record<string, string> = "cookie" in q && q.cookie ? { cookie: q.cookie } : { "x-api-key": apiKey };
      const one = async () => {
        const t = performance.now();
        const r = await fetch(`${service.url}${q.path}`, { headers });
        const body = await r.arrayBuffer();
        if (!r.ok) throw new Error(`${q.name}: ${r.status} ${Buffer.from(body).toString().slice(0, 200)}`);
        return { ms: performance.now() - t, bytes: body.byteLength };
      };
      for (let i = 0; i < 5; i++) await one();
      const pids = await postgresPids(sql, false);
      const pgBefore = new Map(pids.map((p) => [p, cpuMicros(p)]));
      const nodeBefore = treeCpuMicros(service.child.pid!);
      const walls: number[] = [];
      let bytes = 0;
      for (let i = 0; i < ROUNDS; i++) {
        const r = await one();
        walls.push(r.ms);
        bytes = r.bytes;
      }
      const nodeUs = (treeCpuMicros(service.child.pid!) - nodeBefore) / ROUNDS;
      let pg = 0;
      for (const p of new Set([...pgBefore.keys(), ...(await postgresPids(sql, false))])) {
        const now = cpuMicros(p);
        if (now > 0) pg += now - (pgBefore.get(p) ?? 0);
      }
      walls.sort((a, b) => a - b);
      results[q.name] = { wallMs: walls[Math.floor(walls.length / 2)], nodeUs, postgresUs: pg / ROUNDS, bytes };
      log(`  ${q.name}: median ${fmt(results[q.name].wallMs, 1)} ms, CPU per request Node ${fmt(nodeUs / 1000, 1)} ms + PostgreSQL ${fmt(pg / ROUNDS / 1000, 1)} ms, ${fmt(bytes)} bytes`);
    }
    writeFileSync(path.join(outDir, `read-cost-${name}-${Date.now()}.json`), JSON.stringify(results, null, 2));
  } finally {
    await stopService(service.child);
    await sql.end({ timeout: 5 });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
