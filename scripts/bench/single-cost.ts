/**
 * Where a single event's database time goes: the (b) load (single-event POSTs over 1,000
 * fingerprints, 50 connections) against one tree's service on a fresh database, with the service's
 * and its PostgreSQL backends' CPU per event, and what the database did meanwhile: transactions
 * committed, rows inserted, updated and deleted per table (pg_stat), so the statements and rows per
 * event and per writer transaction can be read.
 *
 *   SINGLE_TREES=/path/a,/path/b BENCH_DATABASE_URL=postgres://… npx tsx scripts/bench/single-cost.ts
 *
 * Each tree is a checkout with its app built. SINGLE_ROUNDS (2): the trees alternate round by round,
 * each on its own fresh database with its issues opened by a 3 s warm-up. SINGLE_SECONDS (5).
 * SINGLE_SAMPLE=<fraction>: the bench database logs that fraction of its statements with their
 * durations (log_min_duration_sample; read them in the server's log).
 */
import path from "node:path";
import { loadavg } from "node:os";
import postgres from "postgres";
import { cannon, cpuMicros, createProject, envInt, fmt, freshDatabase, logger, postgresPids, serviceEnv, sleep, stopService } from "./harness.js";
import { spawn } from "node:child_process";
import { FINGERPRINTS, event } from "./payloads.js";

const log = logger("single");
const ROUNDS = envInt("SINGLE_ROUNDS", 2);
const SECONDS = envInt("SINGLE_SECONDS", 5);
const trees = (process.env.SINGLE_TREES ?? "").split(",").filter(Boolean).map((t) => path.resolve(t));
if (trees.length === 0) throw new Error("SINGLE_TREES names no tree");

type Stat = Map<string, { ins: number; upd: number; del: number; hot: number }>;

async function tableStats(sql: postgres.Sql): Promise<Stat> {
  const rows = await sql<{ relname: string; ins: string; upd: string; del: string; hot: string }[]>`
    select relname, n_tup_ins::text as ins, n_tup_upd::text as upd, n_tup_del::text as del, n_tup_hot_upd::text as hot
    from pg_stat_user_tables`;
  return new Map(rows.map((r) => [r.relname.replace(/_p\d+$|_\d{8}$/, "_*"), { ins: +r.ins, upd: +r.upd, del: +r.del, hot: +r.hot }]));
}

async function commits(sql: postgres.Sql): Promise<number> {
  const [{ n }] = await sql<{ n: string }[]>`select xact_commit::text as n from pg_stat_database where datname = current_database()`;
  return Number(n);
}

async function once(tree: string, round: number) {
  const workDir = path.resolve("data", `single-${process.pid}`);
  const db = await freshDatabase({ workDir, name: `single_${Date.now()}`, keep: false, log });
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  try {
    const sample = process.env.SINGLE_SAMPLE;
    if (sample) await sql.unsafe(`alter database ${db.name} set log_min_duration_sample = 0`).then(() => sql.unsafe(`alter database ${db.name} set log_statement_sample_rate = ${Number(sample)}`));
    const port = 21_000 + (process.pid % 9_000);
    const env = serviceEnv(db.url, workDir, port);
    const child = spawn(process.execPath, ["--import", "tsx", "server.ts"], { cwd: tree, env, stdio: ["ignore", "ignore", "inherit"] });
    const url = `http://127.0.0.1:${port}`;
    for (let k = 0; k < 120 && !(await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)); k++) await sleep(500);
    const project = await createProject({ databaseUrl: db.url, workDir }, "single");
    const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Single${k}`, 10, k)));
    let n = 0;
    const load = (seconds: number) => cannon({ url, path: "/api/ingest", key: project.api_key, body: () => singles[n++ % singles.length], seconds, connections: 50 });
    // the 1,000 issues opened first: (b)'s first second opens them, measured apart (SINGLE_FRESH=1 measures it)
    if (!process.env.SINGLE_FRESH) {
      for (let k = 0; k < 20; k++) {
        await load(2);
        const [{ n: groups }] = await sql<{ n: number }[]>`select count(*)::int as n from error_groups`;
        if (groups >= FINGERPRINTS) break;
      }
    }
    await sleep(2000);
    const pids = await postgresPids(sql, false);
    const pgBefore = new Map(pids.map((p) => [p, cpuMicros(p)]));
    const nodeBefore = cpuMicros(child.pid!);
    const statsBefore = await tableStats(sql);
    const commitsBefore = await commits(sql);
    const la = loadavg()[0];
    const m = await load(SECONDS);
    const nodeUs = cpuMicros(child.pid!) - nodeBefore;
    let pgUs = 0;
    for (const p of new Set([...pgBefore.keys(), ...(await postgresPids(sql, false))])) pgUs += cpuMicros(p) - (pgBefore.get(p) ?? 0);
    // the drain catches up within a second
    await sleep(1500);
    const statsAfter = await tableStats(sql);
    const commitsAfter = await commits(sql);
    await stopService(child);
    const events = m.ok;
    const writerTx = (statsAfter.get("counter_deltas")?.ins ?? 0) - (statsBefore.get("counter_deltas")?.ins ?? 0);
    const lines: string[] = [];
    for (const [t, a] of statsAfter) {
      const b = statsBefore.get(t) ?? { ins: 0, upd: 0, del: 0, hot: 0 };
      const d = { ins: a.ins - b.ins, upd: a.upd - b.upd, del: a.del - b.del, hot: a.hot - b.hot };
      if (d.ins + d.upd + d.del === 0) continue;
      lines.push(`  ${t}: ins ${d.ins} upd ${d.upd} (hot ${d.hot}) del ${d.del}`);
    }
    log(
      `round ${round} ${tree} (load ${la.toFixed(1)}): ${fmt(events / SECONDS)} req/s, p50 ${fmt(m.p50, 1)} ms, non2xx ${m.non2xx}; ` +
        `CPU per event Node ${fmt(nodeUs / events, 1)} + PostgreSQL ${fmt(pgUs / events, 1)} µs; ` +
        `commits ${commitsAfter - commitsBefore} (${fmt((commitsAfter - commitsBefore) / SECONDS)}/s), writer transactions ${writerTx} ` +
        `(${fmt(events / Math.max(1, writerTx), 1)} events each)\n${lines.join("\n")}`,
    );
  } finally {
    await sql.end({ timeout: 5 });
    await db.drop();
  }
}

for (let round = 1; round <= ROUNDS; round++) for (const tree of trees) await once(tree, round);
