/**
 * What hostile bodies cost the server, measured on the real process (the production build, spawned
 * as `npm run serve` would run it) against a PostgreSQL server:
 *
 *   tsx scripts/measure-decode.ts [--admin postgres://postgres@127.0.0.1:5432/postgres] [--bombs 60,100]
 *                                 [--skip login,envelope] [--env NAME=value ...]
 *
 * - a login body under 2,801 stacked gzip codings: wall time and the server's CPU seconds, alone
 *   and four at once;
 * - a Sentry envelope keyed only by its header's dsn, under 150 gzip codings each inflating to 20 MB;
 * - N concurrent 1 MB gzip bombs to the envelope endpoint (a valid key in the query): the answers,
 *   the server's peak RSS during the load and its RSS 5, 30 and 60 s after.
 * CPU is read from /proc/<pid>/stat and RSS from /proc/<pid>/status (Linux only). Run it on a
 * quiet machine; it prints one JSON object per measurement.
 */
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import postgres from "postgres";
import { createSql } from "../db/client.js";
import { insertProject } from "../db/projects.js";
import { insertDsnKey, projectDsnId } from "../db/sentry.js";
import { spawnInstance, stopInstance, waitHealthy, type Instance } from "../test/support/instance.js";
import { cpuSeconds, envelopeOf, gzipBomb, rssMiB, stackedGzip } from "../test/support/hostile-bodies.js";

const { values } = parseArgs({
  options: {
    admin: { type: "string", default: process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" },
    bombs: { type: "string", default: "60,100" },
    skip: { type: "string", default: "" },
    // extra environment for the server, e.g. --env MALLOC_ARENA_MAX=2
    env: { type: "string", multiple: true, default: [] },
  },
});
const skip = new Set(values.skip!.split(",").filter(Boolean));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const print = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

type Answer = { status: number; error?: string } | { failed: string };

async function post(url: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  try {
    const res = await fetch(url, { method: "POST", headers, body: new Uint8Array(body) });
    const text = await res.text();
    let error: string | undefined;
    try {
      error = JSON.parse(text).error;
    } catch {
      // not the error body
    }
    return { status: res.status, error };
  } catch (err) {
    return { failed: String((err as { cause?: { code?: string } }).cause?.code ?? err) };
  }
}

const tally = (answers: Answer[]) => {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const k = "failed" in a ? `failed:${a.failed}` : `${a.status}${a.error ? ` ${a.error}` : ""}`;
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
};

/** Runs `work` and reports its wall time and the server's CPU seconds meanwhile. */
async function timed<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; wallS: number; cpuS: number }> {
  const cpu0 = cpuSeconds(pid);
  const t0 = performance.now();
  const result = await work();
  const wallS = (performance.now() - t0) / 1000;
  return { result, wallS: round(wallS), cpuS: round(cpuSeconds(pid) - cpu0) };
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

async function main() {
  const admin = postgres(values.admin!, { max: 1, onnotice: () => {} });
  const name = `measure_decode_${randomBytes(4).toString("hex")}`;
  await admin.unsafe(`create database ${name}`);
  const u = new URL(values.admin!);
  u.pathname = `/${name}`;
  const databaseUrl = u.toString();
  let instance: Instance | undefined;
  try {
    const extra = Object.fromEntries(values.env!.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
    instance = await spawnInstance(databaseUrl, { SENTRY_MAX_PENDING_EVENTS: "1000000", ...extra });
    await waitHealthy(instance);
    const pid = instance.child.pid!;
    const base = instance.url;
    const sql = createSql(databaseUrl, 2);
    const project = await insertProject(sql, "Measure");
    const dsnKey = await insertDsnKey(sql, project.id, randomBytes(16).toString("hex"), "measure", null);
    const dsnId = (await projectDsnId(sql, project.id))!;
    await sql.end();
    const envelopeUrl = `${base}/api/${dsnId}/envelope/`;
    const dsn = `http://${dsnKey.public_key}@127.0.0.1/${dsnId}`;
    print({ idleRssMiB: round(rssMiB(pid), 1) });

    if (!skip.has("login")) {
      const credentials = Buffer.from(JSON.stringify({ email: "nobody@example.test", password: "x".repeat(60) }));
      const stacked = stackedGzip(credentials, 2801);
      const headers = { "content-type": "application/json", "content-encoding": stacked.encoding };
      const url = `${base}/api/auth/login`;
      const one = await timed(pid, () => post(url, stacked.body, headers));
      print({ what: "login, 2,801 gzip codings", bodyBytes: stacked.body.length, headerBytes: stacked.encoding.length, answer: tally([one.result]), wallS: one.wallS, serverCpuS: one.cpuS });
      const four = await timed(pid, () => Promise.all(Array.from({ length: 4 }, () => post(url, stacked.body, headers))));
      print({ what: "login, 2,801 gzip codings, 4 at once", answers: tally(four.result), wallS: four.wallS, serverCpuS: four.cpuS });
    }

    if (!skip.has("envelope")) {
      const layered = stackedGzip(envelopeOf("layers", dsn), 150, 20 * 1024 * 1024);
      const headers = { "content-type": "application/x-sentry-envelope", "content-encoding": layered.encoding };
      const one = await timed(pid, () => post(envelopeUrl, layered.body, headers));
      print({ what: "envelope keyed by its dsn, 150 gzip codings of 20 MB", bodyBytes: layered.body.length, answer: tally([one.result]), wallS: one.wallS, serverCpuS: one.cpuS });
    }

    const bomb = gzipBomb(1024 * 1024);
    for (const n of values.bombs!.split(",").map(Number).filter((x) => x > 0)) {
      await sleep(2000);
      const before = rssMiB(pid);
      let peak = before;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, rssMiB(pid));
          await sleep(20);
        }
      })();
      const headers = { "content-type": "application/x-sentry-envelope", "content-encoding": "gzip" };
      const load = await timed(pid, () => Promise.all(Array.from({ length: n }, () => post(`${envelopeUrl}?sentry_key=${dsnKey.public_key}`, bomb, headers))));
      sampling = false;
      await sampler;
      const after: Record<string, number> = {};
      let waited = 0;
      for (const s of [5, 30, 60]) {
        await sleep((s - waited) * 1000);
        waited = s;
        after[`${s}s`] = round(rssMiB(pid), 1);
      }
      print({
        what: `${n} concurrent 1 MB gzip bombs to the envelope endpoint`,
        bombBytes: bomb.length,
        answers: tally(load.result),
        wallS: load.wallS,
        serverCpuS: load.cpuS,
        rssBeforeMiB: round(before, 1),
        rssPeakMiB: round(peak, 1),
        rssAfterMiB: after,
      });
    }
  } finally {
    await stopInstance(instance);
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
