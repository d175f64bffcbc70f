/**
 * (e) The API's reads over events loaded through HTTP: traced events (always stored) over 1,000
 * fingerprints, first 10,000 of them, then up to BENCH_EVENTS within BENCH_LOAD_SECONDS; the same
 * queries at both sizes, each after a vacuum (the steady state autovacuum keeps), compared row by row.
 * The two halves run apart: the small one before the ingest scenarios, the large one after them.
 */
import { randomUUID } from "node:crypto";
import { compareRows, fmt, measureQueries, type Bench, type Measured, type Project, type Row } from "./harness.js";
import { FINGERPRINTS, SEARCH, event } from "./payloads.js";

/** Parallel clients loading events. */
const LOAD_CLIENTS = 8;

/** The queries of (e), also read by (g); `target`: held to the size ratio. */
export const QUERIES = [
  { name: "errors raw first page", path: "/api/v1/errors", target: true },
  { name: "errors grouped first page", path: "/api/v1/errors?grouped=true", target: true },
  ...["1h", "24h", "7d", "30d"].map((t) => ({ name: `stats ${t}`, path: `/api/v1/stats?timeframe=${t}`, target: true })),
  // last: a search counts its matches by scanning, and must not leave work behind for the targeted queries
  { name: "errors raw search", path: `/api/v1/errors?search=${SEARCH}`, target: false },
  { name: "errors grouped search", path: `/api/v1/errors?grouped=true&search=${SEARCH}`, target: false },
];

/** Loads traced events (always stored) for the query project until `target` are sent or time runs out. */
async function load(b: Bench, key: string, from: number, target: number, maxSeconds: number) {
  let sent = from;
  let failures = 0;
  let firstFailure = "";
  const started = performance.now();
  const deadline = started + maxSeconds * 1000;
  let lastReport = started;
  const client = async () => {
    while (sent < target && performance.now() < deadline && failures < 20) {
      const base = sent;
      const n = Math.min(100, target - sent);
      sent += n;
      let trace = randomUUID();
      const errors = Array.from({ length: n }, (_, i) => {
        if ((base + i) % 10 === 0) trace = randomUUID();
        const k = (base + i) % FINGERPRINTS;
        return event(`Game${k}`, 10 + (k % 7), k, trace);
      });
      const res = await fetch(`${b.url}/api/ingest`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": key }, body: JSON.stringify({ errors }) });
      const text = await res.text();
      if (res.status !== 200) {
        failures++;
        sent -= n;
        firstFailure ||= `${res.status} ${text.slice(0, 200)}`;
      }
      if (performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        b.log(`  loaded ${sent.toLocaleString()} / ${target.toLocaleString()} (${Math.round((sent - from) / ((lastReport - started) / 1000)).toLocaleString()} events/s)`);
      }
    }
  };
  await Promise.all(Array.from({ length: LOAD_CLIENTS }, client));
  const seconds = (performance.now() - started) / 1000;
  if (failures) b.log(`  load failures: ${failures}, first: ${firstFailure}`);
  return { sent, seconds, rate: (sent - from) / seconds, failures, firstFailure };
}

const count = async (b: Bench, project: Project) =>
  Number((await b.sql`select count(*)::bigint as n from events where project_id = ${project.project_id}`)[0].n);

/**
 * Records what the load left behind (dead rows; for the group rows ingest updates on every write, the
 * share of updates that stayed HOT and the size with indexes, which vacuum does not shrink), then
 * vacuums: queries are measured in the steady state autovacuum keeps.
 */
async function settle(b: Bench) {
  const tables = await b.sql<{ relname: string; live: number; dead: number; updates: number; hot: number; bytes: number }[]>`
    select relname, n_live_tup::int as live, n_dead_tup::int as dead, n_tup_upd::float8 as updates, n_tup_hot_upd::float8 as hot,
      pg_total_relation_size(relid)::float8 as bytes
    from pg_stat_user_tables where relname in ('events', 'error_groups', 'project_users', 'rollup_minute') order by relname`;
  const groups = tables.find((t) => t.relname === "error_groups");
  const hot = groups && groups.updates > 0 ? `; error_groups: ${fmt((100 * groups.hot) / groups.updates)}% of updates HOT, ${fmt(groups.bytes / 1048576, 1)} MB with indexes` : "";
  b.log(`  before vacuum: ${tables.map((t) => `${t.relname} ${fmt(t.live)} live / ${fmt(t.dead)} dead`).join(", ")}${hot}`);
  await b.sql`vacuum analyze`;
  return tables;
}

export type SmallQueries = { small: number; q10k: Record<string, Measured>; bloatSmall: Awaited<ReturnType<typeof settle>> };

/** The first half: 10,000 events loaded, the queries measured at that size. */
export async function runSmallQueries(b: Bench, project: Project): Promise<SmallQueries> {
  await b.step("(e) loading 10,000 raw events for the query project", () => load(b, project.api_key, 0, 10_000, 120));
  const bloatSmall = await settle(b);
  const small = await count(b, project);
  const q10k = await b.step(`(e) queries at ${fmt(small)} raw events`, () => measureQueries(b, project.api_key, QUERIES));
  return { small, q10k, bloatSmall };
}

/** The second half: loaded up to `target` events (at most `loadSeconds`), measured again and compared with the first. */
export async function runLargeQueries(b: Bench, project: Project, first: SmallQueries, target: number, loadSeconds: number) {
  const { small, q10k } = first;
  const loaded = await b.step(`(e) loading up to ${fmt(target)} raw events (cap ${loadSeconds} s)`, () => load(b, project.api_key, small, target, loadSeconds));
  b.log(`  loaded ${fmt(loaded.sent)} in ${fmt(loaded.seconds, 1)} s (${fmt(loaded.rate)} events/s)`);
  const bloatLarge = await settle(b);
  const large = await count(b, project);
  const qBig = await b.step(`(e) queries at ${fmt(large)} raw events`, () => measureQueries(b, project.api_key, QUERIES));
  const rows: Row[] = compareRows("(e)", QUERIES.map((q) => q.name), q10k, qBig, (name) => QUERIES.find((q) => q.name === name)!.target);
  console.log(`\nQueries (e): ${fmt(small)} -> ${fmt(large)} raw events (loaded at ${fmt(loaded.rate)} events/s); ratio = latency at large / at small.`);
  if (loaded.sent < target) {
    console.log(`NOTE: only ${fmt(loaded.sent)} of ${fmt(target)} events loaded within BENCH_LOAD_SECONDS=${loadSeconds}; at this rate ${fmt(target)} takes ~${fmt(target / loaded.rate / 60, 1)} min.`);
  }
  return { rows, results: { bloatLarge, q10k, qBig, loaded: { ...loaded, small, large } } };
}
