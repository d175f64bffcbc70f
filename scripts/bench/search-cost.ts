/**
 * `npx tsx scripts/bench/search-cost.ts`: the grouped searches of (g) over 100,000 issues, for one or
 * more builds of the service run alternately on one database, so that each round sees the same load
 * on the machine. Per build and round: the CPU the service and PostgreSQL spend per request on one
 * connection (from /proc), and the p50 over 10 connections as (g) measures it (cannon).
 *
 * Env: BENCH_DATABASE_URL (required), SEARCH_COST_DB (a database this script made before: reused as it
 * is; otherwise it is made and kept, default a new `search_<stamp>`, with 100,000 issues as (g) generates them;
 * a comma list names one for each tree, for builds whose schemas differ),
 * SEARCH_COST_TREES (comma list of checkouts with their app built; default this one), SEARCH_COST_ROUNDS
 * (3), SEARCH_COST_REQUESTS (requests per read on one connection, 100), SEARCH_COST_SECONDS (seconds of
 * each 10-connection load, 5), SEARCH_COST_ONLY (comma list of substrings of the reads' names),
 * BENCH_CPU_PROF=<dir> (each service writes a V8 CPU profile there when it stops).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import postgres from "postgres";
import { createSql } from "../../db/client.js";
import { cannon, cpuMicros, createProject, envInt, fmt, logger, postgresPids, quiesce, root, startService, stopService, treeCpuMicros } from "./harness.js";
import { generateGroups } from "./sql-data.js";

const log = logger("search-cost");
const ROUNDS = envInt("SEARCH_COST_ROUNDS", 3);
const REQUESTS = envInt("SEARCH_COST_REQUESTS", 100);
const SECONDS = envInt("SEARCH_COST_SECONDS", 5);
const ONLY = (process.env.SEARCH_COST_ONLY ?? "").split(",").map((s) => s.trim()).filter(Boolean);
const TREES = (process.env.SEARCH_COST_TREES ?? root).split(",").filter(Boolean).map((t) => path.resolve(t));

/** The grouped searches of (g) (sql-queries.ts). */
const READS = [
  { name: "grouped search, 1 in 4 groups match", path: "/api/v1/errors?grouped=true&search=Damage" },
  { name: "grouped search, 1 group matches", path: "/api/v1/errors?grouped=true&search=Mod4242:" },
  { name: "grouped search by function, 1 in 4 groups match", path: "/api/v1/errors?grouped=true&search=onTouched" },
  { name: "grouped search by function, 11 groups match", path: "/api/v1/errors?grouped=true&search=onMod4242" },
].filter((q) => ONLY.length === 0 || ONLY.some((o) => q.name.includes(o)));

async function main() {
  const server = process.env.BENCH_DATABASE_URL;
  if (!server) throw new Error("BENCH_DATABASE_URL is required");
  const outDir = path.join(root, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
  const names = (process.env.SEARCH_COST_DB || `search_${stamp}`).split(",");
  const workDir = path.join(root, "data", `search-cost-${process.pid}`);
  mkdirSync(workDir, { recursive: true });
  const databases = new Map<string, { name: string; url: string; sql: ReturnType<typeof createSql> }>();
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  for (const name of new Set(names)) {
    const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
    if (!exists) await admin.unsafe(`create database ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    databases.set(name, { name, url: url.toString(), sql: createSql(url.toString(), 2) });
  }
  await admin.end();
  const databaseOf = (i: number) => databases.get(names[Math.min(i, names.length - 1)])!;
  const results: { tree: string; round: number; read: string; nodeUs: number; postgresUs: number; p50: number; rps: number }[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [i, tree] of TREES.entries()) {
        const { name, url: databaseUrl, sql } = databaseOf(i);
        const stateFile = path.join(outDir, `${name}.json`);
        const service = await startService(databaseUrl, { workDir, log, root: tree });
        try {
          if (!existsSync(stateFile)) {
            const project = await createProject({ databaseUrl, workDir }, "search-cost");
            log(`generating 100,000 issues in ${name}`);
            await generateGroups(sql, project.project_id, 100_000, "Mod");
            await sql`vacuum analyze error_groups, group_search, group_search_order`;
            writeFileSync(stateFile, JSON.stringify({ apiKey: project.api_key }));
          }
          const { apiKey } = JSON.parse(readFileSync(stateFile, "utf8")) as { apiKey: string };
          for (const q of READS) {
            const one = async () => {
              const r = await fetch(`${service.url}${q.path}`, { headers: { "x-api-key": apiKey } });
              const body = await r.arrayBuffer();
              if (!r.ok) throw new Error(`${q.name}: ${r.status} ${Buffer.from(body).toString().slice(0, 200)}`);
            };
            for (let i = 0; i < 10; i++) await one();
            await quiesce(sql, log);
            const pids = await postgresPids(sql, false);
            const pgBefore = new Map(pids.map((p) => [p, cpuMicros(p)]));
            const nodeBefore = treeCpuMicros(service.child.pid!);
            for (let i = 0; i < REQUESTS; i++) await one();
            const nodeUs = (treeCpuMicros(service.child.pid!) - nodeBefore) / REQUESTS;
            let pg = 0;
            for (const p of new Set([...pgBefore.keys(), ...(await postgresPids(sql, false))])) {
              const now = cpuMicros(p);
              if (now > 0) pg += now - (pgBefore.get(p) ?? 0);
            }
            await quiesce(sql, log);
            const m = await cannon({ url: service.url, path: q.path, key: apiKey, seconds: SECONDS, connections: 10 });
            results.push({ tree, round, read: q.name, nodeUs, postgresUs: pg / REQUESTS, p50: m.p50, rps: m.rps });
            log(`${path.basename(tree)} round ${round} ${q.name}: CPU per request Node ${fmt(nodeUs / 1000, 2)} ms + PostgreSQL ${fmt(pg / REQUESTS / 1000, 2)} ms; 10 connections p50 ${fmt(m.p50, 1)} ms, ${fmt(m.rps, 0)} req/s`);
          }
        } finally {
          await stopService(service.child);
        }
      }
    }
    writeFileSync(path.join(outDir, `search-cost-${stamp}.json`), JSON.stringify(results, null, 2));
  } finally {
    for (const d of databases.values()) await d.sql.end({ timeout: 5 });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
