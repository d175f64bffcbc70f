/**
 * The counter drain's pace against what it costs and what it leaves behind: for each value of
 * PACE_INTERVALS (COUNTER_DRAIN_INTERVAL_MS of the service: how long after a drain's start the next
 * one may start under load), on a fresh database each time, alternating over PACE_ROUNDS rounds:
 *
 *  - (d-again) the bench's batches of 100 over 1,000 fingerprints, issues existing, then
 *  - (b-again) single events over the same 1,000 fingerprints, issues existing,
 *
 * PACE_SECONDS each (50 connections). Per load: the service's and the database's CPU per event
 * (the database's counted until the load's deferred counters are applied), the rows written per
 * event, and what the group rows ingest keeps updating were left with: the share of their updates
 * that stayed HOT, their dead rows, and the size of the table with its indexes (vacuum does not
 * shrink indexes grown by updates that were not HOT).
 *
 *   PACE_INTERVALS=100,1000 BENCH_DATABASE_URL=postgres://... npx tsx scripts/bench/drain-pace.ts
 */
import path from "node:path";
import { loadavg } from "node:os";
import postgres from "postgres";
import { cannon, countersDrained, cpuMicros, createProject, envInt, fmt, freshDatabase, logger, postgresPids, sleep, startService, stopService, treeCpuMicros } from "./harness.js";
import { FINGERPRINTS, event, issueBatches } from "./payloads.js";

const log = logger("pace");
const intervals = (process.env.PACE_INTERVALS ?? "100,1000").split(",").map(Number);
const ROUNDS = envInt("PACE_ROUNDS", 2);
const SECONDS = envInt("PACE_SECONDS", 10);
const CONNECTIONS = 50;

const batches = issueBatches();
const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Batch${k}`, 10, k)));

type Groups = { upd: number; hot: number; dead: number; bytes: number };
const groupRows = async (sql: postgres.Sql): Promise<Groups> => {
  const [r] = await sql<{ upd: string; hot: string; dead: string; bytes: string }[]>`
    select n_tup_upd as upd, n_tup_hot_upd as hot, n_dead_tup as dead, pg_total_relation_size('error_groups') as bytes
    from pg_stat_user_tables where relname = 'error_groups'`;
  return { upd: Number(r.upd), hot: Number(r.hot), dead: Number(r.dead), bytes: Number(r.bytes) };
};
const tuples = async (sql: postgres.Sql) =>
  Number((await sql<{ n: string }[]>`select tup_inserted + tup_updated + tup_deleted as n from pg_stat_database where datname = current_database()`)[0].n);

async function measure(sql: postgres.Sql, pid: number, url: string, key: string, bodies: string[], size: number) {
  let n = 0;
  const backends = new Map((await postgresPids(sql, false)).map((p) => [p, cpuMicros(p)]));
  const node0 = treeCpuMicros(pid);
  const t0 = await tuples(sql);
  const m = await cannon({ url, path: "/api/ingest", key, body: () => bodies[n++ % bodies.length], seconds: SECONDS, connections: CONNECTIONS });
  // the drain's work for this load is part of its cost
  await countersDrained(sql);
  const node = treeCpuMicros(pid) - node0;
  let pg = 0;
  for (const p of new Set([...backends.keys(), ...(await postgresPids(sql, false))])) {
    const now = cpuMicros(p);
    if (now > 0) pg += now - (backends.get(p) ?? 0);
  }
  await sleep(1000); // statistics are published within a second
  const events = Math.max(1, m.ok * size);
  return { events, rate: events / SECONDS, node: node / events, pg: pg / events, tuples: ((await tuples(sql)) - t0) / events, groups: await groupRows(sql) };
}

const lines: string[] = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const interval of intervals) {
    const workDir = path.resolve("data", `pace-${process.pid}`);
    const db = await freshDatabase({ workDir, name: `pace_${Date.now()}`, keep: false, log });
    process.env.COUNTER_DRAIN_INTERVAL_MS = String(interval);
    const service = await startService(db.url, { workDir, log });
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const project = await createProject({ databaseUrl: db.url, workDir }, "pace");
      const load = loadavg()[0].toFixed(1);
      // the issues and their players exist, as in the bench's (d-again)
      for (const body of batches) {
        await fetch(`${service.url}/api/ingest`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": project.api_key }, body });
      }
      await countersDrained(sql);
      const g0 = await groupRows(sql);
      const d = await measure(sql, service.child.pid!, service.url, project.api_key, batches, 100);
      const b = await measure(sql, service.child.pid!, service.url, project.api_key, singles, 1);
      const cell = (name: string, x: typeof d, from: Groups) => {
        const upd = x.groups.upd - from.upd;
        return `${name} ${fmt(x.rate)} events/s, Node ${fmt(x.node, 1)} + PostgreSQL ${fmt(x.pg, 1)} = ${fmt(x.node + x.pg, 1)} µs/event, ${fmt(x.tuples, 2)} rows written/event; ` +
          `group rows: ${fmt((100 * (x.groups.hot - from.hot)) / Math.max(1, upd), 1)}% of ${fmt(upd)} updates HOT, ${fmt(x.groups.dead)} dead, ${fmt(x.groups.bytes / 1048576, 1)} MB`;
      };
      const line = `round ${round}, interval ${interval} ms (load ${load}): ${cell("(d-again)", d, g0)} | ${cell("(b-again)", b, d.groups)}`;
      log(line);
      lines.push(line);
    } finally {
      await sql.end({ timeout: 5 });
      await stopService(service.child);
      await db.drop();
    }
  }
}
console.log(`\nCounter drain pace, ${SECONDS} s per load, ${CONNECTIONS} connections:\n${lines.join("\n")}`);
