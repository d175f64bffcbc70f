/**
 * (i) Past one process: the same load on one service instance and on BENCH_INSTANCES (default 2)
 * instances that share the bench database, as an operator runs them behind a load balancer. Each
 * instance runs the whole service (jobs included) with the same settings and data folder. The load
 * client splits its connections evenly over the instances. Each side writes into its own fresh
 * project, so the counts can be checked exactly afterwards: every answered event is in the issue's
 * count (and at most the requests still in flight when the load stopped on top), and the hourly
 * rollups hold exactly that count once the deferred counters have caught up.
 */
import path from "node:path";
import { CONNECTIONS, cannon, createProject, fmt, sleep, startService, stopService, verdict, type Bench, type Measured, type Project, type Row } from "./harness.js";
import { FINGERPRINTS, event, issueBatches } from "./payloads.js";

type Side = { rps: number; ok: number; non2xx: number; errors: number; timeouts: number; inFlight: number; counted: number; rolled: number; caughtUpMs: number };

/** Sums the measurements of the load clients that ran side by side. */
function sum(parts: Measured[]) {
  const add = (f: (m: Measured) => number) => parts.reduce((s, m) => s + f(m), 0);
  return { rps: add((m) => m.rps), ok: add((m) => m.ok), non2xx: add((m) => m.non2xx), errors: add((m) => m.errors), timeouts: add((m) => m.timeouts) };
}

/**
 * The occurrences of `project` as the issue counts them (written in the request) and as the hourly
 * rollups count them, once its deferred counters are applied (waits up to 60 s for that).
 */
async function counts(b: Bench, project: Project) {
  const started = performance.now();
  for (;;) {
    const [{ pending }] = await b.sql<{ pending: boolean }[]>`select exists (select 1 from counter_deltas where project_id = ${project.project_id}) as pending`;
    if (!pending || performance.now() - started > 60_000) break;
    await sleep(100);
  }
  const caughtUpMs = performance.now() - started;
  const [{ counted, rolled }] = await b.sql<{ counted: number; rolled: number }[]>`
    select (select coalesce(sum(count), 0) from error_groups where project_id = ${project.project_id})::float8 as counted,
           (select coalesce(sum(count), 0) from rollup_hour where project_id = ${project.project_id})::float8 as rolled`;
  return { counted, rolled, caughtUpMs };
}

/** One workload on `urls` (connections split evenly), into a fresh project; then its counts. */
async function side(b: Bench, urls: string[], name: string, size: number, body: () => string): Promise<Side> {
  const project = await createProject(b, name);
  const each = Math.max(1, Math.floor(CONNECTIONS / urls.length));
  const load = sum(
    await Promise.all(urls.map((url) => cannon({ url, path: "/api/ingest", key: project.api_key, body, seconds: b.duration, connections: each }))),
  );
  return { ...load, inFlight: urls.length * each * size, ...(await counts(b, project)) };
}

export async function runInstances(b: Bench, instances: number, serverLog: string) {
  const extra: Awaited<ReturnType<typeof startService>>[] = [];
  try {
    for (let i = 2; i <= instances; i++) {
      extra.push(await startService(b.databaseUrl, { workDir: b.workDir, log: b.log, logFile: serverLog.replace(/\.log$/, `-${i}.log`) }));
    }
    const all = [b.url, ...extra.map((s) => s.url)];
    let n = 0;
    const singles = Array.from({ length: FINGERPRINTS }, (_, k) => JSON.stringify(event(`Single${k}`, 10, k)));
    const batches = issueBatches();
    const workloads = [
      { key: "b", title: "single events, 1k fingerprints", size: 1, body: () => singles[n++ % FINGERPRINTS] },
      { key: "d", title: "batches of 100, 1k fingerprints", size: 100, body: () => batches[n++ % batches.length] },
    ];
    const rows: Row[] = [];
    const results: Record<string, { one: Side; many: Side }> = {};
    for (const w of workloads) {
      const one = await b.step(`(i-${w.key}) ${w.title} on one instance`, () => side(b, [b.url], `bench-one-${w.key}`, w.size, w.body));
      const many = await b.step(`(i-${w.key}) ${w.title} on ${instances} instances`, () => side(b, all, `bench-many-${w.key}`, w.size, w.body));
      results[w.key] = { one, many };
      // every answered event is counted, and at most the requests in flight when the load stopped
      // (written, their answers cut off) on top; the rollups hold exactly what the issues count
      const exact = (s: Side) => s.counted >= s.ok * w.size && s.counted <= s.ok * w.size + s.inFlight && s.rolled === s.counted;
      const unit = w.size === 1 ? "req/s" : "events/s";
      const describe = (s: Side) =>
        `${fmt(s.rps * w.size)} ${unit}, ${fmt(s.ok * w.size)} answered (+${fmt(s.counted - s.ok * w.size)} in flight at the end), ${fmt(s.counted)} counted, ${fmt(s.rolled)} in rollups, caught up ${fmt(s.caughtUpMs)} ms after` +
        (s.non2xx + s.errors + s.timeouts ? `, non2xx ${s.non2xx} errors ${s.errors} timeouts ${s.timeouts}` : "");
      const ratio = many.rps / one.rps;
      rows.push({
        scenario: `(i-${w.key}) ${w.title}, ${instances} instances`,
        figure: `${fmt(many.rps * w.size)} ${unit}`,
        detail: `${instances}: ${describe(many)}; 1: ${describe(one)}`,
        ratio: `${fmt(ratio, 2)} of 1`,
        target: ">= 1.0 of one, exact counts",
        result: verdict(ratio >= 1 && exact(one) && exact(many)),
      });
    }
    return { rows, results: { instances: { count: instances, ...results, logs: path.dirname(serverLog) } } };
  } finally {
    for (const s of extra) await stopService(s.child);
  }
}
