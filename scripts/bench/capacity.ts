/**
 * (capacity) The figures of the capacity table (docs/capacity.md) and of the sizing table
 * (docs/operations.md, "Sizing"), measured in one run:
 *
 * - **CPU per unit**, the service process's and PostgreSQL's (as withCpu measures them for (b) and
 *   (d)), over BENCH_DURATION seconds and 50 connections each: single events on issues that exist
 *   (b-again's shape), batches of 100 over 1,000 issues ((d)'s shape), health reports of one sample
 *   (a server's minute) and of 5 player-session events. Capacity per core = 1 s / CPU per unit.
 * - **Memory**: the service's RSS idle (after the warm-up, nothing in flight), right after a fresh
 *   start, and its peak during each load; PostgreSQL's as `shared_buffers` (allocated at its start)
 *   plus the private memory (RssAnon) of its processes (on BENCH_DATABASE_URL: of the bench
 *   database's backends only), sampled every 250 ms.
 * - **Disk per million events**: BENCH_CAPACITY_EVENTS events (default 30,000) of each of three
 *   shapes written through the service (a second instance with the raw-row throttle lifted, so every
 *   event is stored as a row, as in a project under its throttle limit), in two halves, each followed
 *   by the counter drain catching up and a plain VACUUM; the second half's growth of every table with
 *   its indexes (a partitioned table's partitions summed under it), scaled to a million, is the disk
 *   of events whose issues, players and texts exist (see measureDisk). Shapes: the Luau SDK's default event (repeated texts, a trail of 50
 *   Output lines), the same without a trail, and every event a distinct text (an id in the message:
 *   one issue, but one stored text per event for raw search).
 * - **Servers and players per 2-core instance** with the SDK's defaults, derived from those figures
 *   (the derivation is printed and written out in docs/capacity.md).
 *
 * `BENCH_SCENARIOS=capacity` runs it alone (with the ceiling, which always runs).
 */
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import type { Sql } from "../../db/client.js";
import { sampleReport, sessionReport } from "./health.js";
import { CONNECTIONS, cannon, createProject, envInt, fmt, postgresPids, quiesce, sleep, startService, stopService, withCpu, type Bench, type Cpu, type Measured, type Row } from "./harness.js";
import { FINGERPRINTS, TEXTS, batch, event } from "./payloads.js";

/** Events written for each disk shape (scaled to a million in the figures). */
const DISK_EVENTS = envInt("BENCH_CAPACITY_EVENTS", 30_000);

/** The Luau SDK's defaults (sdk/roblox/src: State.luau, Health.luau, Hooks.luau, Transport.luau). */
export const SDK = {
  flushIntervalS: 10,
  maxBatchSize: 100,
  maxRequestsPerMinute: 60,
  sampleIntervalS: 60,
  healthPerMinute: 6,
  breadcrumbs: 50,
  maxRetryTimeS: 900,
} as const;
/** HttpService's limit per game server (requests a minute, shared with the game's own requests). */
const HTTP_SERVICE_PER_MINUTE = 500;
/** The instance the table sizes: service and PostgreSQL on the same 2 cores. */
const CORES = 2;
/** Players per server and session length the health bench uses (scripts/bench/health.ts). */
const PLAYERS_PER_SERVER = 10;
const SESSION_MINUTES = 20;
/** Servers the health loads report for (each once a minute of its own clock, from 3 hours ago). */
const HEALTH_SERVERS = 500;

// ---------------------------------------------------------------- memory

/** A field of /proc/<pid>/status in bytes (VmRSS, RssAnon, RssShmem), 0 when the process is gone. */
function statusBytes(pid: number, field: string): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}


type Memory = { serviceRss: number; postgresPrivate: number };
type MemoryRange = { idle?: Memory; servicePeak: number; serviceMedian: number; postgresPeak: number; postgresMedian: number };

async function memoryNow(b: Bench, pid = b.servicePid): Promise<Memory> {
  const pids = await postgresPids(b.sql, b.embedded);
  return { serviceRss: statusBytes(pid, "VmRSS"), postgresPrivate: pids.reduce((s, p) => s + statusBytes(p, "RssAnon"), 0) };
}

/** Samples the service's RSS and PostgreSQL's private memory every 250 ms (its list of processes read again every second) until stopped. */
function sampleMemory(b: Bench) {
  const service: number[] = [];
  const postgres: number[] = [];
  let pids: number[] = [];
  let ticks = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      if (ticks++ % 4 === 0) pids = await postgresPids(b.sql, b.embedded).catch(() => pids);
      service.push(statusBytes(b.servicePid, "VmRSS"));
      postgres.push(pids.reduce((s, p) => s + statusBytes(p, "RssAnon"), 0));
      await sleep(250);
    }
  })();
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0;
  return async (): Promise<MemoryRange> => {
    stopped = true;
    await loop;
    return { servicePeak: Math.max(0, ...service), serviceMedian: median(service), postgresPeak: Math.max(0, ...postgres), postgresMedian: median(postgres) };
  };
}

const mb = (bytes: number) => `${fmt(bytes / 2 ** 20, 0)} MB`;

// ---------------------------------------------------------------- CPU per unit

type Load = { name: string; unit: string; units: number; measured: Measured & { cpu: Cpu }; memory: MemoryRange; nodeUs: number; postgresUs: number; totalUs: number };

async function measureLoad(b: Bench, name: string, unit: string, perRequest: number, run: () => Promise<Measured>): Promise<Load> {
  return b.step(`(capacity) ${name}, ${CONNECTIONS} connections, ${b.duration} s`, async () => {
    const stop = sampleMemory(b);
    const measured = await withCpu(b, run);
    const memory = await stop();
    const units = measured.ok * perRequest;
    const nodeUs = measured.cpu.nodeUs / Math.max(1, units);
    const postgresUs = measured.cpu.postgresUs / Math.max(1, units);
    b.log(`  ${fmt(units / b.duration)} ${unit}s/s; CPU ${fmt(nodeUs + postgresUs, 1)} µs per ${unit} (Node ${fmt(nodeUs, 1)} + PostgreSQL ${fmt(postgresUs, 1)}); non2xx ${measured.non2xx}, errors ${measured.errors}`);
    return { name, unit, units, measured, memory, nodeUs, postgresUs, totalUs: nodeUs + postgresUs };
  });
}

// ---------------------------------------------------------------- disk

type Sizes = Map<string, { heap: number; index: number }>;

/** Heap (with TOAST) and index bytes of every table in the public schema, partitions summed under their partitioned table. */
async function tableSizes(sql: Sql): Promise<Sizes> {
  const rows = await sql<{ name: string; heap: string; index: string }[]>`
    select coalesce(pg_partition_root(c.oid), c.oid)::regclass::text as name,
      sum(pg_table_size(c.oid))::bigint as heap, sum(pg_indexes_size(c.oid))::bigint as index
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'm')
    group by 1`;
  return new Map(rows.map((r) => [r.name, { heap: Number(r.heap), index: Number(r.index) }]));
}

/** Bytes of each events partition (heap with TOAST, indexes). */
async function eventPartitions(sql: Sql) {
  return sql<{ name: string; heap: string; index: string; rows: string }[]>`
    select c.relname as name, pg_table_size(c.oid)::bigint as heap, pg_indexes_size(c.oid)::bigint as index, c.reltuples::bigint as rows
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'events'::regclass`;
}

/** The SDK's default trail: the server's last 50 Output lines as breadcrumbs (what Hooks.luau records). */
const TRAIL = Array.from({ length: SDK.breadcrumbs }, (_, i) => ({
  timestamp: new Date(Date.now() - (SDK.breadcrumbs - i) * 1000).toISOString(),
  level: i % 7 === 0 ? "warning" : "info",
  category: "output",
  message: i % 3 === 0 ? `Player${1000 + i} joined the round (map Desert, 12 players)` : `ServerScriptService.Round:${40 + i}: round tick ${i}, ${30 - (i % 30)} s left`,
}));

type Shape = { name: string; make: (i: number) => object };
const SHAPES: Shape[] = [
  { name: "SDK default: repeated texts, a trail of 50 Output lines", make: (i) => ({ ...event(`Disk${i % FINGERPRINTS}`, 10, i), breadcrumbs: TRAIL }) },
  { name: "no trail, repeated texts", make: (i) => event(`Disk${i % FINGERPRINTS}`, 10, i) },
  {
    name: "no trail, every text distinct (an id in the message)",
    make: (i) => ({ ...event(`Disk${i % FINGERPRINTS}`, 10, i), message: `ServerScriptService.Disk${i % FINGERPRINTS}:10: ${TEXTS[i % TEXTS.length]} (request ${randomUUID()})` }),
  },
];

/** Posts `count` bodies (`body(i)` for i from `from`) from `concurrency` senders; fails on any answer but 2xx. */
async function sendAll(url: string, path: string, key: string, from: number, count: number, body: (i: number) => string, concurrency = 8) {
  let next = from;
  const sender = async () => {
    while (next < from + count) {
      const i = next++;
      const r = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: body(i) });
      await r.arrayBuffer();
      if (!r.ok) throw new Error(`POST ${path}: ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, sender));
}

type Growth = { table: string; heap: number; index: number };
type DiskShape = {
  name: string; events: number; stored: number;
  /** bytes per million events of each table that grew, from the second half of the load */
  perMillion: Growth[]; totalPerMillion: number; eventsPerMillion: number;
  /** what the first half added beyond its per-event share: the issues', players' and texts' first rows */
  firstRows: number;
  partition: { name: string; heap: number; index: number } | undefined;
};

const growth = (a: Sizes, b: Sizes, scale: number): Growth[] =>
  [...b]
    .map(([table, x]) => ({ table, heap: (x.heap - (a.get(table)?.heap ?? 0)) * scale, index: (x.index - (a.get(table)?.index ?? 0)) * scale }))
    .filter((t) => t.heap + t.index !== 0)
    .sort((x, y) => y.heap + y.index - (x.heap + x.index));
const sum = (g: Growth[]) => g.reduce((s, t) => s + t.heap + t.index, 0);

/**
 * Disk per million events, for each shape: half the events, the drain caught up and a plain VACUUM
 * (what autovacuum does: the space of updated rows becomes reusable, nothing shrinks), sizes; the
 * other half, the same, sizes again. The second half's growth, scaled, is the disk a million more
 * events take once their issues, players and texts exist; the first half's excess over it is what
 * those first rows took.
 */
async function measureDisk(b: Bench): Promise<{ shapes: DiskShape[]; freshRss: number; emptyPartition: { heap: number; index: number } | undefined }> {
  // a second instance with the raw-row throttle lifted (every event stored) and no job workers
  const saved = { limit: process.env.THROTTLE_LIMIT, window: process.env.THROTTLE_WINDOW_SECONDS };
  process.env.THROTTLE_LIMIT = "100000";
  process.env.THROTTLE_WINDOW_SECONDS = "1";
  let loader: Awaited<ReturnType<typeof startService>>;
  try {
    loader = await startService(b.databaseUrl, { workDir: b.workDir, log: b.log, jobs: false });
  } finally {
    if (saved.limit === undefined) delete process.env.THROTTLE_LIMIT;
    else process.env.THROTTLE_LIMIT = saved.limit;
    if (saved.window === undefined) delete process.env.THROTTLE_WINDOW_SECONDS;
    else process.env.THROTTLE_WINDOW_SECONDS = saved.window;
  }
  await sleep(3000);
  const freshRss = statusBytes(loader.child.pid!, "VmRSS");
  b.log(`  a freshly started instance, idle: RSS ${mb(freshRss)}`);
  const shapes: DiskShape[] = [];
  const settled = async () => {
    await quiesce(b.sql, b.log);
    await b.sql`vacuum`;
    return tableSizes(b.sql);
  };
  try {
    const empty = (await eventPartitions(b.sql)).find((p) => Number(p.rows) <= 0);
    const half = Math.max(100, Math.round(DISK_EVENTS / 200) * 100);
    for (const [s, shape] of SHAPES.entries()) {
      const project = await createProject(b, `bench-capacity-disk-${s}`);
      const before = await settled();
      const partsBefore = new Map((await eventPartitions(b.sql)).map((p) => [p.name, Number(p.heap) + Number(p.index)]));
      const load = (from: number) => sendAll(loader.url, "/api/ingest", project.api_key, from / 100, half / 100, (i) => batch((j) => shape.make(i * 100 + j)));
      const middle = await b.step(`(capacity) disk: ${fmt(half)} events, ${shape.name}`, async () => {
        const started = performance.now();
        await load(0);
        b.log(`  ${fmt(half)} events in ${fmt((performance.now() - started) / 1000, 1)} s`);
        return settled();
      });
      const after = await b.step(`(capacity) disk: ${fmt(half)} more events`, async () => {
        await load(half);
        return settled();
      });
      const [{ stored }] = await b.sql<{ stored: number }[]>`select count(*)::int as stored from events where project_id = ${project.project_id}`;
      const perMillion = growth(middle, after, 1_000_000 / half);
      const totalPerMillion = sum(perMillion);
      const firstRows = sum(growth(before, middle, 1)) - (totalPerMillion * half) / 1_000_000;
      const events = perMillion.find((t) => t.table === "events");
      const grown = (await eventPartitions(b.sql))
        .map((p) => ({ name: p.name, heap: Number(p.heap), index: Number(p.index), grew: Number(p.heap) + Number(p.index) - (partsBefore.get(p.name) ?? 0) }))
        .sort((x, y) => y.grew - x.grew)[0];
      shapes.push({
        name: shape.name, events: 2 * half, stored, perMillion, totalPerMillion, firstRows,
        eventsPerMillion: events ? events.heap + events.index : 0,
        partition: grown && { name: grown.name, heap: grown.heap, index: grown.index },
      });
      b.log(`  ${fmt(stored)} stored; per million more events ${mb(totalPerMillion)}: ${perMillion.slice(0, 8).map((t) => `${t.table} ${mb(t.heap)} + ${mb(t.index)} idx`).join(", ")}; first rows ${mb(firstRows)}`);
    }
    return { shapes, freshRss, emptyPartition: empty && { heap: Number(empty.heap), index: Number(empty.index) } };
  } finally {
    await stopService(loader.child);
  }
}

// ---------------------------------------------------------------- the derivation

/**
 * CPU of a batch of n events = R + n × e (a request's fixed cost and an event's), from the single
 * events (R + e) and the batches of 100 (R + 100 e), per event each.
 */
export function batchModel(singleUs: number, batchOf100PerEventUs: number) {
  const perEvent = Math.max(0, (100 * batchOf100PerEventUs - singleUs) / 99);
  return { perRequestUs: Math.max(0, singleUs - perEvent), perEventUs: perEvent, batchUs: (n: number) => Math.max(0, singleUs - perEvent) + n * perEvent };
}

type Servers = { name: string; eventsPerMinute: number; eventsPerRequest: number; cpuPerServerUs: number; postgresShare: number; servers: number; players: number; requestsPerMinute: number };

/**
 * Roblox servers one instance of CORES cores serves at full CPU, for a server of PLAYERS_PER_SERVER
 * players with SESSION_MINUTES sessions sending errors at `eventsPerMinute` (after the SDK's folding
 * of repeats), with the SDK's defaults: a health report a minute (one sample, and the session events
 * of its players' joins and leaves), and errors flushed every 10 s in one batch (at most 100 events;
 * a fuller queue sends at once, up to 60 requests a minute).
 */
export function serversPerInstance(o: {
  name: string; eventsPerMinute: number; single: { node: number; postgres: number }; batched: { node: number; postgres: number };
  sample: { node: number; postgres: number }; session: { node: number; postgres: number };
}): Servers {
  const node = batchModel(o.single.node, o.batched.node);
  const pg = batchModel(o.single.postgres, o.batched.postgres);
  // requests a minute carrying the errors: one a flush that has any (6 flushes a minute; fewer events
  // than flushes make a request each), one per 100 events past that, at most 60
  const flushes = 60 / SDK.flushIntervalS;
  const requests = Math.min(SDK.maxRequestsPerMinute, Math.max(Math.min(flushes, Math.ceil(o.eventsPerMinute)), Math.ceil(o.eventsPerMinute / SDK.maxBatchSize)));
  const eventsPerMinute = Math.min(o.eventsPerMinute, SDK.maxRequestsPerMinute * SDK.maxBatchSize);
  const perRequest = requests ? eventsPerMinute / requests : 0;
  const sessionEventsPerMinute = (PLAYERS_PER_SERVER * 2) / SESSION_MINUTES;
  const samplesPerMinute = 60 / SDK.sampleIntervalS;
  const nodePerMinute = requests * node.batchUs(perRequest) + samplesPerMinute * o.sample.node + sessionEventsPerMinute * o.session.node;
  const pgPerMinute = requests * pg.batchUs(perRequest) + samplesPerMinute * o.sample.postgres + sessionEventsPerMinute * o.session.postgres;
  const cpuPerServerUs = (nodePerMinute + pgPerMinute) / 60;
  const servers = (CORES * 1e6) / cpuPerServerUs;
  return {
    name: o.name, eventsPerMinute, eventsPerRequest: perRequest, cpuPerServerUs, postgresShare: pgPerMinute / (nodePerMinute + pgPerMinute),
    servers, players: servers * PLAYERS_PER_SERVER, requestsPerMinute: requests + samplesPerMinute,
  };
}

// ---------------------------------------------------------------- the scenario

export async function runCapacity(b: Bench) {
  const rows: Row[] = [];
  const [{ shared }] = await b.sql<{ shared: string }[]>`select pg_size_bytes(current_setting('shared_buffers'))::bigint as shared`;
  const sharedBuffers = Number(shared);

  await quiesce(b.sql, b.log);
  await sleep(2000);
  const idle = await memoryNow(b);
  b.log(`(capacity) idle: service RSS ${mb(idle.serviceRss)}, PostgreSQL ${mb(sharedBuffers)} shared_buffers + ${mb(idle.postgresPrivate)} private`);

  const project = await createProject(b, "bench-capacity");
  const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Cap${k}`, 10, k)));
  const batches = Array.from({ length: 50 }, (_, i) => batch((j) => event(`Cap${(i * 100 + j) % FINGERPRINTS}`, 10, i * 100 + j)));
  let n = 0;
  const post = (path: string, key: string, body: () => string) => () => cannon({ url: b.url, path, key, body, seconds: b.duration, connections: CONNECTIONS });
  // the project's 1,000 issues opened first: what a game's servers send day to day
  await b.step("(capacity) opening the 1,000 issues (not measured)", () => cannon({ url: b.url, path: "/api/ingest", key: project.api_key, body: () => singles[n++ % FINGERPRINTS], seconds: 3, connections: CONNECTIONS }));
  const single = await measureLoad(b, "single events, issues existing", "event", 1, post("/api/ingest", project.api_key, () => singles[n++ % FINGERPRINTS]));
  const batched = await measureLoad(b, "batches of 100 over 1,000 issues", "event", 100, post("/api/ingest", project.api_key, () => batches[n++ % batches.length]));
  // health reports of HEALTH_SERVERS servers that reported before (a server's first report, which
  // registers it, is once in its life): report n is server n % HEALTH_SERVERS at minute n / HEALTH_SERVERS
  const healthProject = await createProject(b, "bench-capacity-health");
  const base = Date.now() - 3 * 3_600_000;
  const nth = (n: number) => Math.floor(n / HEALTH_SERVERS) * 10_000 + (n % HEALTH_SERVERS);
  await b.step(`(capacity) the first health reports of ${HEALTH_SERVERS} servers (not measured)`, async () => {
    await sendAll(b.url, "/api/health", healthProject.api_key, 0, HEALTH_SERVERS, (i) => sampleReport(base, nth(i)));
    await sendAll(b.url, "/api/health", healthProject.api_key, 0, HEALTH_SERVERS, (i) => sessionReport(base, nth(i)));
  });
  let r = HEALTH_SERVERS;
  const samples = await measureLoad(b, "health reports of one sample (a server's minute)", "sample", 1, post("/api/health", healthProject.api_key, () => sampleReport(base, nth(r++))));
  // from the third round on (sessionReport), each report carries 3 joins and 2 leaves of the joins
  // of two rounds before: the first round's joins were sent above
  let s = 2 * HEALTH_SERVERS;
  const sessions = await measureLoad(b, "health reports of 5 player-session events", "session event", 5, post("/api/health", healthProject.api_key, () => sessionReport(base, nth(s++))));
  const loads = [single, batched, samples, sessions];

  const disk = await measureDisk(b);

  // ---- rows
  const perCore = (us: number) => (us > 0 ? 1e6 / us : NaN);
  for (const l of loads) {
    const bad = l.measured.non2xx + l.measured.errors;
    rows.push({
      scenario: `(capacity) ${l.name}`,
      figure: `${fmt(perCore(l.totalUs))} ${l.unit}s/s per core`,
      detail: `CPU ${fmt(l.totalUs, 1)} µs per ${l.unit}: Node ${fmt(l.nodeUs, 1)} (${fmt(perCore(l.nodeUs))}/s per core) + PostgreSQL ${fmt(l.postgresUs, 1)} (${fmt(perCore(l.postgresUs))}/s per core); measured ${fmt(l.units / b.duration)}/s on the shared cores${bad ? `; non2xx/errors ${bad}` : ""}`,
      ratio: `${fmt(l.postgresUs / l.totalUs, 2)} PostgreSQL`,
      target: "(reported)",
      result: "",
    });
  }
  rows.push({
    scenario: "(capacity) memory, idle",
    figure: `service ${mb(idle.serviceRss)}`,
    detail: `fresh start ${mb(disk.freshRss)}; PostgreSQL shared_buffers ${mb(sharedBuffers)} + ${mb(idle.postgresPrivate)} private (${b.embedded ? "every process" : "the bench database's backends"})`,
    ratio: "", target: "(reported)", result: "",
  });
  for (const l of loads) {
    rows.push({
      scenario: `(capacity) memory under ${l.name}`,
      figure: `service peak ${mb(l.memory.servicePeak)}`,
      detail: `median ${mb(l.memory.serviceMedian)}; PostgreSQL private peak ${mb(l.memory.postgresPeak)}, median ${mb(l.memory.postgresMedian)} (+ shared_buffers)`,
      ratio: "", target: "(reported)", result: "",
    });
  }
  for (const d of disk.shapes) {
    const top = d.perMillion.slice(0, 5).map((t) => `${t.table} ${mb(t.heap)} + ${mb(t.index)} idx`).join(", ");
    // the tables that grow with stored events: their rows and their texts (other tables are counters
    // and rollups rewritten in place, which move by a few MB per million either way)
    const stored = d.perMillion.filter((t) => t.table === "events" || t.table === "event_messages").reduce((s2, t) => s2 + t.heap + t.index, 0);
    rows.push({
      scenario: `(capacity) disk per million events, ${d.name}`,
      figure: `${mb(stored)} events and texts, ${mb(d.totalPerMillion)} all tables`,
      detail: `events ${mb(d.eventsPerMillion)}; ${top}; first rows of 1,000 issues, 5,000 players and their texts ${mb(d.firstRows)}; ${fmt(d.stored)} of ${fmt(d.events)} stored${d.partition ? `; partition ${d.partition.name} ${mb(d.partition.heap)} + ${mb(d.partition.index)} idx` : ""}`,
      ratio: `${fmt(d.totalPerMillion / 1e6, 0)} B/event`,
      target: "(reported)",
      result: "",
    });
  }
  const cpu = (l: Load) => ({ node: l.nodeUs, postgres: l.postgresUs });
  const model = { single: cpu(single), batched: cpu(batched), sample: cpu(samples), session: cpu(sessions) };
  const games = [
    serversPerInstance({ name: "quiet: 6 events a minute", eventsPerMinute: 6, ...model }),
    serversPerInstance({ name: "busy: 60 events a minute", eventsPerMinute: 60, ...model }),
    serversPerInstance({ name: "error storm: 600 events a minute", eventsPerMinute: 600, ...model }),
    serversPerInstance({ name: "the SDK's most: 6,000 events a minute", eventsPerMinute: SDK.maxRequestsPerMinute * SDK.maxBatchSize, ...model }),
  ];
  for (const g of games) {
    rows.push({
      scenario: `(capacity) servers per ${CORES}-core instance, ${g.name}`,
      figure: `${fmt(g.servers)} servers, ${fmt(g.players)} players`,
      detail: `${fmt(g.cpuPerServerUs, 1)} µs CPU a second per server (${PLAYERS_PER_SERVER} players, ${SESSION_MINUTES}-min sessions, a sample a minute, ${fmt(g.eventsPerRequest, 1)} events a request); ${fmt(g.requestsPerMinute, 0)} of HttpService's ${HTTP_SERVICE_PER_MINUTE} requests a minute`,
      ratio: `${fmt(g.postgresShare, 2)} PostgreSQL`,
      target: "(at full CPU)",
      result: "",
    });
  }
  const nodeModel = batchModel(single.nodeUs, batched.nodeUs);
  const pgModel = batchModel(single.postgresUs, batched.postgresUs);
  b.log(`(capacity) a batch of n events costs Node ${fmt(nodeModel.perRequestUs, 0)} + n × ${fmt(nodeModel.perEventUs, 1)} µs and PostgreSQL ${fmt(pgModel.perRequestUs, 0)} + n × ${fmt(pgModel.perEventUs, 1)} µs`);
  return {
    rows,
    results: {
      capacity: {
        sdk: SDK, cores: CORES, playersPerServer: PLAYERS_PER_SERVER, sessionMinutes: SESSION_MINUTES, sharedBuffers, idle, freshRss: disk.freshRss,
        loads: loads.map(({ measured, ...l }) => ({ ...l, rps: measured.rps, p50: measured.p50, non2xx: measured.non2xx, errors: measured.errors })),
        batchModel: { node: nodeModel, postgres: pgModel }, disk, games,
      },
    },
  };
}
