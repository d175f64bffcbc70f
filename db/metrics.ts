/**
 * The process's Prometheus metrics (docs/operations.md, "Metrics"): their definitions, the one-line
 * calls the code that does the work makes (ingest, writer, counter drain, alert deliveries), and the
 * figures read from the database when /metrics is scraped (drain lag, pg-boss queues, connections).
 *
 * One registry per process: prom-client's global one. The process (server.ts) and the app (the
 * Remix build, which bundles its own copy of this module) both import this file, so each metric is
 * taken from the registry when it is already there instead of being made twice: an increment in a
 * route and the exposition server.ts writes see the same counter. prom-client stays outside the
 * bundle (the build imports it), so there is one registry to find it in.
 *
 * Lives in db/, the floor every layer may import, and imports nothing above it. Labels hold only
 * bounded values (route ids, error codes, channel kinds, queue names): never a path, an id or a key.
 */
import client from "prom-client";
import { isDatabaseUnavailable, type Sql } from "./client.js";

const PREFIX = "roblox_monitor_";
export const registry = client.register;

function metric<T extends client.Metric>(name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

// process memory, CPU, event-loop lag, handles, GC: prom-client's default metrics, once per process
if (!registry.getSingleMetric("nodejs_eventloop_lag_seconds")) client.collectDefaultMetrics({ register: registry });

/** Seconds buckets for answers: from a cached read (a millisecond) to the database deadline (10 s). */
const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequestSeconds = metric(
  `${PREFIX}http_request_duration_seconds`,
  () =>
    new client.Histogram({
      name: `${PREFIX}http_request_duration_seconds`,
      help: "HTTP requests answered, by route (the API route's id, or assets/api/page/metrics), method and status, and how long each took to answer",
      labelNames: ["route", "method", "status"] as const,
      buckets: SECONDS,
    }),
);

export const ingestEvents = metric(
  `${PREFIX}ingest_events_total`,
  () =>
    new client.Counter({
      name: `${PREFIX}ingest_events_total`,
      help: "Error events of accepted ingest requests (native and Sentry), by outcome: accepted (stored), throttled (counted on the issue, not stored), ignored (dropped by a grouping rule)",
      labelNames: ["outcome"] as const,
    }),
);

export const ingestRefusals = metric(
  `${PREFIX}ingest_refused_requests_total`,
  () =>
    new client.Counter({
      name: `${PREFIX}ingest_refused_requests_total`,
      help: "Error ingest requests refused (none of their events written), by protocol (native, sentry) and reason (the error body's code)",
      labelNames: ["protocol", "reason"] as const,
    }),
);

export const writerTransactionSeconds = metric(
  `${PREFIX}writer_transaction_seconds`,
  () =>
    new client.Histogram({
      name: `${PREFIX}writer_transaction_seconds`,
      help: "Committed ingest write transactions (one batch of coalesced requests each), by how long each took",
      buckets: SECONDS,
    }),
);

export const writerPendingEvents = metric(
  `${PREFIX}writer_pending_events`,
  () => new client.Gauge({ name: `${PREFIX}writer_pending_events`, help: "Events submitted to the ingest writer and not yet committed or failed (queued or being written)" }),
);

export const counterDrainSeconds = metric(
  `${PREFIX}counter_drain_seconds`,
  () =>
    new client.Histogram({
      name: `${PREFIX}counter_drain_seconds`,
      help: "Drains of deferred counters this process ran (including those that found another instance draining), by how long each took",
      buckets: SECONDS,
    }),
);

export const counterDrainRows = metric(
  `${PREFIX}counter_drain_rows_total`,
  () => new client.Counter({ name: `${PREFIX}counter_drain_rows_total`, help: "Pending counter rows this process's drains applied" }),
);

export const counterDrainLag = metric(
  `${PREFIX}counter_drain_lag_seconds`,
  () => new client.Gauge({ name: `${PREFIX}counter_drain_lag_seconds`, help: "Age of the oldest pending counter row in the database (0 when none is pending)" }),
);

export const jobs = metric(
  `${PREFIX}jobs`,
  () =>
    new client.Gauge({
      name: `${PREFIX}jobs`,
      help: "pg-boss jobs by queue and state: created and retry (waiting), active (running), failed (failed for good, kept until pg-boss archives them)",
      labelNames: ["queue", "state"] as const,
    }),
);

export const alertDeliveries = metric(
  `${PREFIX}alert_deliveries_total`,
  () =>
    new client.Counter({
      name: `${PREFIX}alert_deliveries_total`,
      help: "Alert messages this process sent through a channel (rule alerts and channel tests), by channel kind and outcome (sent, failed)",
      labelNames: ["channel", "outcome"] as const,
    }),
);

export const dbConnections = metric(
  `${PREFIX}db_connections`,
  () =>
    new client.Gauge({
      name: `${PREFIX}db_connections`,
      help: "PostgreSQL sessions of this database under the pool's application_name (every instance that shares it), by state (active, idle, idle in transaction…)",
      labelNames: ["state"] as const,
    }),
);

export const dbPoolMax = metric(
  `${PREFIX}db_pool_max_connections`,
  () => new client.Gauge({ name: `${PREFIX}db_pool_max_connections`, help: "Connections this process's pool may open (DB_POOL_SIZE)" }),
);

export const databaseUp = metric(
  `${PREFIX}database_up`,
  () => new client.Gauge({ name: `${PREFIX}database_up`, help: "1 when the last scrape read the database figures, 0 when it could not (the drain lag is then NaN, jobs and connections left out)" }),
);

// ---- the calls the working code makes (one line each)

/** An ingest request's events, once written: what its answer counts. */
export function countIngest(r: { count: number; throttled: number; ignored?: number }): void {
  const ignored = r.ignored ?? 0;
  ingestEvents.inc({ outcome: "accepted" }, r.count - r.throttled - ignored);
  if (r.throttled > 0) ingestEvents.inc({ outcome: "throttled" }, r.throttled);
  if (ignored > 0) ingestEvents.inc({ outcome: "ignored" }, ignored);
}

/**
 * The reason the error body of `err` gives (app/http.server.ts errorResponse): an API error's code,
 * `unavailable` for a database past its deadline or out of reach, `internal` for anything else.
 */
export function refusalReason(err: unknown): string {
  if (err instanceof Error && typeof (err as { status?: unknown }).status === "number" && typeof (err as { code?: unknown }).code === "string") {
    return (err as unknown as { code: string }).code;
  }
  if (err instanceof Response) return `http_${err.status}`;
  return isDatabaseUnavailable(err) ? "unavailable" : "internal";
}

export function countIngestRefusal(protocol: "native" | "sentry", err: unknown): void {
  ingestRefusals.inc({ protocol, reason: refusalReason(err) });
}

/** Runs an ingest route's body, counting what it throws as a refusal (the caller turns it into the error body). */
export const countingRefusals =
  <T>(protocol: "native" | "sentry", fn: () => Promise<T>) =>
  (): Promise<T> =>
    fn().catch((err: unknown) => {
      countIngestRefusal(protocol, err);
      throw err;
    });

export const observeWriterTransaction = (ms: number) => writerTransactionSeconds.observe(ms / 1000);

/** A drain's outcome: rows applied, or null when another instance held the drain lock. */
export function observeDrain(applied: number | null, ms: number): void {
  counterDrainSeconds.observe(ms / 1000);
  if (applied) counterDrainRows.inc(applied);
}

export const countAlertDelivery = (channel: string, ok: boolean) => alertDeliveries.inc({ channel, outcome: ok ? "sent" : "failed" });

// ---- read at scrape time

/** The scrape in progress in this process (see metricsScraper). */
let scrapes: Promise<unknown> = Promise.resolve();

/** What a scrape reads from this process besides the registry's own counters. */
export type MetricsSource = {
  sql: Sql;
  writer: { readonly pendingEvents: number };
};

type DatabaseFigures = {
  lagSeconds: number;
  jobs: { queue: string; state: string; n: number }[];
  connections: { state: string; n: number }[];
};

/** How long database figures are reused: scrapes (of several Prometheus servers, too) never load the database. */
export const DATABASE_FIGURES_MAX_AGE_MS = 5_000;
/** Bound on the scrape's statements: a busy database answers the scrape without them, never late. */
const SCRAPE_STATEMENT_TIMEOUT_MS = 1_000;

/**
 * The figures only the database knows, in one read-only transaction bounded by a statement timeout.
 * Each is an index probe or a count over a small table: the oldest pending counter row by its key,
 * pg-boss's unfinished and failed jobs (its job table keeps finished ones only until it archives them),
 * and pg_stat_activity.
 */
async function readDatabaseFigures(sql: Sql): Promise<DatabaseFigures> {
  return sql.begin("read only", async (tx) => {
    await tx.unsafe(`set local statement_timeout = ${SCRAPE_STATEMENT_TIMEOUT_MS}`);
    // ids are handed out in insert order, and the drain applies rows in id order: the oldest row is the first
    const [lag] = await tx<{ s: number | null }[]>`
      select extract(epoch from now() - created_at)::float8 as s from counter_deltas order by id limit 1`;
    const [{ boss }] = await tx<{ boss: boolean }[]>`select to_regclass('pgboss.job') is not null as boss`;
    const jobRows = boss
      ? await tx<{ queue: string; state: string; n: number }[]>`
          select name as queue, state::text as state, count(*)::int as n from pgboss.job
          where state in ('created', 'retry', 'active', 'failed') group by 1, 2`
      : [];
    const connections = await tx<{ state: string; n: number }[]>`
      select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = current_setting('application_name') and pid <> pg_backend_pid()
      group by 1`;
    return { lagSeconds: Math.max(0, lag?.s ?? 0), jobs: [...jobRows], connections: [...connections] };
  });
}

/**
 * The exposition for one scrape of `source`'s process. Database figures are read at most every
 * DATABASE_FIGURES_MAX_AGE_MS (concurrent scrapes share one read); when the database does not
 * answer, the drain lag is NaN, the labelled series are left out and `database_up` says so. Scrapes of one process run one at a time,
 * since the gauges they set are the process's.
 */
export function metricsScraper(source: MetricsSource, opts: { maxAgeMs?: number } = {}) {
  const maxAgeMs = opts.maxAgeMs ?? DATABASE_FIGURES_MAX_AGE_MS;
  let cached: { at: number; figures: Promise<DatabaseFigures | null> } | undefined;
  const figures = () => {
    const now = Date.now();
    if (!cached || now - cached.at >= maxAgeMs) {
      cached = { at: now, figures: readDatabaseFigures(source.sql).catch(() => null) };
    }
    return cached.figures;
  };
  return async (): Promise<string> => {
    const turn = scrapes.then(async () => {
      const f = await figures();
      writerPendingEvents.set(source.writer.pendingEvents);
      dbPoolMax.set(source.sql.options.max);
      // unknown, not 0: an alert on the lag must not see a database it cannot read as caught up
      counterDrainLag.set(NaN);
      jobs.reset();
      dbConnections.reset();
      databaseUp.set(f ? 1 : 0);
      if (f) {
        counterDrainLag.set(f.lagSeconds);
        for (const j of f.jobs) jobs.set({ queue: j.queue, state: j.state }, j.n);
        for (const c of f.connections) dbConnections.set({ state: c.state }, c.n);
      }
      return registry.metrics();
    });
    scrapes = turn.catch(() => undefined);
    return turn;
  };
}
