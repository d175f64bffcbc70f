import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { startEmbeddedPostgres } from "../../db/embedded.js";
import { SHUTDOWN_DRAIN_MS, startServer, type RunningServer } from "../../server.js";
import { mergeLockKey } from "../../db/events.js";
import { connect, createProject, freshDatabaseUrl, startTestApp, testConfig, type TestApp } from "../support/server.js";
import { spawnInstance, stopInstance, waitHealthy, type Instance } from "../support/instance.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";
import { login, makeUser } from "../support/team.js";

/**
 * Faults a production install meets: database connections dropped under load, SIGTERM under load,
 * instances starting together. The service runs as its own process here (signals and crashes are
 * about the process), and only its own test database is touched.
 */

type Outcome = { status: number; traceIds: string[]; connection?: string } | { error: string; traceIds: string[] };

async function postEvents(baseUrl: string, apiKey: string, traceIds: string[], init: RequestInit = {}): Promise<Outcome> {
  const body = JSON.stringify({ errors: traceIds.map((t, i) => ({ message: `Fault load ${i % 3}`, trace_id: t })) });
  try {
    const res = await fetch(`${baseUrl}/api/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body,
      ...init,
    });
    await res.arrayBuffer();
    return { status: res.status, traceIds };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    return { error: cause?.code ?? String(err), traceIds };
  }
}

/** Trace ids among `ids` that have a stored raw row (traced events are never throttled). */
async function storedTraceIds(sql: Sql, projectId: string, ids: string[]): Promise<Set<string>> {
  const rows = await sql<{ trace_id: string }[]>`
    select distinct trace_id::text from events where project_id = ${projectId} and trace_id = any(${ids}::uuid[])`;
  return new Set(rows.map((r) => r.trace_id));
}

const acknowledged = (outcomes: Outcome[]) => outcomes.filter((o) => "status" in o && o.status === 200).flatMap((o) => o.traceIds);

describe("database connections terminated during concurrent ingest", () => {
  let databaseUrl: string;
  let sql: Sql;
  let instance: Instance;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    instance = await spawnInstance(databaseUrl, { JOBS_ENABLED: "true" });
    await waitHealthy(instance);
    sql = connect(databaseUrl);
  });

  afterAll(async () => {
    await stopInstance(instance);
    await sql?.end();
  });

  it("20 clients, single events and batches of 100, 10 terminations: every event answered 200 is counted once and stored once, none answered 503 is", async () => {
    const { apiKey, projectId } = await createProject(sql);
    const database = new URL(databaseUrl).pathname.slice(1);
    const outcomes: Outcome[] = [];
    let loading = true;
    // traced (always stored, so each event can be found) and without an Idempotency-Key: exactly
    // once must hold without one
    const clients = Array.from({ length: 20 }, async (_, c) => {
      for (let n = 0; loading; n++) {
        const size = (c + n) % 2 === 0 ? 1 : 100;
        outcomes.push(await postEvents(instance.url, apiKey, Array.from({ length: size }, () => randomUUID())));
      }
    });

    // what a PostgreSQL restart, a failover or a pooler recycle does to the service's connections,
    // aimed where it hurts most: each round ends every backend the moment one is seen in COMMIT (or
    // after 2 s), when the service cannot tell from its socket whether the write landed
    let terminated = 0;
    let duringCommit = 0;
    await new Promise((r) => setTimeout(r, 1_000));
    for (let round = 0; round < 10; round++) {
      await new Promise((r) => setTimeout(r, 500));
      const until = Date.now() + 2_000;
      for (;;) {
        const [{ committing }] = await sql<{ committing: number }[]>`
          select count(*)::int as committing from pg_stat_activity
          where datname = ${database} and pid <> pg_backend_pid() and state = 'active' and query ilike 'commit%'`;
        if (committing > 0 || Date.now() >= until) {
          duringCommit += committing > 0 ? 1 : 0;
          break;
        }
      }
      const rows = await sql`
        select pg_terminate_backend(pid) from pg_stat_activity
        where datname = ${database} and pid <> pg_backend_pid() and backend_type = 'client backend'`;
      terminated += rows.length;
    }
    loading = false;
    await Promise.all(clients);

    expect(terminated).toBeGreaterThan(0);
    expect(instance.child.exitCode, instance.output()).toBeNull();
    // a request whose write could not be done answers 503 (retry later); nothing else goes wrong
    const statuses = outcomes.map((o) => ("status" in o ? o.status : o.error));
    for (const s of new Set(statuses)) expect([200, 503]).toContain(s);
    const tally = statuses.reduce<Record<string, number>>((t, s) => ({ ...t, [s]: (t[s] ?? 0) + 1 }), {});
    const acked = acknowledged(outcomes);
    const refused = outcomes.filter((o) => "status" in o && o.status !== 200).flatMap((o) => o.traceIds);
    console.info(`terminated ${terminated} backends (${duringCommit} of 10 rounds during a COMMIT) during ${outcomes.length} requests (${acked.length} events answered 200): ${JSON.stringify(tally)}`);

    // exactly once: the occurrences counted are the events answered 200, each stored once; an event
    // answered 503 is neither stored nor counted
    expect(acked.length).toBeGreaterThan(0);
    const [{ counted }] = await sql<{ counted: number }[]>`
      select coalesce(sum(count), 0)::int as counted from error_groups where project_id = ${projectId}`;
    expect(counted).toBe(acked.length);
    const copies = await sql<{ trace_id: string; n: number }[]>`
      select trace_id::text, count(*)::int as n from events where project_id = ${projectId} group by trace_id`;
    const stored = new Map(copies.map((r) => [r.trace_id, r.n]));
    expect(copies.filter((r) => r.n !== 1)).toEqual([]);
    expect(acked.filter((t) => stored.get(t) !== 1)).toEqual([]);
    expect(refused.filter((t) => stored.has(t))).toEqual([]);
    expect(stored.size).toBe(acked.length);

    // the service recovered without a restart: the next requests all succeed at once
    const after: Outcome[] = [];
    for (let i = 0; i < 20; i++) after.push(await postEvents(instance.url, apiKey, [randomUUID()]));
    expect(after.map((o) => ("status" in o ? o.status : o.error))).toEqual(Array(20).fill(200));
    const ready = await fetch(`${instance.url}/api/ready`);
    expect(ready.status).toBe(200);
    expect(instance.child.exitCode).toBeNull();
    expect(instance.stderr()).not.toMatch(/TypeError|uncaught/i);
  }, 240_000);
});

const eventsBody = (traceIds: string[]) => JSON.stringify({ errors: traceIds.map((t) => ({ message: "Shutdown load", trace_id: t })) });

type Hold = { agent: http.Agent; taken: () => void; released: Promise<void> };

/**
 * One POST on its own connection (no keep-alive reuse, so a connection the server closes while idle
 * cannot be mistaken for a cut request). With `hold`, the headers go first with
 * `Expect: 100-continue`: `taken()` is called once the server has read them and answered 100 Continue
 * (the request is then in the server's hands), and the body follows when `released` resolves.
 */
function postOnce(baseUrl: string, apiKey: string, traceIds: string[], hold?: Hold): Promise<Outcome> {
  const body = Buffer.from(eventsBody(traceIds));
  return new Promise((resolve) => {
    const req = http.request(`${baseUrl}/api/ingest`, {
      method: "POST",
      agent: hold?.agent ?? false,
      headers: {
        "content-type": "application/json",
        "x-api-key": apiKey,
        "content-length": body.length,
        ...(hold ? { expect: "100-continue" } : {}),
      },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, traceIds, connection: res.headers.connection }));
      res.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message, traceIds }));
    });
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message, traceIds }));
    if (!hold) return req.end(body);
    req.on("continue", () => {
      hold.taken();
      void hold.released.then(() => req.end(body));
    });
    req.flushHeaders();
  });
}

describe.each([
  { mode: "DATABASE_URL", embedded: false },
  { mode: "embedded PostgreSQL", embedded: true },
])("SIGTERM under ingest load ($mode)", ({ embedded }) => {
  let instance: Instance;
  let sql: Sql;
  let databaseUrl: string;
  let pgPort = 0;

  beforeAll(async () => {
    if (embedded) {
      // the system picks the embedded server's port (a port picked here could be taken before it binds)
      instance = await spawnInstance("", { JOBS_ENABLED: "true", EMBEDDED_PG_PORT: "0" });
    } else {
      databaseUrl = await freshDatabaseUrl();
      instance = await spawnInstance(databaseUrl, { JOBS_ENABLED: "true" });
    }
    await waitHealthy(instance);
    if (embedded) {
      const password = readFileSync(path.join(instance.dataDir, "postgres-password"), "utf8").trim();
      // PostgreSQL writes its port on the fourth line of postmaster.pid
      pgPort = Number(readFileSync(path.join(instance.dataDir, "postgres", "postmaster.pid"), "utf8").split("\n")[3]);
      expect(pgPort).toBeGreaterThan(0);
      databaseUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/postgres`;
    }
    sql = connect(databaseUrl);
  });

  afterAll(async () => {
    await stopInstance(instance);
    await sql?.end();
    if (instance) rmSync(instance.dataDir, { recursive: true, force: true });
  });

  it("answers what is in flight, stores every acknowledged event, stops the database last and exits 0", async () => {
    const { apiKey, projectId } = await createProject(sql);
    await sql.end();

    const outcomes: Outcome[] = [];
    let loading = true;
    const clients = Array.from({ length: 8 }, async () => {
      while (loading) {
        const o = await postOnce(instance.url, apiKey, Array.from({ length: 1 + (outcomes.length % 5) }, () => randomUUID()));
        outcomes.push(o);
        // the listener is closed: the shutdown has begun and nothing more is accepted
        if ("error" in o && o.error === "ECONNREFUSED") break;
      }
    });
    while (outcomes.length < 40) await new Promise((r) => setTimeout(r, 20));

    // three requests the server has taken in, their bodies not yet sent, when the signal arrives
    // (on keep-alive connections)
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const keepAlive = new http.Agent({ keepAlive: true });
    let taken = 0;
    const inFlight = Array.from({ length: 3 }, () =>
      postOnce(instance.url, apiKey, [randomUUID(), randomUUID()], { agent: keepAlive, released, taken: () => taken++ }),
    );
    while (taken < 3) await new Promise((r) => setTimeout(r, 20));
    const signalled = performance.now();
    instance.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    release();
    const slow = await Promise.all(inFlight);
    loading = false;
    await Promise.all(clients);
    const exit = await instance.exited;
    const shutdownMs = performance.now() - signalled;

    expect(exit, instance.output()).toEqual({ code: 0, signal: null });
    expect(slow.map((o) => ("status" in o ? o.status : o.error))).toEqual([200, 200, 200]);
    // their connections close after the answer, so the shutdown does not wait for them to idle out
    expect(slow.map((o) => ("status" in o ? o.connection : o.error))).toEqual(["close", "close", "close"]);
    keepAlive.destroy();
    // no request was answered with an error: each got its answer or found the listener closed
    const statuses = new Set(outcomes.map((o) => ("status" in o ? o.status : o.error)));
    for (const s of statuses) expect([200, "ECONNREFUSED", "ECONNRESET"]).toContain(s);
    expect(instance.stderr()).not.toMatch(/pg-boss error|unexpected error|Error:/);

    if (embedded) {
      // the embedded server was stopped cleanly, after the app
      expect(existsSync(path.join(instance.dataDir, "postgres", "postmaster.pid"))).toBe(false);
    }
    const db = embedded ? await startEmbeddedPostgres(instance.dataDir, pgPort) : null;
    const check = connect(databaseUrl);
    try {
      const acked = [...acknowledged(outcomes), ...acknowledged(slow)];
      const stored = await storedTraceIds(check, projectId, acked);
      expect(acked.filter((t) => !stored.has(t))).toEqual([]);
      // a request that got no answer was never taken in: nothing of it was stored
      const unanswered = outcomes.filter((o) => "error" in o).flatMap((o) => o.traceIds);
      expect([...(await storedTraceIds(check, projectId, unanswered))]).toEqual([]);
      console.info(`SIGTERM under load: exit 0 after ${shutdownMs.toFixed(0)} ms; ${acked.length} acknowledged events all stored; ${outcomes.length} requests: ${[...statuses].join("/")}`);
    } finally {
      await check.end();
      await db?.stop();
    }
  }, 300_000);
});

describe("instances starting together on an empty database", () => {
  it("two instances with jobs, started at once, both come up healthy (4 rounds)", async () => {
    for (let round = 0; round < 4; round++) {
      const url = await freshDatabaseUrl();
      const configs = [0, 1].map(() => testConfig(url, { JOBS_ENABLED: "true" }));
      const started = await Promise.allSettled(configs.map((c) => startServer(c)));
      const running = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      try {
        expect(started.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))).toEqual(["ok", "ok"]);
        for (const r of running) {
          const ready = await fetch(`${r.url}/api/ready`);
          expect(ready.status).toBe(200);
        }
      } finally {
        await Promise.all(running.map((r: RunningServer) => r.close()));
        for (const c of configs) rmSync(c.dataDir, { recursive: true, force: true });
      }
    }
  }, 300_000);
});

describe("the throttle across two instances with a short window", () => {
  const WINDOW_SECONDS = 3;
  const LIMIT = 30;
  let first: TestApp;
  let second: RunningServer;
  let secondConfig: ReturnType<typeof testConfig>;

  beforeAll(async () => {
    const env = { THROTTLE_WINDOW_SECONDS: String(WINDOW_SECONDS), THROTTLE_LIMIT: String(LIMIT), INGEST_CONCURRENCY: "8" };
    first = await startTestApp(env);
    secondConfig = testConfig(first.databaseUrl, env);
    second = await startServer(secondConfig);
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    if (secondConfig) rmSync(secondConfig.dataDir, { recursive: true, force: true });
  });

  it("20 clients over 3 fingerprints for several windows: no rolling window of receive time holds more than the limit", async () => {
    const { apiKey, projectId } = await createProject(first.sql);
    const until = Date.now() + WINDOW_SECONDS * 4 * 1000;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, c) => {
        for (let n = 0; Date.now() < until; n++) {
          const url = (c + n) % 2 === 0 ? first.url : second.url;
          const res = await fetch(`${url}/api/ingest`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-api-key": apiKey },
            body: JSON.stringify({ errors: [0, 1].map((k) => ({ message: `Throttle ${"ABC"[(c + n + k) % 3]} at ${n}` })) }),
          });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
      }),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));

    // for every stored row: the rows of its group received in the window that ends at it
    const windows = await first.sql<{ group_id: string; worst: number; stored: number }[]>`
      select e.group_id, max(w.n)::int as worst, count(*)::int as stored
      from events e
      cross join lateral (
        select count(*) as n from events e2
        where e2.project_id = e.project_id and e2.group_id = e.group_id
          and e2.received_at > e.received_at - make_interval(secs => ${WINDOW_SECONDS})
          and e2.received_at <= e.received_at
      ) w
      where e.project_id = ${projectId}
      group by e.group_id`;
    expect(windows).toHaveLength(3);
    for (const w of windows) {
      // the run spanned several windows, so the check covers windows that followed full ones
      expect(w.stored).toBeGreaterThan(LIMIT);
      expect(w.worst, w.group_id).toBeLessThanOrEqual(LIMIT);
    }
    console.info(`throttle across instances: ${statuses.length} requests, worst windows ${windows.map((w) => w.worst).join("/")} of ${LIMIT}`);
  }, 240_000);
});

describe("a stalled database", () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let check: Sql;

  beforeAll(async () => {
    const databaseUrl = await freshDatabaseUrl();
    const u = new URL(databaseUrl);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    // the service reaches the database only through the proxy; the test reads it directly
    app = await startTestApp({ DB_TIMEOUT_MS: "2000" }, proxy.via(databaseUrl));
    check = connect(databaseUrl);
  });

  afterAll(async () => {
    proxy?.resume();
    await app?.close();
    await check?.end();
    await proxy?.close();
  });

  it("readiness answers 503 and ingest 503 with Retry-After while it stalls; both recover when it answers again", async () => {
    const { apiKey, projectId } = await createProject(check);
    const post = (path: string, body: unknown) =>
      fetch(`${app.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: JSON.stringify(body),
      });
    const send = (message: string) => post("/api/ingest", { message });
    // every ingest door shares the write deadline: a Sentry event (its key checks included) and an economy push
    const sendSentry = (message: string) => post(`/api/${projectId}/store/?sentry_key=${apiKey}`, { message });
    const push = (cash: number) => post("/api/economy/ingest", { players: [{ user_id: 7, profile: { RPCharacterOne: { Cash: cash } } }] });
    expect((await send("before the stall")).status).toBe(200);
    expect((await sendSentry("sentry before the stall")).status).toBe(200);
    expect((await push(1)).status).toBe(200);
    const cookie = await login(app, (await makeUser(check)).email);

    proxy.stall();
    // the stall never ends by itself here, so any answer at all shows the wait is bounded
    let t = performance.now();
    const ready = await fetch(`${app.url}/api/ready`);
    const readyMs = performance.now() - t;
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: "unavailable", database: "unreachable" });
    t = performance.now();
    const [stalled, sentryStalled, pushStalled] = await Promise.all([send("during the stall"), sendSentry("sentry during the stall"), push(2)]);
    const ingestMs = performance.now() - t;
    for (const answer of [stalled, sentryStalled, pushStalled]) {
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(await answer.json()).toEqual({ error: "unavailable", message: expect.any(String) });
    }
    console.info(`stalled database: /api/ready answered 503 after ${readyMs.toFixed(0)} ms, ingest 503 after ${ingestMs.toFixed(0)} ms`);
    // reads and pages spend their database budget on statements the server never answers
    t = performance.now();
    const [read, page] = await Promise.all([
      fetch(`${app.url}/api/v1/errors`, { headers: { "x-api-key": apiKey } }),
      fetch(`${app.url}/projects`, { headers: { cookie } }),
    ]);
    const readMs = performance.now() - t;
    for (const answer of [read, page]) {
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(await read.json()).toEqual({ error: "unavailable", message: expect.any(String) });
    console.info(`stalled database: an API read and a page answered 503 after ${readMs.toFixed(0)} ms`);

    proxy.resume();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 100));
      status = (await fetch(`${app.url}/api/ready`)).status;
    }
    expect(status).toBe(200);
    expect((await send("after the stall")).status).toBe(200);
    const rows = await check<{ message: string }[]>`select message from events where project_id = ${projectId} order by id`;
    // the write held up by the stall was given up at its deadline: when the database answered again it
    // rolled back instead of committing, so the request answered 503 wrote nothing
    console.info("ROWS", JSON.stringify(rows.map((r) => r.message)));
    expect(rows.map((r) => r.message).sort()).toEqual(["after the stall", "before the stall", "sentry before the stall"]);
    const [player] = await check<{ cash: string }[]>`select cash::text from economy_snapshots where project_id = ${projectId} and user_id = 7`;
    expect(player.cash).toBe("1");
  }, 120_000);

  it("ingest answers 503 when the project's grouping rules and learned templates are due to be read again during the stall", async () => {
    const { apiKey } = await createProject(check);
    const send = (message: string) =>
      fetch(`${app.url}/api/ingest`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body: JSON.stringify({ message }) });
    expect((await send("before the stall")).status).toBe(200);
    // the key stays cached (60 s); the rules and templates are read again after 5 s
    await new Promise((r) => setTimeout(r, 5_500));
    proxy.stall();
    try {
      const answer = await send("during the stall");
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      proxy.resume();
    }
  }, 120_000);
});

describe("SIGTERM while a write waits on the database", () => {
  let databaseUrl: string;
  let sql: Sql;
  let instance: Instance;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    // the write must still be waiting when the shutdown's bound runs out
    instance = await spawnInstance(databaseUrl, { DB_TIMEOUT_MS: "120000" });
    await waitHealthy(instance);
    sql = connect(databaseUrl);
  });

  afterAll(async () => {
    await stopInstance(instance);
    await sql?.end();
    if (instance) rmSync(instance.dataDir, { recursive: true, force: true });
  });

  it("the shutdown waits a bounded time: the waiting request answers 503, the process exits 1 with what it gave up, and nothing of it is stored", async () => {
    const { apiKey, projectId } = await createProject(sql);
    const database = new URL(databaseUrl).pathname.slice(1);
    // a merge of this project would hold its lock exclusively; every ingest write shares it, so the
    // write waits while the database itself answers (it is busy, not stalled: no 503 of its own)
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const holding = new Promise<void>((r) => (locked = r));
    const holder = sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtextextended(${mergeLockKey(projectId)}, 0))`;
      locked();
      await released;
    });
    await holding;
    const traceId = randomUUID();
    const pending = postOnce(instance.url, apiKey, [traceId]);
    for (let waiting = 0; waiting === 0; ) {
      await new Promise((r) => setTimeout(r, 50));
      [{ waiting }] = await sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity
        where datname = ${database} and pid <> pg_backend_pid() and wait_event_type = 'Lock' and query like '%pg_advisory_xact_lock_shared%'`;
    }

    // the lock is released only after the process has exited: an unbounded shutdown never ends here
    const signalled = performance.now();
    instance.child.kill("SIGTERM");
    const [answer, exit] = await Promise.all([pending, instance.exited]);
    const shutdownMs = performance.now() - signalled;
    release();
    await holder;

    expect(exit, instance.output()).toEqual({ code: 1, signal: null });
    expect(answer).toMatchObject({ status: 503 });
    expect(instance.stderr()).toMatch(/\[shutdown\] gave up waiting after 10 s: 1 events of 1 ingest requests not acknowledged \(1 writes still waiting on the database\)/);
    // the abandoned write was rolled back with its connection once the lock was free
    for (let left = 1; left > 0; ) {
      await new Promise((r) => setTimeout(r, 50));
      [{ left }] = await sql<{ left: number }[]>`
        select count(*)::int as left from pg_stat_activity
        where datname = ${database} and pid <> pg_backend_pid() and query like '%pg_advisory_xact_lock_shared%'`;
    }
    expect([...(await storedTraceIds(sql, projectId, [traceId]))]).toEqual([]);
    console.info(`SIGTERM with a write held by a lock: 503 and exit 1 after ${shutdownMs.toFixed(0)} ms (bound ${SHUTDOWN_DRAIN_MS} ms)`);
  }, 120_000);
});
