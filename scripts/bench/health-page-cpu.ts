/**
 * CPU per Release health page request, Node and PostgreSQL, in alternating blocks (docs/benchmarks.md):
 *
 *   npx tsx scripts/bench/health-page-cpu.ts <tree>=<database url> [<tree>=<database url> ...]
 *
 * Each pair is a built tree (its `build/` and `server.ts`) and a database holding the (health) bench's
 * generated data (a `BENCH_KEEP=1` run of `BENCH_SCENARIOS=health`, or `health-profile.ts`; a copy made
 * with `create database … template …` serves a second tree whose migrations differ). Every tree's
 * service runs at once, jobs off; in each round and window the services take turns answering
 * PAGE_N requests (default 50) one at a time, and the CPU their process and their database's backends
 * used meanwhile (/proc) is divided by the requests. A machine busy with other work slows every
 * block alike: the figure is CPU time, not wall time, and the turns alternate.
 *
 * PAGE_ROUNDS (default 5), PAGE_WINDOWS (default 7d,30d), PAGE_CPU_PROF=<dir>: the services write V8
 * CPU profiles there when they stop (per tree: <dir>/<index>).
 */
import { randomBytes, createHash } from "node:crypto";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSql, type Sql } from "../../db/client.js";
import { cpuMicros, serviceEnv, stopService } from "./harness.js";
import { freeLoopbackPort as freePort } from "../../db/embedded.js";

const N = Number(process.env.PAGE_N ?? 50);
const ROUNDS = Number(process.env.PAGE_ROUNDS ?? 5);
const WINDOWS = (process.env.PAGE_WINDOWS ?? "7d,30d").split(",");

type Service = { name: string; tree: string; sql: Sql; child: ChildProcess; url: string; cookie: string; projectId: string; workDir: string };

async function start(i: number, tree: string, databaseUrl: string): Promise<Service> {
  const sql = createSql(databaseUrl, 2, { applicationName: "health-page-cpu" });
  const [project] = await sql<{ id: string }[]>`select id from projects where name = 'bench-health-reads'`;
  const [user] = await sql<{ id: string }[]>`select id from users where email = 'health-reader@example.test'`;
  if (!project || !user) throw new Error(`${databaseUrl}: no (health) bench data (project bench-health-reads, user health-reader@example.test)`);
  const token = randomBytes(32).toString("base64url");
  await sql`insert into sessions (token_hash, user_id, expires_at) values (${createHash("sha256").update(token).digest()}, ${user.id}, now() + interval '1 day')`;
  const port = await freePort();
  const workDir = mkdtempSync(path.join(tmpdir(), "health-page-cpu-"));
  const prof = process.env.PAGE_CPU_PROF ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(process.env.PAGE_CPU_PROF, String(i))] : [];
  const child = spawn(process.execPath, [...prof, "--import", "tsx", "server.ts"], {
    cwd: tree,
    env: serviceEnv(databaseUrl, workDir, port, false),
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let k = 0; ; k++) {
    if (await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)) break;
    if (child.exitCode !== null || k > 240) throw new Error(`${tree}: the service did not start`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return { name: `${path.basename(tree)}#${i}`, tree, sql, child, url, cookie: `rm_session=${token}`, projectId: project.id, workDir };
}

/** The database's backends but this script's own connections. */
async function backends(s: Service): Promise<number[]> {
  const rows = await s.sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = current_database() and application_name not like 'health-page-cpu%' and pid <> pg_backend_pid()`;
  return rows.map((r) => r.pid);
}

async function page(s: Service, window: string): Promise<number> {
  const r = await fetch(`${s.url}/projects/${s.projectId}/releases.data?window=${window}`, { headers: { cookie: s.cookie } });
  const body = await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${s.name}: ${r.status} ${Buffer.from(body).toString().slice(0, 200)}`);
  return body.byteLength;
}

async function block(s: Service, window: string) {
  const pids = await backends(s);
  const pgBefore = new Map(pids.map((p) => [p, cpuMicros(p)]));
  const nodeBefore = cpuMicros(s.child.pid!);
  const t0 = performance.now();
  let bytes = 0;
  for (let k = 0; k < N; k++) bytes = await page(s, window);
  const wall = (performance.now() - t0) / N;
  const nodeUs = (cpuMicros(s.child.pid!) - nodeBefore) / N;
  let pgUs = 0;
  for (const p of new Set([...pids, ...(await backends(s))])) pgUs += cpuMicros(p) - (pgBefore.get(p) ?? 0);
  return { nodeUs, pgUs: pgUs / N, wall, bytes };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main() {
  const pairs = process.argv.slice(2).map((a) => {
    const eq = a.indexOf("=");
    return [path.resolve(a.slice(0, eq)), a.slice(eq + 1)] as const;
  });
  if (!pairs.length || pairs.some(([t, u]) => !t || !u)) throw new Error("usage: health-page-cpu.ts <tree>=<database url> ...");
  const services: Service[] = [];
  try {
    for (const [i, [tree, url]] of pairs.entries()) services.push(await start(i, tree, url));
    // warm-up: the JIT and the caches, not measured
    for (const s of services) for (const w of WINDOWS) for (let k = 0; k < 20; k++) await page(s, w);
    const results = new Map<string, { nodeUs: number; pgUs: number; wall: number; bytes: number }[]>();
    for (let r = 0; r < ROUNDS; r++) {
      for (const w of WINDOWS) {
        const order = r % 2 ? [...services].reverse() : services;
        for (const s of order) {
          const m = await block(s, w);
          const key = `${s.name} ${w}`;
          results.set(key, [...(results.get(key) ?? []), m]);
          console.log(`round ${r + 1} ${key}: node ${m.nodeUs.toFixed(0)} µs + postgres ${m.pgUs.toFixed(0)} µs a request, wall ${m.wall.toFixed(1)} ms, ${m.bytes} bytes`);
        }
      }
    }
    console.log(`\nmedians over ${ROUNDS} rounds of ${N} sequential requests (CPU µs a request):`);
    for (const [key, ms] of results) {
      const node = median(ms.map((m) => m.nodeUs));
      const pg = median(ms.map((m) => m.pgUs));
      console.log(`${key}: node ${node.toFixed(0)} + postgres ${pg.toFixed(0)} = ${(node + pg).toFixed(0)} µs; wall ${median(ms.map((m) => m.wall)).toFixed(1)} ms; ${ms[0].bytes} bytes`);
    }
  } finally {
    for (const s of services) {
      await stopService(s.child);
      await s.sql.end({ timeout: 5 });
      rmSync(s.workDir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
