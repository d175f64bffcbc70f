/**
 * The ingest writer alone (app/ingest/writer.server.ts, no HTTP) under (b)'s shape: WRITER_CLIENTS
 * (50) clients in a closed loop, each submitting one event at a time over 1,000 fingerprints, on a
 * fresh database, with the service's writer settings (one shard, one transaction in flight, up to
 * 5,000 events per transaction) and its counter drainer. Prints events/s, events per transaction and
 * the CPU per event of this process and of the database's backends. Run it once per tree, in turn:
 *
 *   BENCH_DATABASE_URL=postgres://… npx tsx scripts/bench/writer-loop.ts /path/to/tree [seconds]
 *
 * The tree's own writer, database code and grouping are loaded (it must have node_modules).
 */
import path from "node:path";
import { loadavg } from "node:os";
import postgres from "postgres";
import { cpuMicros, envInt, fmt, postgresPids } from "./harness.js";
import { FINGERPRINTS, event } from "./payloads.js";

const tree = path.resolve(process.argv[2] ?? ".");
const SECONDS = Number(process.argv[3] ?? 5);
const CLIENTS = envInt("WRITER_CLIENTS", 50);

const { createSql } = await import(path.join(tree, "db/client.ts"));
const { migrate } = await import(path.join(tree, "db/migrate.ts"));
const { insertProject } = await import(path.join(tree, "db/projects.ts"));
const { EventWriter } = await import(path.join(tree, "app/ingest/writer.server.ts"));
const { CounterDrainer } = await import(path.join(tree, "db/counter-deltas.ts"));
const { groupEvent } = await import(path.join(tree, "app/ingest/fingerprint.server.ts"));

const base = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const admin = postgres(base, { max: 1, onnotice: () => {} });
const name = `writer_loop_${process.pid}`;
await admin.unsafe(`create database ${name}`);
const url = new URL(base);
url.pathname = `/${name}`;
const sql = createSql(url.toString(), 10);
const probe = postgres(url.toString(), { max: 1, onnotice: () => {} });
try {
  await migrate(sql);
  const project = await insertProject(sql, "writer-loop");
  const drainer = new CounterDrainer(sql).start();
  const writer = new EventWriter(sql, {
    throttle: { limit: 30, windowSeconds: 60 },
    shards: 1,
    concurrency: 1,
    maxEventsPerWrite: 5000,
    timeoutMs: 30_000,
    afterCommit: (_groups: unknown, pending: string[]) => drainer.whenApplied(pending, () => {}),
  });
  // (b)'s bodies (payloads.ts), read as the native protocol reads them
  const unset = { olderFingerprints: [], traceId: null, jobId: null, placeId: null, context: null, tags: null, count: 1 };
  const rows = Array.from({ length: FINGERPRINTS }, (_, k) => {
    const e = event(`Single${k}`, 10, k);
    const g = groupEvent(e.message, e.stack_trace, null, e.player_name);
    const fields = { message: e.message, level: e.level, stackTrace: e.stack_trace, environment: e.environment, gameVersion: e.game_version };
    return { ...unset, ...fields, projectId: project.id, fingerprint: g.fingerprint, culprit: g.culprit, userId: String(e.user_id), playerName: e.player_name };
  });
  let n = 0;
  const loop = async (until: number, counter: { events: number }) => {
    while (performance.now() < until) {
      const r = rows[n++ % rows.length];
      await writer.submit([{ ...r, timestamp: Date.now() }]);
      counter.events++;
    }
  };
  const run = async (seconds: number) => {
    const counter = { events: 0 };
    const until = performance.now() + seconds * 1000;
    await Promise.all(Array.from({ length: CLIENTS }, () => loop(until, counter)));
    return counter.events;
  };
  // warm-up: the groups exist, the statements are prepared, the throttle windows fill
  await run(3);
  await drainer.drainNow();
  const pids = await postgresPids(probe, false);
  const pg0 = new Map(pids.map((p) => [p, cpuMicros(p)]));
  const node0 = process.cpuUsage();
  const [{ n: tx0 }] = await probe<{ n: number }[]>`select n_tup_ins::int as n from pg_stat_user_tables where relname = 'counter_deltas'`;
  const la = loadavg()[0];
  const started = performance.now();
  const events = await run(SECONDS);
  const wall = (performance.now() - started) / 1000;
  const node = process.cpuUsage(node0);
  let pgUs = 0;
  for (const p of new Set([...pg0.keys(), ...(await postgresPids(probe, false))])) pgUs += cpuMicros(p) - (pg0.get(p) ?? 0);
  const [{ n: tx1 }] = await probe<{ n: number }[]>`select n_tup_ins::int as n from pg_stat_user_tables where relname = 'counter_deltas'`;
  console.log(
    `${tree} (load ${la.toFixed(1)}): ${fmt(events / wall)} events/s, ${fmt(events / Math.max(1, tx1 - tx0), 1)} events per transaction; ` +
      `CPU per event Node ${fmt((node.user + node.system) / events, 1)} + PostgreSQL ${fmt(pgUs / events, 1)} µs`,
  );
  await drainer.stop();
} finally {
  await probe.end({ timeout: 1 });
  await sql.end({ timeout: 1 });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end({ timeout: 1 });
}
