/**
 * CPU per request of the single-event POST, refused (b0) and written (b), and of the same events as
 * Sentry envelopes of one event each with a fresh event_id (s, as the bench's (s-again)), for two or
 * more builds of the service and the hand-written anchor (hand-server.ts), run alternately on one
 * database so that each round sees the same load on the machine. The figure is the service's own CPU
 * time (from /proc) divided by the requests it answered, less its idle CPU (see perRequest): what
 * holds when other work shares the machine, unlike req/s. The written loads also show the CPU of the
 * database's backends serving the bench database (`pg`, no idle subtracted), per request, with the
 * service's write calls and bytes per request (its answers and its messages to PostgreSQL,
 * /proc/<pid>/io). Before measuring, each service posts every fingerprint once, so that it knows
 * them all, as a service that has run a while does (the bench's (b-again) and (s-again)).
 *
 *   PAIR_TREES=/path/to/old,/path/to/new npx tsx scripts/bench/request-pairs.ts
 *
 * Each tree is a checkout with its app built (`npx remix vite:build`). Env: BENCH_DATABASE_URL
 * (required), PAIR_ROUNDS (3), PAIR_SECONDS (5 per load), PAIR_CONNECTIONS (50), PAIR_HAND=0 to skip
 * the anchor, PAIR_LOADS (b0,b: which loads to run, of b0, b and s; the anchor runs no s), PAIR_ENV_<i>=K=V;K=V (extra environment of tree i),
 * BENCH_CPU_PROF=<dir> (each tree's service, and the anchor, write a V8 CPU profile under <dir>/<tree|hand>;
 * BENCH_CPU_PROF_INTERVAL its sampling interval in µs, 1000),
 * PAIR_TABLES=1 (log each load's written tuples per request, table by table). The load `d` posts the bench's
 * (d-again) batches (100 events over 1,000 fingerprints, issues existing, 50 batches of fixed players,
 * each posted once before) and waits for their deferred counters to be applied before it reads the
 * database's CPU, so the drain's work is in its figure (CPU per event: divide by 100). With BENCH_CPU_PROF each
 * measured load's span (monotonic µs, the profile's clock) and requests are appended to
 * <dir>/<tree>/phases.jsonl, for scripts/bench/profile-phases.ts to read the profile load by load.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import postgres from "postgres";
import { cannon, countersDrained, cpuMicros, createProject, envInt, fmt, freshDatabase, logger, postgresPids, root, serviceEnv, sleep, stopService } from "./harness.js";
import { FINGERPRINTS, event, issueBatches, sentryEvent } from "./payloads.js";

const log = logger("pairs");
const ROUNDS = envInt("PAIR_ROUNDS", 3);
const SECONDS = envInt("PAIR_SECONDS", 5);
const CONNECTIONS = envInt("PAIR_CONNECTIONS", 50);
const trees = (process.env.PAIR_TREES ?? "").split(",").filter(Boolean).map((t) => path.resolve(t));
if (trees.length === 0) throw new Error("PAIR_TREES names no tree");

const extraEnv = (i: number) =>
  Object.fromEntries((process.env[`PAIR_ENV_${i}`] ?? "").split(";").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));

const LOADS = new Set((process.env.PAIR_LOADS ?? "b0,b").split(","));

/** `node --import tsx <args>` in `cwd`, answering GET /api/ingest on `port`. */
async function startNode(cwd: string, args: string[], env: NodeJS.ProcessEnv, port: number, profName: string) {
  const prof = process.env.BENCH_CPU_PROF
    ? ["--cpu-prof", "--cpu-prof-dir", path.resolve(process.env.BENCH_CPU_PROF, profName), `--cpu-prof-interval=${envInt("BENCH_CPU_PROF_INTERVAL", 1000)}`]
    : [];
  const child: ChildProcess = spawn(process.execPath, [...prof, "--import", "tsx", ...args], { cwd, env, stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  for (let k = 0; k < 120; k++) {
    if (await fetch(`${url}/api/ingest`).then((r) => r.ok, () => false)) return { url, child };
    await sleep(500);
  }
  child.kill("SIGKILL");
  throw new Error(`${cwd} ${args.join(" ")} did not start`);
}

const startTree = (tree: string, i: number, databaseUrl: string, workDir: string, port: number) =>
  startNode(tree, ["server.ts"], { ...serviceEnv(databaseUrl, workDir, port), ...extraEnv(i) }, port, String(i));

const startHand = (databaseUrl: string, key: string, port: number) =>
  startNode(root, ["scripts/bench/hand-server.ts", String(port)], { ...process.env, NODE_ENV: "production", BENCH_HAND_DATABASE_URL: databaseUrl, BENCH_HAND_KEY: key }, port, "hand");

/**
 * CPU µs per answered request of `load`, less what the process spends without requests (its jobs,
 * timers, pool), measured over the 2 s before it: at a few hundred requests a second on a busy
 * machine that background would otherwise be a large part of the figure.
 */
async function perRequest(pid: number, load: () => ReturnType<typeof cannon>, answered: (m: Awaited<ReturnType<typeof cannon>>) => number, phase?: { tree: string; load: string }) {
  const idleStart = cpuMicros(pid);
  const idleAt = performance.now();
  await sleep(2000);
  const idleRate = (cpuMicros(pid) - idleStart) / (performance.now() - idleAt);
  const backends = new Map((await postgresPids(watch!, false)).map((p) => [p, cpuMicros(p)]));
  const dbBefore = await dbCounts();
  const ioBefore = processIo(pid);
  const before = cpuMicros(pid);
  const at = performance.now();
  const from = process.hrtime.bigint() / 1000n;
  const m = await load();
  // the deferred counters of what the load wrote are part of its cost: wait until they are applied
  if (phase?.load === "d") await countersDrained(watch!);
  if (phase && process.env.BENCH_CPU_PROF) {
    const dir = path.resolve(process.env.BENCH_CPU_PROF, phase.tree);
    mkdirSync(dir, { recursive: true });
    appendFileSync(path.join(dir, "phases.jsonl"), `${JSON.stringify({ load: phase.load, from: Number(from), to: Number(process.hrtime.bigint() / 1000n), requests: answered(m) })}\n`);
  }
  const us = cpuMicros(pid) - before - idleRate * (performance.now() - at);
  const ioAfter = processIo(pid);
  let pg = 0;
  for (const p of new Set([...backends.keys(), ...(await postgresPids(watch!, false))])) {
    const now = cpuMicros(p);
    if (now > 0) pg += now - (backends.get(p) ?? 0);
  }
  const n = Math.max(1, answered(m));
  // the statistics collector publishes a backend's counts when its transaction ends, within a second
  await sleep(1000);
  const dbAfter = await dbCounts();
  const per = (k: "xacts" | "tuples") => (dbAfter[k] - dbBefore[k]) / n;
  if (process.env.PAIR_TABLES === "1") log(`  tuples per request by table: ${tableCell(dbBefore.tables, dbAfter.tables, n)}`);
  return { us: us / n, pg: pg / n, n: answered(m), rps: answered(m) / SECONDS, idle: idleRate * 1000, xacts: per("xacts"), tuples: per("tuples"),
    writes: (ioAfter.writes - ioBefore.writes) / n, written: (ioAfter.written - ioBefore.written) / n };
}

/**
 * The process's write calls (write, writev, send: its HTTP answers and its messages to PostgreSQL)
 * and their bytes so far (/proc/<pid>/io).
 */
function processIo(pid: number): { writes: number; written: number } {
  try {
    const io = Object.fromEntries(readFileSync(`/proc/${pid}/io`, "utf8").trim().split("\n").map((l) => l.split(": ")));
    return { writes: Number(io.syscw), written: Number(io.wchar) };
  } catch {
    return { writes: NaN, written: NaN };
  }
}

/** The bench database's commits and written tuples so far (pg_stat_database), and per table with PAIR_TABLES=1. */
async function dbCounts() {
  const [r] = await watch!<{ xacts: string; tuples: string }[]>`select xact_commit + xact_rollback as xacts, tup_inserted + tup_updated + tup_deleted as tuples
    from pg_stat_database where datname = current_database()`;
  const tables = process.env.PAIR_TABLES === "1"
    ? await watch!<{ name: string; n: string }[]>`select relname as name, n_tup_ins + n_tup_upd + n_tup_del as n from pg_stat_user_tables`
    : [];
  return { xacts: Number(r.xacts), tuples: Number(r.tuples), tables: new Map(tables.map((t) => [t.name, Number(t.n)])) };
}

/** Written tuples per request by table, most first (PAIR_TABLES=1). */
function tableCell(before: Map<string, number>, after: Map<string, number>, n: number): string {
  const rows = [...after].map(([name, v]) => [name, (v - (before.get(name) ?? 0)) / n] as const).filter(([, v]) => v >= 0.01);
  return rows.sort((a, b) => b[1] - a[1]).map(([name, v]) => `${name} ${fmt(v, 2)}`).join(", ");
}

/** Posts each body once, CONNECTIONS at a time. */
async function prime(url: string, at: string, headers: Record<string, string>, bodies: string[]) {
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++];
      await fetch(`${url}${at}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body }).then((r) => r.arrayBuffer());
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
}

const none = { us: NaN, pg: NaN, n: 0, rps: NaN, idle: NaN, xacts: NaN, tuples: NaN, writes: NaN, written: NaN };
/** a connection to the bench database, to find its backends */
let watch: postgres.Sql | undefined;

async function main() {
  const workDir = path.resolve("data", `pairs-${process.pid}`);
  const db = await freshDatabase({ workDir, name: `pairs_${Date.now()}`, keep: false, log });
  try {
    const port = 20_000 + (process.pid % 10_000);
    // the first tree migrates the database
    const first = await startTree(trees[0], 0, db.url, workDir, port);
    const project = await createProject({ databaseUrl: db.url, workDir }, "pairs");
    await stopService(first.child);
    watch = postgres(db.url, { max: 1, onnotice: () => {} });
    // (s): a DSN key whose per-minute limit the run cannot reach (its check still runs on every request)
    const sentryKey = randomBytes(16).toString("hex");
    const [{ dsn_id: dsnId }] = await watch<{ dsn_id: string }[]>`with k as (insert into dsn_keys (project_id, public_key, name, rate_limit_per_minute)
      values (${project.project_id}, ${sentryKey}, 'pairs', 100000000)) select dsn_id::text from projects where id = ${project.project_id}`;
    const sentryEvents = Array.from({ length: FINGERPRINTS }, (_, k) => sentryEvent(`Single${k}`, 10, k));
    const envelope = () => {
      const id = randomBytes(16).toString("hex");
      return `{"event_id":"${id}","sent_at":"${new Date().toISOString()}"}\n{"type":"event"}\n${sentryEvents[n++ % FINGERPRINTS].replace("EVENT_ID", id)}\n`;
    };
    const envelopePath = `/api/${dsnId}/envelope/?sentry_key=${sentryKey}`;
    const envelopes = (url: string) => () => cannon({ url, path: envelopePath, body: envelope, seconds: SECONDS, connections: CONNECTIONS });
    const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Single${k}`, 10, k)));
    const refused = singles.map((s) => s.replace(/"level":"\w+"/, '"level":"fatal"'));
    let n = 0;
    const post = (url: string, bodies: string[]) => () =>
      cannon({ url, path: "/api/ingest", key: project.api_key, body: () => bodies[n++ % bodies.length], seconds: SECONDS, connections: CONNECTIONS });
    // (d-again): the bench's batches, each fingerprint in 5 of them, players fixed per batch
    const batches = issueBatches();
    const bad = (m: Awaited<ReturnType<typeof cannon>>) => m.codes["400"] ?? 0;
    const ok = (m: Awaited<ReturnType<typeof cannon>>) => m.ok;
    const table: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const load = loadavg()[0].toFixed(1);
      const cells: string[] = [];
      for (const [i, tree] of trees.entries()) {
        const s = await startTree(tree, i, db.url, workDir, port);
        const pid = s.child.pid!;
        // warm-up, not measured
        await cannon({ url: s.url, path: "/api/ingest", key: project.api_key, body: () => refused[n++ % refused.length], seconds: 2, connections: CONNECTIONS });
        await cannon({ url: s.url, path: "/api/ingest", key: project.api_key, body: () => singles[n++ % singles.length], seconds: 2, connections: CONNECTIONS });
        if (LOADS.has("s")) await envelopes(s.url)().then((m) => m.ok > 0 || log(`tree${i}: no envelope accepted (${JSON.stringify(m.codes)})`));
        // every fingerprint once more, so this process knows them all as the bench's (b-again) and
        // (s-again) do: a timed warm-up on a busy machine may miss some, and a Sentry event of a
        // fingerprint the process has not seen looks its issue up (and a native one computes the
        // previous grouping version's fingerprint) where a known one does not
        await prime(s.url, "/api/ingest", { "x-api-key": project.api_key }, singles);
        if (LOADS.has("s")) await prime(s.url, envelopePath, {}, Array.from({ length: FINGERPRINTS }, envelope));
        const b0 = LOADS.has("b0") ? await perRequest(pid, post(s.url, refused), bad, { tree: String(i), load: "b0" }) : none;
        const b = LOADS.has("b") ? await perRequest(pid, post(s.url, singles), ok, { tree: String(i), load: "b" }) : none;
        const se = LOADS.has("s") ? await perRequest(pid, envelopes(s.url), ok, { tree: String(i), load: "s" }) : none;
        if (LOADS.has("d")) await prime(s.url, "/api/ingest", { "x-api-key": project.api_key }, batches);
        const d = LOADS.has("d") ? await perRequest(pid, post(s.url, batches), ok, { tree: String(i), load: "d" }) : none;
        await stopService(s.child);
        const dbCell = (x: typeof b) => `${fmt(x.xacts, 2)} xact ${fmt(x.tuples, 1)} tuples, ${fmt(x.writes, 2)} writes ${fmt(x.written)} B`;
        const sCell = LOADS.has("s") ? ` s ${fmt(se.us)} µs + pg ${fmt(se.pg)} (${fmt(se.rps)}/s, ${dbCell(se)}), s/b ${fmt(se.us / b.us, 2)} (with pg ${fmt((se.us + se.pg) / (b.us + b.pg), 2)})` : "";
        const dCell = LOADS.has("d") ? ` d per event ${fmt(d.us / 100, 1)} µs + pg ${fmt(d.pg / 100, 1)} = ${fmt((d.us + d.pg) / 100, 1)} (${fmt(d.rps * 100)} events/s, ${dbCell(d)})` : "";
        cells.push(`tree${i} b0 ${fmt(b0.us)} µs (${fmt(b0.rps)}/s) b ${fmt(b.us)} µs + pg ${fmt(b.pg)} (${fmt(b.rps)}/s, ${dbCell(b)})${sCell}${dCell}, idle ${fmt(Number.isNaN(b0.idle) ? b.idle : b0.idle)} µs/s`);
      }
      if (process.env.PAIR_HAND !== "0") {
        const hand = await startHand(db.url, project.api_key, port + 1);
        const pid = hand.child.pid!;
        await cannon({ url: hand.url, path: "/api/ingest", key: project.api_key, body: () => singles[n++ % singles.length], seconds: 2, connections: CONNECTIONS });
        const b0 = LOADS.has("b0") ? await perRequest(pid, post(hand.url, refused), bad) : none;
        const b = LOADS.has("b") ? await perRequest(pid, post(hand.url, singles), ok) : none;
        await stopService(hand.child);
        cells.push(`hand b0 ${fmt(b0.us)} µs (${fmt(b0.rps)}/s) b ${fmt(b.us)} µs (${fmt(b.rps)}/s)`);
      }
      const line = `round ${round} (load ${load}): ${cells.join(" | ")}`;
      log(line);
      table.push(line);
    }
    console.log(`\nCPU per request (Node, the serving process only), ${SECONDS} s per load, ${CONNECTIONS} connections:\n${trees.map((t, i) => `tree${i} = ${t}`).join("\n")}\n${table.join("\n")}`);
  } finally {
    await watch?.end({ timeout: 5 });
    await db.drop();
  }
}

await main();
