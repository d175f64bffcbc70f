/**
 * The HTTP floor every other figure is read against: (a) the service's health check `GET /api/ingest`
 * (HTTP, Express and dispatch, no database) next to (a0) plain Express answering the same body on one
 * no-op route (noop-server.ts). Also the unmeasured warm-up that comes before them.
 */
import { CONNECTIONS, cannon, fmt, health, startNoop, verdict, type Bench, type Measured, type Row } from "./harness.js";
import { event } from "./payloads.js";

/** GET and POST /api/ingest for 3 s each, so the first measured scenario does not pay for cold code paths. */
export async function warmUp(b: Bench, key: string) {
  const warm = JSON.stringify(event("Warmup", 10, 0));
  await b.step("warm-up (not measured): GET and POST /api/ingest, 3 s each", async () => {
    await cannon({ url: b.url, path: "/api/ingest", seconds: 3, connections: 10 });
    await cannon({ url: b.url, path: "/api/ingest", key, body: () => warm, seconds: 3, connections: 10 });
  });
}

/**
 * (a) and (a0) alternate, twice each, and each keeps its better run: load from outside the bench then
 * skews both alike instead of whichever happened to run during it.
 */
export async function runCeiling(b: Bench): Promise<{ ceiling: Measured; noop: Measured; rows: Row[] }> {
  const noopServer = await startNoop();
  await cannon({ url: noopServer.url, path: "/api/ingest", seconds: 3, connections: 10 });
  const better = (x: Measured, y: Measured) => (x.rps >= y.rps ? x : y);
  let ceiling: Measured | undefined;
  let noop: Measured | undefined;
  for (let round = 1; round <= 2; round++) {
    const c = await b.step(`(a) ceiling: GET /api/ingest (${round}/2)`, () => cannon({ url: b.url, path: "/api/ingest", seconds: b.duration, connections: CONNECTIONS }));
    const o = await b.step(`(a0) plain Express, one no-op route (${round}/2)`, () => cannon({ url: noopServer.url, path: "/api/ingest", seconds: b.duration, connections: CONNECTIONS }));
    b.log(`  ${fmt(c.rps)} vs ${fmt(o.rps)} req/s`);
    ceiling = ceiling ? better(ceiling, c) : c;
    noop = noop ? better(noop, o) : o;
  }
  noopServer.child.kill("SIGTERM");
  if (!ceiling || !noop) throw new Error("no ceiling measured");
  const rows: Row[] = [
    { scenario: "(a0) plain Express no-op route", figure: `${fmt(noop.rps)} req/s`, detail: health(noop), ratio: "", target: "", result: "" },
    { scenario: "(a) ceiling GET /api/ingest", figure: `${fmt(ceiling.rps)} req/s`, detail: health(ceiling), ratio: `${fmt(ceiling.rps / noop.rps, 2)} of (a0)`, target: ">= 0.6 of (a0)", result: verdict(ceiling.rps / noop.rps >= 0.6) },
  ];
  return { ceiling, noop, rows };
}
