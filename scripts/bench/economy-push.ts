/**
 * `npx tsx scripts/bench/economy-push.ts` (after `npm run build`): push-ingest throughput next to the
 * ingest ceiling measured in the same run, on a fresh database.
 *
 * The service runs as a child process (`tsx server.ts`, production build, no job workers) and
 * autocannon drives it from this process, three scenarios back to back:
 *   (a) ceiling: GET /api/ingest (the HTTP + Remix floor, no database)
 *   (b) POST /api/ingest, batches of 100 events
 *   (e) POST /api/economy/ingest, batches of 100 players (a pool of 200k user ids, so a mix of new
 *       players and balance changes that append history, as at a busy server's PlayerRemoving), read
 *       through PUSH_MAP (payloads.ts: five currencies, wildcards); a game that sends no flows
 *   (e-flows) POST /api/economy/flows, 200 flows of one server's 50 players per request
 *   (e-push+flows) the pushes of (e) carrying 5 flows per player, reconciled with them
 * Each economy scenario with the CPU the service and PostgreSQL spent per player (or flow).
 * The main benchmark runs the same as its scenarios (f), (f-flows) and (f-push+flows).
 *
 * Env: BENCH_DATABASE_URL (a server the bench may create a database on; else an embedded one),
 * BENCH_DURATION (seconds per scenario, default 10), BENCH_ECONOMY_MAP=seed (push through the seed's map
 * instead), BENCH_ECONOMY_ONLY=1 (skip (a) and (b)).
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { createSql } from "../../db/client.js";
import { insertProject } from "../../db/projects.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { createApiKey } from "../../app/auth/api-keys.server.js";
import { CONNECTIONS, cannon, envInt, fmt, freshDatabase, logger, root, startService, stopService, withCpu, type Cpu, type Measured } from "./harness.js";
import { PUSH_MAP, economyFlowsBody, economyPushBody, economyPushWithFlowsBody, plainEventBatch } from "./payloads.js";

const DURATION = envInt("BENCH_DURATION", 10);
const workDir = path.join(root, "data", `bench-economy-${process.pid}`);
const log = logger("bench-economy");

async function main() {
  const db = await freshDatabase({ workDir, name: `bench_economy_${Date.now().toString(36)}`, keep: false, log });
  let child: ChildProcess | undefined;
  try {
    const service = await startService(db.url, { workDir, log, jobs: false, tsxCli: true });
    child = service.child;
    const load = (pathName: string, key?: string, body?: () => string) => cannon({ url: service.url, path: pathName, key, body, seconds: DURATION, connections: CONNECTIONS });
    const sql = createSql(db.url, 2);
    const project = await insertProject(sql, "Economy bench");
    const { apiKey } = await createApiKey(sql, project.id, "bench");
    // the pushes read through a five-currency map with wildcards (BENCH_ECONOMY_MAP=seed: the seed's map)
    if (process.env.BENCH_ECONOMY_MAP !== "seed") await putEconomyMap(sql, project.id, PUSH_MAP, null);
    log(`service up at ${service.url}; ${DURATION}s per scenario, ${CONNECTIONS} connections`);
    const only = process.env.BENCH_ECONOMY_ONLY === "1";
    const skipped: Measured = { rps: Number.NaN, ok: 0, p50: Number.NaN, p99: Number.NaN, non2xx: 0, errors: 0, timeouts: 0, codes: {} };
    const ceiling = only ? skipped : await load("/api/ingest");
    log(`(a) ceiling ${ceiling.rps.toFixed(0)} req/s`);
    const events = only ? skipped : await load("/api/ingest", apiKey, plainEventBatch);
    log(`(b) events ${(events.rps * 100).toFixed(0)} events/s`);
    const measured = { sql, embedded: db.embedded, servicePid: child.pid! };
    const economy = (pathName: string, body: () => string) => withCpu(measured, () => load(pathName, apiKey, body));
    const push = await economy("/api/economy/ingest", () => economyPushBody());
    log(`(e) push ${(push.rps * 100).toFixed(0)} players/s`);
    const flows = await economy("/api/economy/flows", () => economyFlowsBody(200));
    log(`(e-flows) ${(flows.rps * 200).toFixed(0)} flows/s`);
    const pushFlows = await economy("/api/economy/ingest", () => economyPushWithFlowsBody(100, 5));
    log(`(e-push+flows) ${(pushFlows.rps * 100).toFixed(0)} players/s`);
    /** CPU µs per unit of a scenario: Node + PostgreSQL */
    const per = (m: Measured & { cpu: Cpu }, size: number) =>
      `${fmt((m.cpu.nodeUs + m.cpu.postgresUs) / (m.ok * size), 1)} µs (Node ${fmt(m.cpu.nodeUs / (m.ok * size), 1)} + PostgreSQL ${fmt(m.cpu.postgresUs / (m.ok * size), 1)})`;
    const [{ players, history, flowRows, unexplained }] = await sql<{ players: number; history: number; flowRows: number; unexplained: number }[]>`
      select (select count(*)::int from economy_snapshots) as players, (select count(*)::int from economy_history) as history,
        (select count(*)::int from economy_flows) as "flowRows", (select count(*)::int from economy_unexplained) as unexplained`;
    await sql.end();
    console.table([
      { scenario: "(a) ceiling GET /api/ingest", figure: `${ceiling.rps.toFixed(0)} req/s`, "vs (a)": "1.00", failures: ceiling.non2xx + ceiling.errors },
      { scenario: "(b) POST /api/ingest, 100 events", figure: `${(events.rps * 100).toFixed(0)} events/s`, "vs (a)": (events.rps / ceiling.rps).toFixed(2), failures: events.non2xx + events.errors },
      { scenario: "(e) POST /api/economy/ingest, 100 players", figure: `${(push.rps * 100).toFixed(0)} players/s`, "vs (a)": (push.rps / ceiling.rps).toFixed(2), failures: push.non2xx + push.errors, cpu: `${per(push, 100)}/player` },
      { scenario: "(e-flows) POST /api/economy/flows, 200 flows", figure: `${(flows.rps * 200).toFixed(0)} flows/s`, "vs (a)": (flows.rps / ceiling.rps).toFixed(2), failures: flows.non2xx + flows.errors, cpu: `${per(flows, 200)}/flow` },
      {
        scenario: "(e-push+flows) 100 players + 500 flows",
        figure: `${(pushFlows.rps * 100).toFixed(0)} players/s`,
        "vs (a)": (pushFlows.rps / ceiling.rps).toFixed(2),
        failures: pushFlows.non2xx + pushFlows.errors,
        cpu: `${per(pushFlows, 100)}/player`,
      },
    ]);
    log(`stored ${players} snapshots, ${history} history rows, ${flowRows} flows, ${unexplained} unexplained gains`);
  } finally {
    if (child) await stopService(child);
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
