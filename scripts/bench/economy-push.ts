/**
 * `npx tsx scripts/bench/economy-push.ts` (after `npm run build`): push-ingest throughput next to the
 * ingest ceiling measured in the same run, on a fresh database.
 *
 * The service runs as a child process (`tsx server.ts`, production build) and autocannon drives it
 * from this process, three scenarios back to back:
 *   (a) ceiling: GET /api/ingest (the HTTP + Remix floor, no database)
 *   (b) POST /api/ingest, batches of 100 events
 *   (e) POST /api/economy/ingest, batches of 100 players (a pool of 200k user ids, so a mix of new
 *       players and balance changes that append history, as at a busy server's PlayerRemoving), read
 *       through ECONOMY_BENCH_MAP (five currencies, wildcards)
 * `economyPushBody` is exported so the main benchmark can add scenario (e) as one more row.
 *
 * Env: BENCH_DATABASE_URL (a server the bench may create a database on; else an embedded one),
 * BENCH_DURATION (seconds per scenario, default 10), BENCH_ECONOMY_MAP=seed (push through the seed's map
 * instead), BENCH_ECONOMY_ONLY=1 (skip (a) and (b)).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import postgres from "postgres";
import { createSql } from "../../db/client.js";
import { startEmbeddedPostgres } from "../../db/embedded.js";
import { insertProject } from "../../db/projects.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { createApiKey } from "../../app/auth/api-keys.server.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const DURATION = Math.max(1, Number(process.env.BENCH_DURATION ?? 10) || 10);
const CONNECTIONS = 50;
const PLAYER_POOL = 200_000;
const workDir = path.join(root, "data", `bench-economy-${process.pid}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (s: string) => console.log(`[bench-economy ${new Date().toISOString().slice(11, 19)}] ${s}`);

/**
 * The pushes' currency map: five currencies, three of them read with a wildcard over every top-level
 * table (both characters), one from a list of pets, one flat; names, data code and match as the seed's.
 */
export const ECONOMY_BENCH_MAP = {
  currencies: [
    { key: "cash", name: "Cash", paths: ["*.Cash"] },
    { key: "bank", name: "Bank", paths: ["*.InATM"] },
    { key: "dark_coin", name: "Dark coin", paths: ["*.DarkCoin"] },
    { key: "gems", name: "Gems", paths: ["Gems"] },
    { key: "tokens", name: "Pet tokens", paths: ["Pets[*].Tokens"] },
  ],
  names: ["RPCharacterOne", "RPCharacterTwo"],
  data_code: "DataCode",
  match: ["RPCharacterOne", "RPCharacterTwo"],
};

/** One push of 100 distinct players with real-shaped two-character profiles (plus gems and pets for the map's other currencies). */
export function economyPushBody(players = 100): string {
  const ids = new Set<number>();
  while (ids.size < players) ids.add(1 + Math.floor(Math.random() * PLAYER_POOL));
  return JSON.stringify({
    players: [...ids].map((userId) => ({
      user_id: userId,
      username: `player_${userId}`,
      display_name: `Player ${userId}`,
      profile: {
        RPCharacterOne: { Name: `Char ${userId}`, Cash: Math.floor(Math.random() * 50_000), InATM: Math.floor(Math.random() * 1e6), DarkCoin: userId % 7, Job: "Police" },
        RPCharacterTwo: { FirstName: "Alt", LastName: String(userId), Cash: 250, InATM: 1000, DarkCoin: 0 },
        Gems: userId % 500,
        Pets: [
          { Name: "Cat", Level: 3, Tokens: userId % 40 },
          { Name: "Dog", Level: 1, Tokens: 5 },
        ],
        DataCode: 3,
      },
    })),
  });
}

function eventBatch(): string {
  return JSON.stringify({
    errors: Array.from({ length: 100 }, (_, i) => ({
      message: `attempt to index nil with 'Field${Math.floor(Math.random() * 1000)}'`,
      stack_trace: `ServerScriptService.Combat:${i + 1}`,
      user_id: 1 + Math.floor(Math.random() * 5000),
    })),
  });
}

type Measured = { rps: number; non2xx: number; errors: number };

function cannon(url: string, pathName: string, key: string | undefined, body?: () => string): Promise<Measured> {
  const headers: Record<string, string> = { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}) };
  const request = body
    ? { method: "POST" as const, path: pathName, headers, setupRequest: (r: autocannon.Request) => ({ ...r, body: body() }) }
    : { method: "GET" as const, path: pathName, headers };
  return new Promise((resolve, reject) => {
    autocannon({ url, connections: CONNECTIONS, pipelining: 1, duration: DURATION, timeout: 30, requests: [request] }, (err, r) => {
      if (err) return reject(err);
      resolve({ rps: r["2xx"] / r.duration, non2xx: r.non2xx, errors: r.errors });
    });
  });
}

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

async function startService(databaseUrl: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const env = { ...process.env, NODE_ENV: "production" as const, DATABASE_URL: databaseUrl, PORT: String(port), HOST: "127.0.0.1", JOBS_ENABLED: "false", DATA_DIR: workDir, LOG_REQUESTS: "" };
  const child = spawn(path.join(root, "node_modules/.bin/tsx"), ["server.ts"], { cwd: root, env, stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 120; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)) return { url, child };
    await sleep(500);
  }
  throw new Error("server did not start within 60 s");
}

async function main() {
  mkdirSync(workDir, { recursive: true });
  const embedded = process.env.BENCH_DATABASE_URL ? null : await startEmbeddedPostgres(workDir, 54349);
  const serverUrl = process.env.BENCH_DATABASE_URL ?? embedded!.url;
  const name = `bench_economy_${Date.now().toString(36)}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const dbUrl = new URL(serverUrl);
  dbUrl.pathname = `/${name}`;
  let child: ChildProcess | undefined;
  try {
    const service = await startService(dbUrl.toString());
    child = service.child;
    const sql = createSql(dbUrl.toString(), 2);
    const project = await insertProject(sql, "Economy bench");
    const { apiKey } = await createApiKey(sql, project.id, "bench");
    // the pushes read through a five-currency map with wildcards (BENCH_ECONOMY_MAP=seed: the seed's map)
    if (process.env.BENCH_ECONOMY_MAP !== "seed") await putEconomyMap(sql, project.id, ECONOMY_BENCH_MAP, null);
    log(`service up at ${service.url}; ${DURATION}s per scenario, ${CONNECTIONS} connections`);
    const only = process.env.BENCH_ECONOMY_ONLY === "1";
    const skipped: Measured = { rps: Number.NaN, non2xx: 0, errors: 0 };
    const ceiling = only ? skipped : await cannon(service.url, "/api/ingest", undefined);
    log(`(a) ceiling ${ceiling.rps.toFixed(0)} req/s`);
    const events = only ? skipped : await cannon(service.url, "/api/ingest", apiKey, eventBatch);
    log(`(b) events ${(events.rps * 100).toFixed(0)} events/s`);
    const push = await cannon(service.url, "/api/economy/ingest", apiKey, () => economyPushBody());
    log(`(e) push ${(push.rps * 100).toFixed(0)} players/s`);
    const [{ players, history }] = await sql<{ players: number; history: number }[]>`
      select (select count(*)::int from economy_snapshots) as players, (select count(*)::int from economy_history) as history`;
    await sql.end();
    console.table([
      { scenario: "(a) ceiling GET /api/ingest", figure: `${ceiling.rps.toFixed(0)} req/s`, "vs (a)": "1.00", failures: ceiling.non2xx + ceiling.errors },
      { scenario: "(b) POST /api/ingest, 100 events", figure: `${(events.rps * 100).toFixed(0)} events/s`, "vs (a)": (events.rps / ceiling.rps).toFixed(2), failures: events.non2xx + events.errors },
      { scenario: "(e) POST /api/economy/ingest, 100 players", figure: `${(push.rps * 100).toFixed(0)} players/s`, "vs (a)": (push.rps / ceiling.rps).toFixed(2), failures: push.non2xx + push.errors },
    ]);
    log(`stored ${players} snapshots and ${history} history rows`);
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(20_000)]);
    }
    await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end({ timeout: 5 });
    await embedded?.stop().catch(() => {});
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
