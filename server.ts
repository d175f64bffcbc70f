/**
 * The process: validate the environment, open the database (embedded when DATABASE_URL is unset),
 * load the app once (the Remix build, or Vite's in development) and take the services, jobs and
 * error types from it, start pg-boss, serve the app on Express, and shut down gracefully on
 * SIGTERM/SIGINT. The Express-only layers live beside this file, in server/.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Socket } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createRequestHandler } from "@remix-run/express";
import type { ServerBuild } from "@remix-run/node";
import express from "express";
import type PgBoss from "pg-boss";
import { autovacuumOn, openDatabase, type Database } from "./db/connect.js";
import { isConnectionLoss, type Sql } from "./db/client.js";
import { migrationFiles, withSetupLock } from "./db/migrate.js";
// the environment is read before anything is loaded (a leaf module without state)
import { loadConfig, ConfigError, type Config } from "./app/env.server.js";
import type * as App from "./app/process.server.js";
import type { Services } from "./app/process.server.js";
import { fixedSecurityHeaders, forwardedHeaders, requestOrigin, securityHeaders } from "./server/web.js";
import { apiFront, expressUrl } from "./server/api-dispatch.js";
import { metricsEndpoint, observeRequest, requestMetrics } from "./server/metrics.js";
import { pageRouteLabeler, requestLogging } from "./server/request-log.js";
import { captureConsole, configureLogging, log } from "./log/logger.js";

const root = path.dirname(fileURLToPath(import.meta.url));

/** `clean`: every in-flight request and pending write finished within the shutdown bound. */
export type ShutdownReport = { clean: boolean };
export type RunningServer = { url: string; port: number; services: Services; close: () => Promise<ShutdownReport> };

/**
 * How long a shutdown waits, from the signal, for in-flight requests, pending ingest writes and
 * alert triggers together. A write hung on the database must not keep a stopping process alive.
 */
export const SHUTDOWN_DRAIN_MS = 10_000;

const shutdownUnavailable = (app: typeof App) =>
  new app.ApiError(503, "unavailable", "The server shut down before this write was confirmed; send it again.", undefined, {
    "Retry-After": "5",
  });

/**
 * An answer sent before its request's body was read (a 413 past a limit, a 401, a 503 past the body
 * budget) leaves the rest of the body on its way. Closing the socket then would make the kernel
 * reset the connection over the unread bytes, and a client still uploading sees ECONNRESET or EPIPE
 * instead of the answer. So, as nginx's lingering close does, the rest is read and discarded (never
 * held: it costs no body budget) up to DISCARD_MAX_BYTES or DISCARD_MAX_MS, whichever comes first;
 * past either the connection is closed at once, as before.
 *
 * An answer with `Connection: close` (the refusals of app/http.server.ts say so, so that no client
 * sends its next request behind a body it stopped sending): our side is closed after the answer
 * (FIN), the body is drained, and the socket is destroyed when the body has ended or the client
 * closed its side. A keep-alive answer: Node itself reads the rest, without a bound; the bound is
 * added.
 */
export const DISCARD_MAX_BYTES = 8 * 1024 * 1024;
export const DISCARD_MAX_MS = 5_000;

/** How often a drain looks at the bytes read and whether the body has ended. */
const DISCARD_CHECK_MS = 10;

/**
 * Reads and drops the rest of `req`'s body: `done` when it has ended, `stop` past the bound. Node's
 * parser discards a dumped body itself, without events, so the bytes are counted on the socket.
 */
function drainRest(req: IncomingMessage, stop: () => void, done: () => void = () => {}) {
  const socket = req.socket;
  const startBytes = socket.bytesRead;
  const startedAt = Date.now();
  // the drain's end removes its close listener: a keep-alive connection serves many such answers
  const end = () => {
    clearInterval(check);
    socket.off("close", end);
  };
  const check = setInterval(() => {
    if (req.complete) {
      end();
      done();
    } else if (socket.bytesRead - startBytes > DISCARD_MAX_BYTES || Date.now() - startedAt > DISCARD_MAX_MS) {
      end();
      stop();
    }
  }, DISCARD_CHECK_MS);
  check.unref();
  socket.once("close", end);
  // a reader that stopped at a limit paused the request; whatever still listens (a Fetch body
  // stream) would keep the bytes: flowing without listeners, they are dropped
  req.removeAllListeners("data");
  req.resume();
}

function lingerOverUnreadBody(req: IncomingMessage, res: ServerResponse) {
  const socket = req.socket;
  const destroy = () => socket.destroy();
  let draining = false;
  // Node ends a `Connection: close` answer's socket with destroySoon() once the answer is written
  socket.destroySoon = function lingeringDestroySoon(this: Socket) {
    if (draining || req.complete || this.destroyed) return Socket.prototype.destroySoon.call(this);
    draining = true;
    this.end();
    this.once("end", destroy);
    drainRest(req, destroy, destroy);
  };
  res.once("finish", () => {
    if (draining || req.complete || req.destroyed || socket.destroyed) return;
    draining = true;
    drainRest(req, destroy);
  });
}

/** Whether `work` resolves within `ms` (it runs on either way); its rejection passes through. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

type LoadedApp = {
  /** the routes: the build, or (in development) Vite's current one on every request */
  build: ServerBuild | (() => Promise<ServerBuild>);
  /** what the process takes from the app (app/process.server.ts), from the same load as the routes */
  modules: typeof App;
  vite?: import("vite").ViteDevServer;
};

async function loadApp(dev: boolean | undefined): Promise<LoadedApp> {
  const modulesOf = (build: ServerBuild) => build.entry.module as unknown as typeof App;
  if (!dev) {
    const build = (await import(path.join(root, "build/server/index.js"))) as ServerBuild;
    return { build, modules: modulesOf(build) };
  }
  const { createServer: createVite } = await import("vite");
  const vite = await createVite({ server: { middlewareMode: true }, root });
  const load = () => vite.ssrLoadModule("virtual:remix/server-build") as Promise<ServerBuild>;
  // the services and jobs come from the first load; edited routes are loaded again per request
  return { build: load, modules: modulesOf(await load()), vite };
}

export async function startServer(config: Config, opts: { dev?: boolean; database?: Database } = {}): Promise<RunningServer> {
  // the process's one logger, which the app's and db/'s lines go through too (log/logger.ts)
  configureLogging({ level: config.logLevel, format: config.logFormat ?? (opts.dev ? "pretty" : "json") });
  const { build, modules, vite } = await loadApp(opts.dev);
  const { createServices, forRequest, ownWritesCookie, startJobs, startAlertWorker, startEconomyAlertWorker, startHealthAlertWorker, stopJobs, assertSameOrigin, isMutation, admitPageForm, ApiError } = modules;
  const db =
    opts.database ??
    (await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      embeddedPort: config.embeddedPgPort,
      poolSize: config.dbPoolSize,
      timeoutMs: config.dbTimeoutMs,
      replica: config.databaseReplicaUrl ? { url: config.databaseReplicaUrl, maxLagMs: config.replicaMaxLagMs } : undefined,
    }));
  let boss: PgBoss | null = null;
  if (config.jobsEnabled) {
    // one instance at a time sets up pg-boss (schema, queues, schedules)
    boss = await withSetupLock(db.sql, async () => {
      const b = await startJobs(db.url, db.sql, {
        retentionDays: config.retentionDays,
        auditRetentionDays: config.auditRetentionDays,
        economy: {
          appSecret: config.appSecret,
          openCloudBaseUrl: config.openCloudBaseUrl,
          requestsPerMinute: config.openCloudRequestsPerMinute,
        },
      });
      await startAlertWorker(b, { sql: db.sql, config });
      await startEconomyAlertWorker(b, { sql: db.sql, config });
      await startHealthAlertWorker(b, { sql: db.sql, config });
      return b;
    });
  }
  const services = createServices(config, db.sql, boss, db.replica, migrationFiles());
  await services.apiKeys.listen();

  const app = express();
  app.disable("x-powered-by");
  // nothing reads req.query (Remix and the API read the URL): Express would parse every query string with qs
  app.set("query parser", false);
  // behind N proxies, req.ip (rate limits) and req.protocol come from X-Forwarded-* of the last N hops;
  // without TRUST_PROXY those headers are dropped before anything reads them
  if (config.trustProxy > 0) app.set("trust proxy", config.trustProxy);
  app.use(forwardedHeaders(config.trustProxy));
  const routeOf = pageRouteLabeler(typeof build === "function" ? null : build);
  app.use(requestLogging({ trustProxy: config.trustProxy, level: config.logRequests, routeOf }));
  app.use(securityHeaders({ dev: opts.dev }));
  // Prometheus metrics only with METRICS_TOKEN (docs/operations.md, "Metrics"): every request timed from here
  if (config.metricsToken) {
    app.use(requestMetrics());
    app.get("/metrics", metricsEndpoint(config.metricsToken, { sql: db.sql, writer: services.writer }));
  }
  if (vite) {
    app.use(vite.middlewares);
  } else {
    app.use("/assets", express.static(path.join(root, "build/client/assets"), { immutable: true, maxAge: "1y" }));
    // public files never live under /api: skip the file-system lookup on every API request
    const publicFiles = express.static(path.join(root, "build/client"), { maxAge: "1h" });
    app.use((req, res, next) => (req.path.startsWith("/api/") ? next() : publicFiles(req, res, next)));
  }
  // each request's queries spend one database budget (DB_TIMEOUT_MS), from the pool's queue on
  const loadContext = (clientAddress: string) => ({ services: forRequest(services), clientAddress });
  const getLoadContext = (req: express.Request) => loadContext(req.ip ?? req.socket.remoteAddress ?? "unknown");
  // Page form posts from another site: answer 403 with the error body here, with the rule the Team
  // API uses, instead of letting Remix abort the action with an opaque 500. /api routes check their own
  // (the known ones are served ahead of Express, below, and the rest skip this layer). Then the form's size and coding, and its
  // share of the body budget, held until the answer is sent: Remix reads a form whole.
  app.use((req, res, next) => {
    if (!isMutation(req) || req.path.startsWith("/api/")) return next();
    try {
      assertSameOrigin(new Request(`${requestOrigin(req)}${req.originalUrl}`, { method: req.method, headers: req.headers as HeadersInit }), config.publicUrl);
      const hold = admitPageForm(req.path, req.headers, config, services.bodies);
      if (hold) res.once("close", () => hold.release());
      // with a replica, the pages after this post read the primary, so they show what it wrote; so do
      // the loaders that render this post's own page (Remix hands them a GET with its headers)
      const ownWrites = ownWritesCookie(services, req.protocol === "https");
      if (ownWrites) {
        res.append("Set-Cookie", ownWrites);
        req.headers.cookie = [req.headers.cookie, ownWrites.split(";")[0]].filter(Boolean).join("; ");
      }
      next();
    } catch (err) {
      if (!(err instanceof ApiError)) return next(err);
      if (err.headers) res.set(err.headers);
      res.status(err.status).json({ error: err.code, message: err.message });
    }
  });
  // Remix's adapter builds the request's address from Express's protocol and hostname and the Host's
  // (or trusted forwarded host's) port, and throws when they make none: the client's mistake, answered
  // as the API answers it (server/api-dispatch.ts) instead of as a failure of ours
  app.use((req, res, next) => {
    if (URL.canParse(expressUrl(req))) return next();
    res.status(400).json({ error: "invalid_payload", message: "The request's Host header is not a valid host." });
  });
  // app.use, not app.all("*"): a route pattern makes Express decode the path first, and a malformed
  // escape (`/api/v1/errors/%FF`) would end there as an HTML 400 with a stack trace; Remix tolerates it
  app.use(createRequestHandler({ build, getLoadContext }));
  // whatever still reaches Express's own handler gets the one error body, never a stack trace
  app.use((err: { status?: number }, req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const status = typeof err.status === "number" && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) log.error({ err }, "[http] unexpected error");
    if (res.headersSent) return res.destroy();
    res.status(status).json(
      status === 500
        ? { error: "internal", message: "Something went wrong on our side; the request was not completed." }
        : status === 413
          ? { error: "payload_too_large", message: "The request is larger than this server accepts." }
          : { error: "invalid_payload", message: "The request could not be read." },
    );
  });

  // Known /api paths are served ahead of Express, from Node's request and response, by their
  // resource route (server/api-dispatch.ts, with the same forwarded headers, request id and line,
  // security headers and metrics as Express's layers above); everything else goes through Express,
  // and through Remix's matcher. In development (Vite's build, reloaded per request) Express serves all.
  const front =
    typeof build === "function"
      ? null
      : apiFront({
          build,
          face: modules,
          loadContext,
          trustProxy: config.trustProxy,
          trust: app.get("trust proxy fn") as (address: string | undefined, hop: number) => boolean,
          fixedHeaders: fixedSecurityHeaders({ dev: opts.dev }),
          logLevel: config.logRequests,
          observe: config.metricsToken ? observeRequest : undefined,
          unread: lingerOverUnreadBody,
        });
  // while shutting down, in-flight requests are answered and each connection closes after its
  // response (a keep-alive connection would otherwise hold the shutdown until it idles out)
  let shuttingDown = false;
  const inFlight = new Set<ServerResponse>();
  function settled(this: ServerResponse) {
    inFlight.delete(this);
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (shuttingDown) res.setHeader("Connection", "close");
    inFlight.add(res);
    res.once("close", settled);
    if (front?.(req, res)) return;
    lingerOverUnreadBody(req, res);
    app(req, res);
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : config.port;

  let closing: Promise<ShutdownReport> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // stop accepting, let in-flight requests finish and drain writes, within one bound; then stop
      // jobs and close the pool; the embedded server (if any) stops last, in db.close()
      shuttingDown = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader("Connection", "close");
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      const drained = (async () => {
        await closed;
        await services.writer.drain();
        // the counters of the last writes are applied before the pool closes, so a clean stop leaves
        // none for the next start, and the alerts waiting on them are sent
        await services.counters.drainNow().catch((err) => {
          // what stays pending is applied by the next drain of any instance
          log.error(`[counters] not applied at shutdown: ${(err as Error).message}`);
        });
        await services.alerts.drain();
        await services.economyAlerts.drain();
      })();
      const clean = await settlesWithin(drained, SHUTDOWN_DRAIN_MS);
      if (!clean) {
        // Something still waits on the database past the bound (a lost connection, a lock held
        // elsewhere). Its submissions are given up: their requests answer 503 (not acknowledged, so
        // their clients send them again); a write already sent is committed or rolled back by
        // PostgreSQL when the connection closes. Whatever is still open then is cut.
        const abandoned = services.writer.abandon(shutdownUnavailable(modules));
        await settlesWithin(closed, 1_000);
        const cut = inFlight.size;
        server.closeAllConnections();
        log.error(
          `[shutdown] gave up waiting after ${SHUTDOWN_DRAIN_MS / 1000} s: ${abandoned.events} events of ${abandoned.submissions} ingest requests not acknowledged ` +
            `(${abandoned.writing} writes still waiting on the database), ${cut} requests cut`,
        );
      }
      // a drain stuck on a database that stopped answering is not waited for: its connection closes below
      await settlesWithin(services.counters.stop(), 1_000);
      if (boss) await stopJobs(boss, { timeoutMs: 10_000 });
      await vite?.close();
      // a write given up above holds its connection: close it at once (PostgreSQL rolls it back)
      if (!opts.database) await db.close({ waitSeconds: clean ? 5 : 0 });
      return { clean };
    })());
  return { url: `http://127.0.0.1:${port}`, port, services, close };
}

/**
 * Without autovacuum no table gets fresh statistics, and statements are planned for tables far
 * smaller than they have grown (docs/operations.md, "Database statistics"). Only a warning: a
 * failed check does not stop a service that is already serving.
 */
async function warnWithoutAutovacuum(sql: Sql) {
  try {
    if (!(await autovacuumOn(sql))) {
      log.warn("[db] autovacuum is off on this PostgreSQL server: tables get no fresh statistics and queries may be planned badly; turn it on, or run ANALYZE regularly (docs/operations.md)");
    }
  } catch (err) {
    log.error(`[db] could not read the server's autovacuum setting: ${(err as Error).message}`);
  }
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      log.fatal(err.message);
      process.exit(1);
    }
    throw err;
  }
  const dev = process.argv.includes("--dev");
  // what libraries print goes through the logger too, as JSON lines and redacted
  captureConsole();
  // A driver promise that rejects with a lost connection (a restarted or failed-over database, a
  // terminated backend) and that its library left unhandled must not end the process: requests
  // handle their own errors and later ones reconnect. Anything else still ends it, as by default.
  process.on("unhandledRejection", (err) => {
    if (!isConnectionLoss(err)) throw err;
    log.error(`[db] connection lost outside a request: ${(err as Error).message ?? err}`);
  });
  try {
    const running = await startServer(config, { dev });
    let signalled = false;
    const stop = (signal: string) => {
      if (signalled) return;
      signalled = true;
      log.info(`${signal} received; shutting down`);
      running.close().then(
        // past the bound, the exit code says that something was given up (logged above)
        ({ clean }) => process.exit(clean ? 0 : 1),
        (err) => {
          log.error({ err }, "Shutdown failed");
          process.exit(1);
        },
      );
    };
    process.on("SIGTERM", () => stop("SIGTERM"));
    process.on("SIGINT", () => stop("SIGINT"));
    // before the line that says it listens, so that whoever waits for that line has seen the warning
    await warnWithoutAutovacuum(running.services.sql);
    if (signalled) return;
    log.info(`Roblox Monitor listening on http://${config.host}:${running.port}${config.databaseUrl ? "" : " (embedded PostgreSQL)"}`);
  } catch (err) {
    log.fatal({ err }, `Start-up failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
