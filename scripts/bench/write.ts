/**
 * `npm run bench:write`: the cost of writing a batch (db/events.ts `writeEvents`), without HTTP.
 *
 * On a fresh database on BENCH_DATABASE_URL (default the local server), it writes batches shaped like
 * the bench's (d) as the service's writer merges them (consecutive blocks of 1,000 fingerprints,
 * random users out of 5,000, one game version), first 40,000 events to reach the steady state (groups
 * exist, throttle windows full), then BENCH_WRITE_BATCHES batches of BENCH_WRITE_SIZE events from
 * BENCH_WRITE_WRITERS concurrent writers. Prints the wall time per batch and the CPU per event of
 * this process (Node) and of the writers' PostgreSQL backends (from /proc). BENCH_WRITE_EXPLAIN=1
 * then writes one more batch with auto_explain on and prints each statement's plan with timings.
 *
 * Then it applies the deferred counters those batches left pending (db/counter-deltas.ts) in drains
 * of BENCH_WRITE_DRAIN pending rows (default 20, what the service's drainer takes under load) on
 * one connection, and prints that backend's CPU per event: what the request no longer pays, the
 * database still does. BENCH_WRITE_EXPLAIN also explains one such drain.
 *
 * BENCH_WRITE_FRESH=1 makes every event of the measured batches a fingerprint never seen (the bench's
 * (d2): every event opens a group and is stored), to see what a stored event costs.
 *
 * BENCH_WRITE_SMALL=N then writes N transactions of BENCH_WRITE_SMALL_SIZE (default 10) events, one
 * after another on one connection: single-event POSTs as the writer coalesces them (consecutive
 * fingerprints of the same 1,000, so groups exist and throttle windows are full). Prints the wall time
 * per transaction and the CPU of Node and of the backend per transaction and per event, where the
 * fixed cost of a transaction (round trips, statement planning) shows. With BENCH_WRITE_EXPLAIN the
 * plans are those of one small transaction.
 */
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.js";
import { drainOnce } from "../../db/counter-deltas.js";
import { writeEvents, type EventRow } from "../../db/events.js";
import { migrate } from "../../db/migrate.js";
import { insertProject } from "../../db/projects.js";
import { groupEvent } from "../../app/ingest/fingerprint.server.js";
import { frameEntries } from "../../app/ingest/frames.server.js";
import { cpuMicros, envInt } from "./harness.js";
import { FINGERPRINTS } from "./payloads.js";

const SIZE = envInt("BENCH_WRITE_SIZE", 5000);
const BATCHES = envInt("BENCH_WRITE_BATCHES", 40);
const WRITERS = envInt("BENCH_WRITE_WRITERS", 1);
const SMALL = Math.max(0, Number(process.env.BENCH_WRITE_SMALL ?? 0) || 0);
const SMALL_SIZE = envInt("BENCH_WRITE_SMALL_SIZE", 10);
const FRESH = Boolean(process.env.BENCH_WRITE_FRESH);
const DRAIN = envInt("BENCH_WRITE_DRAIN", 20);
let fresh = FINGERPRINTS;
const THROTTLE = { limit: 30, windowSeconds: 60 };

const admin = postgres(process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", { max: 1, onnotice: () => {} });
const name = `bench_write_${process.pid}`;
await admin.unsafe(`create database ${name}`);
const url = new URL(process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
url.pathname = `/${name}`;
const sql = createSql(url.toString(), WRITERS);
const notices: string[] = [];
const explained = postgres(url.toString(), { max: 1, connection: { TimeZone: "UTC" }, onnotice: (n) => notices.push(n.message) });
try {
  await migrate(sql);
  const project = await insertProject(sql, "bench-write");
  const event = (k: number): EventRow => {
    const message = `ServerScriptService.Batch${k}:10: attempt to index nil with 'Damage'`;
    const stack = `ServerScriptService.Batch${k}:10 function run\nServerScriptService.Main:5\nStack End`;
    const user = 1 + Math.floor(Math.random() * 5000);
    const g = groupEvent(message, stack, null, `Player${user}`);
    return {
      projectId: project.id, fingerprint: g.fingerprint, olderFingerprints: [], message, level: "error", stackTrace: stack,
      userId: String(user), playerName: `Player${user}`, traceId: null, jobId: null, placeId: null, gameVersion: "1.4.2",
      environment: "production", context: null, tags: null, timestamp: Date.now(), count: 1, culprit: g.culprit,
      frames: frameEntries(stack, `Player${user}`),
    };
  };
  const batch = (b: number, size = SIZE) => Array.from({ length: size }, (_, i) => event((b * size + i) % FINGERPRINTS));
  for (let b = 0; b < Math.ceil(40_000 / SIZE); b++) await writeEvents(sql, batch(b), THROTTLE);
  // their deferred counters too: the counter rows exist, as in the steady state
  while (((await drainOnce(sql, DRAIN)) ?? 0) > 0);

  // one backend per writer: hold them all at once to learn their pids
  const pids = await Promise.all(
    Array.from({ length: WRITERS }, () =>
      sql.begin(async (tx) => {
        await tx`select pg_sleep(0.2)`;
        return Number((await tx`select pg_backend_pid() as pid`)[0].pid);
      }),
    ),
  );
  const backends = () => [...new Set(pids)].reduce((n, pid) => n + cpuMicros(pid), 0);
  const batches = Array.from({ length: BATCHES }, (_, b) => (FRESH ? Array.from({ length: SIZE }, () => event(fresh++)) : batch(b)));
  const pg0 = backends();
  const node0 = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < BATCHES) await writeEvents(sql, batches[next++], THROTTLE);
    }),
  );
  const wall = performance.now() - started;
  const node = process.cpuUsage(node0);
  const pg = backends() - pg0;
  const events = BATCHES * SIZE;
  console.log(
    `${BATCHES} batches of ${SIZE} events, ${WRITERS} writer(s): ${(wall / BATCHES).toFixed(1)} ms per batch; ` +
      `CPU per event: Node ${((node.user + node.system) / events).toFixed(1)} µs, PostgreSQL ${(pg / events).toFixed(1)} µs`,
  );

  // the deferred counters of the measured batches, applied as the drainer does, on a backend of its own
  const drainer = postgres(url.toString(), { max: 1, connection: { TimeZone: "UTC" }, onnotice: () => {} });
  try {
    const [{ pid }] = await drainer<{ pid: number }[]>`select pg_backend_pid() as pid`;
    const cpu0 = cpuMicros(pid);
    const started = performance.now();
    let drains = 0;
    while (((await drainOnce(drainer as unknown as Sql, DRAIN)) ?? 0) > 0) drains++;
    const wall = performance.now() - started;
    console.log(
      `deferred counters of those events, ${drains} drains of up to ${DRAIN} pending rows: ${(wall / Math.max(1, drains)).toFixed(1)} ms per drain; ` +
        `CPU per event: PostgreSQL ${((cpuMicros(pid) - cpu0) / events).toFixed(1)} µs`,
    );
  } finally {
    await drainer.end({ timeout: 5 });
  }

  if (SMALL > 0) {
    const small = Array.from({ length: SMALL }, (_, b) => batch(b, SMALL_SIZE));
    // a few transactions first so that the statements are prepared and the caches warm
    for (let b = 0; b < 20; b++) await writeEvents(sql, batch(SMALL + b, SMALL_SIZE), THROTTLE);
    const pg0 = backends();
    const node0 = process.cpuUsage();
    const started = performance.now();
    for (const b of small) await writeEvents(sql, b, THROTTLE);
    const wall = performance.now() - started;
    const node = process.cpuUsage(node0);
    const nodeUs = node.user + node.system;
    const pg = backends() - pg0;
    const events = SMALL * SMALL_SIZE;
    console.log(
      `${SMALL} transactions of ${SMALL_SIZE} events, one after another: ${((wall * 1000) / SMALL).toFixed(0)} µs wall per transaction; ` +
        `CPU per transaction: Node ${(nodeUs / SMALL).toFixed(0)} µs, PostgreSQL ${(pg / SMALL).toFixed(0)} µs; ` +
        `per event: Node ${(nodeUs / events).toFixed(1)} µs, PostgreSQL ${(pg / events).toFixed(1)} µs`,
    );
  }

  if (process.env.BENCH_WRITE_EXPLAIN) {
    await explained`load 'auto_explain'`;
    await explained`set auto_explain.log_min_duration = 0`;
    await explained`set auto_explain.log_analyze = on`;
    await explained`set auto_explain.log_buffers = on`;
    await explained`set client_min_messages = log`;
    const last = FRESH ? Array.from({ length: SMALL > 0 ? SMALL_SIZE : SIZE }, () => event(fresh++)) : SMALL > 0 ? batch(SMALL + 20, SMALL_SIZE) : batch(BATCHES);
    await writeEvents(explained, last, THROTTLE);
    // and the drain that applies its deferred counters, with the statements of the triggers it fires
    await explained`set auto_explain.log_nested_statements = on`;
    await drainOnce(explained as unknown as Sql, DRAIN);
    for (const n of notices) console.log(`\n${n}`);
  }
} finally {
  await sql.end({ timeout: 5 });
  await explained.end({ timeout: 5 });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end({ timeout: 5 });
}
