/**
 * `npm run bench`: one end-to-end performance report on a fresh database.
 *
 * A fresh database (`bench_<stamp>` on BENCH_DATABASE_URL, or an embedded PostgreSQL under
 * ./data/bench-<pid>), the service as a child process (`node --import tsx server.ts`), autocannon as the
 * load client in this process. Prints a table with the targets and writes the same as JSON under
 * bench-results/. Exits 0 on MISS (it is a report); non-zero only when something crashes.
 *
 * This file is the runner: the options, the order of the scenarios, the table. The scenarios are in
 * ceiling.ts (a, a0), grouping.ts (fp), ingest.ts (b0, b, s, c, d, d2, f) with alerts.ts (c-alerts),
 * http-queries.ts (e), sql-queries.ts (g), economy.ts (h), instances.ts (i), health.ts (release health), sdk.ts (the Luau SDK's own CPU)
 * and capacity.ts (the capacity and sizing tables of docs/capacity.md and docs/operations.md);
 * what they share is in harness.ts.
 *
 * Env: BENCH_DATABASE_URL, BENCH_EVENTS (default 1,000,000 raw events for the query phase),
 * BENCH_LOAD_SECONDS (time cap on loading them, default 210), BENCH_DURATION (s per ingest scenario, 10),
 * BENCH_KEEP=1 (leave the database on BENCH_DATABASE_URL in place for inspection),
 * BENCH_SQL_EVENTS (raw events generated in SQL for the large query scenario (g), default 1,000,000;
 * 10,000,000 takes tens of minutes on a small machine), BENCH_SQL_QUERIES (a regular expression: only the
 * reads of (g) whose names match it, e.g. `stats|grouped search,`), BENCH_ECONOMY_HISTORY (history rows for (h),
 * default 1,000,000), BENCH_SCENARIOS (comma list of: ingest, http-queries, sql-queries, economy, instances, health, sdk, capacity; default all),
 * BENCH_HEALTH_SERVERS, BENCH_HEALTH_DAU, BENCH_HEALTH_EVENTS (the size of the release health reads' 30 days, see health.ts),
 * BENCH_SDK_BASE, BENCH_SDK_ROUNDS (see sdk.ts), BENCH_CAPACITY_EVENTS (events of each disk shape of capacity.ts, default 30,000),
 * BENCH_INSTANCES (service instances on the one database for (i), default 2),
 * BENCH_CPU_PROF=<dir> (the service writes a V8 CPU profile there when it stops), BENCH_SENTRY_NEW_ISSUES
 * (the service's SENTRY_MAX_NEW_ISSUES_PER_MINUTE, default 1,000,000: (s) measures issues that exist).
 */
import type { ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import path from "node:path";
import { createSql, type Sql } from "../../db/client.js";
import { runCapacity } from "./capacity.js";
import { runCeiling, warmUp } from "./ceiling.js";
import { runEconomyReads } from "./economy.js";
import { groupingCost } from "./grouping.js";
import { runHealthBench } from "./health.js";
import { CONNECTIONS, createProject, envInt, fmt, freshDatabase, logger, quiesce, root, sleep, startService, stopService, type Bench, type Row } from "./harness.js";
import { runLargeQueries, runSmallQueries, type SmallQueries } from "./http-queries.js";
import { RAW_WRITERS, runIngest } from "./ingest.js";
import { runInstances } from "./instances.js";
import { runSdkBench } from "./sdk.js";
import { runSqlQueries } from "./sql-queries.js";

const DURATION = envInt("BENCH_DURATION", 10);
const TARGET_EVENTS = envInt("BENCH_EVENTS", 1_000_000);
const LOAD_SECONDS = envInt("BENCH_LOAD_SECONDS", 210);
const SQL_EVENTS = envInt("BENCH_SQL_EVENTS", 1_000_000);
const ECONOMY_HISTORY = envInt("BENCH_ECONOMY_HISTORY", 1_000_000);
const INSTANCES = Math.max(2, envInt("BENCH_INSTANCES", 2));
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? "ingest,http-queries,sql-queries,economy,instances,health,sdk,capacity").split(",").map((s) => s.trim()));
const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
const outDir = path.join(root, "bench-results");
const workDir = path.join(root, "data", `bench-${process.pid}`);
const log = logger("bench");

function printTable(rows: Row[]) {
  const cols = ["scenario", "figure", "detail", "ratio", "target", "result"] as const;
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...rows.map((r) => r[c].length))]));
  const line = (r: Record<string, string>) => cols.map((c) => r[c].padEnd(width[c])).join("  ");
  console.log(`\n${line(Object.fromEntries(cols.map((c) => [c, c])))}\n${cols.map((c) => "-".repeat(width[c])).join("  ")}`);
  for (const r of rows) console.log(line(r));
}

async function main() {
  mkdirSync(outDir, { recursive: true });
  const serverLog = path.join(outDir, `server-${stamp}.log`);
  const db = await freshDatabase({ workDir, name: `bench_${stamp}`, keep: Boolean(process.env.BENCH_KEEP), log });
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
    const service = await startService(db.url, { workDir, logFile: serverLog, log });
    const server = (child = service.child);
    const pool = (sql = createSql(db.url, RAW_WRITERS));
    const ingestProject = await createProject({ databaseUrl: db.url, workDir }, "bench-ingest");
    const queryProject = await createProject({ databaseUrl: db.url, workDir }, "bench-queries");
    const settings = Object.fromEntries(
      (await pool<{ name: string; setting: string }[]>`select name, setting from pg_settings
        where name in ('server_version', 'autovacuum', 'synchronous_commit', 'fsync', 'shared_buffers', 'max_connections')`).map((r) => [r.name, r.setting]),
    );
    log(`PostgreSQL ${Object.entries(settings).map(([k, v]) => `${k}=${v}`).join(" ")}`);
    if (settings.autovacuum === "off") log("warning: autovacuum is off on this server; hot rows (groups, users, rollups) bloat until the explicit vacuum");
    const b: Bench = {
      url: service.url, sql: pool, databaseUrl: db.url, embedded: db.embedded, servicePid: server.pid!, workDir, duration: DURATION, log,
      step: async (title, fn) => {
        log(title);
        const result = await fn();
        if (server.exitCode !== null || server.signalCode !== null) {
          throw new Error(`the server died during "${title}" (code ${server.exitCode}, signal ${server.signalCode}); see ${serverLog}`);
        }
        await sleep(500);
        await quiesce(pool, log); // let the server's writes drain before the next phase
        return result;
      },
    };

    await warmUp(b, ingestProject.api_key);
    const grouping = groupingCost();
    log(`  grouping: ${fmt(grouping.usPerEvent, 1)} µs per event (${fmt(grouping.firstSightingUs, 1)} µs for a text never seen), learned templates included`);
    log(`  learned-template cache per project: ${grouping.minerBytes.map((m) => `${m.templates} templates ${m.bytes} bytes`).join(", ")}`);
    const { ceiling, noop, rows } = await runCeiling(b);
    const results: Record<string, unknown> = { grouping, ceiling, noop };
    const collect = (part: { rows: Row[]; results: Record<string, unknown> }) => {
      rows.push(...part.rows);
      Object.assign(results, part.results);
    };

    let firstQueries: SmallQueries | undefined;
    if (SCENARIOS.has("http-queries")) {
      firstQueries = await runSmallQueries(b, queryProject);
      results.bloatSmall = firstQueries.bloatSmall;
    }
    if (SCENARIOS.has("ingest")) collect(await runIngest(b, ingestProject, ceiling, grouping));
    if (firstQueries) collect(await runLargeQueries(b, queryProject, firstQueries, TARGET_EVENTS, LOAD_SECONDS));
    if (SCENARIOS.has("sql-queries")) collect(await runSqlQueries(b, SQL_EVENTS));
    if (SCENARIOS.has("economy")) collect(await runEconomyReads(b, ECONOMY_HISTORY));
    if (SCENARIOS.has("instances")) collect(await runInstances(b, INSTANCES, serverLog));
    if (SCENARIOS.has("health")) collect(await runHealthBench(b));
    if (SCENARIOS.has("capacity")) collect(await runCapacity(b));
    if (SCENARIOS.has("sdk")) collect(await b.step("(sdk) the Luau SDK's CPU, this tree against its base", () => runSdkBench()));

    console.log(`Server log: ${serverLog}`);
    printTable(rows);
    console.log(`\n1-min load average: ${loadBefore.toFixed(2)} before, ${loadavg()[0].toFixed(2)} after (${cpus().length} CPUs).`);

    const logText = readFileSync(serverLog, "utf8");
    const serverErrors = logText.split("\n").filter((l) => /error|fail|exception/i.test(l));
    if (serverErrors.length) console.log(`\nServer log has ${serverErrors.length} error lines, first: ${serverErrors.slice(0, 3).join(" | ")}`);
    const file = path.join(outDir, `bench-${stamp}.json`);
    const meta = { stamp, loadavgBefore: loadBefore, loadavgAfter: loadavg()[0], node: process.version, cpus: cpus().length, postgres: settings, database: db.embedded ? "embedded" : "external", duration: DURATION, connections: CONNECTIONS, targetEvents: TARGET_EVENTS, sqlEvents: SQL_EVENTS, instances: INSTANCES, economyHistory: ECONOMY_HISTORY, scenarios: [...SCENARIOS] };
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
