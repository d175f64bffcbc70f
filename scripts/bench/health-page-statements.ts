/**
 * The Release health page's statements one by one, on one connection (docs/benchmarks.md):
 *
 *   npx tsx scripts/bench/health-page-statements.ts <database url> [window ...]
 *
 * On a database holding the (health) bench's generated data (a `BENCH_KEEP=1` run of
 * `BENCH_SCENARIOS=health`, or `health-profile.ts`), reads the page's data (`releaseHealthData`, the
 * releases route's loader without the session and frame reads) once per window (default 7d and 30d),
 * recording every statement it sends; then runs each recorded statement STATEMENT_RUNS times (default
 * 30) in turn on one connection, and prints its median time, the backend's CPU per run (/proc, 10 ms
 * ticks summed over the runs), its rows, and the buffers of one `EXPLAIN (ANALYZE, BUFFERS)`.
 */
import { createSql } from "../../db/client.js";
import { releaseHealthData } from "../../app/health/pages.server.js";
import { cpuMicros } from "./harness.js";

const RUNS = Number(process.env.STATEMENT_RUNS ?? 30);

type Recorded = { text: string; params: unknown[] };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A statement's first words and the table it reads, for the printout. */
function label(text: string) {
  const one = text.replace(/\s+/g, " ").trim();
  const from = one.match(/from (\w+)/g)?.map((f) => f.slice(5)).filter((t, i, a) => a.indexOf(t) === i) ?? [];
  return `${one.slice(0, 60)}… [${from.join(", ")}]`;
}

function sumBuffers(plan: Record<string, unknown>): number {
  return Number(plan["Shared Hit Blocks"] ?? 0) + Number(plan["Shared Read Blocks"] ?? 0);
}

async function main() {
  const url = process.argv[2];
  const windows = process.argv.length > 3 ? process.argv.slice(3) : ["7d", "30d"];
  let recording: Recorded[] | null = null;
  const sql = createSql(url, 1);
  const rec = createSql(url, 4);
  // postgres.js calls `debug` with every statement it sends
  Object.assign(rec.options, { debug: (_c: number, text: string, params: unknown[]) => recording?.push({ text, params }) });
  const [project] = await sql<{ id: string }[]>`select id from projects where name = 'bench-health-reads'`;
  const [user] = await sql<{ id: string; email: string }[]>`select id, email from users where email = 'health-reader@example.test'`;
  if (!project || !user) throw new Error("no (health) bench data in that database");
  const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  for (const w of windows) {
    recording = [];
    const data = await releaseHealthData(rec, user, project.id, new URLSearchParams({ window: w }));
    const statements = recording;
    recording = null;
    console.log(`\n${w}: ${statements.length} statements, ${JSON.stringify(data).length} bytes of data`);
    let total = 0;
    let totalCpu = 0;
    for (const s of statements) {
      const times: number[] = [];
      let rows = 0;
      const cpu0 = cpuMicros(pid);
      for (let k = 0; k < RUNS; k++) {
        const t = performance.now();
        rows = (await sql.unsafe(s.text, s.params as never[])).length;
        times.push(performance.now() - t);
      }
      const cpu = (cpuMicros(pid) - cpu0) / RUNS / 1000;
      const [{ "QUERY PLAN": [plan] }] = await sql.unsafe(`explain (analyze, buffers, format json) ${s.text}`, s.params as never[]);
      const m = median(times);
      total += m;
      totalCpu += cpu;
      console.log(`${m.toFixed(2).padStart(7)} ms  cpu ${cpu.toFixed(2).padStart(6)} ms  ${String(rows).padStart(5)} rows  ${String(sumBuffers(plan.Plan)).padStart(6)} buffers  ${label(s.text)}`);
    }
    console.log(`${total.toFixed(2).padStart(7)} ms  cpu ${totalCpu.toFixed(2).padStart(6)} ms  in all (one after another)`);
  }
  await sql.end();
  await rec.end();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
