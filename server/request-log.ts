/**
 * One log line per request: its id, method, route, status and duration. The id is made here (or
 * taken from a trusted proxy's `X-Request-Id`), returned in the `X-Request-Id` header, and carried by
 * every line logged while the request is served (log/logger.ts).
 *
 * The route is a bounded label, never the path (which holds project ids, player ids and share
 * tokens): the Remix route id the API dispatch matched (`res.locals.route`), else the id of the page
 * route the path matches, `static` for the built assets, `other` for anything else.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import type { ServerBuild } from "@remix-run/node";
import { holdRequestContext, logger, withRequestContext, type LogLevel } from "../log/logger.js";
import { compile, decodePath, fullPath, score } from "./api-dispatch.js";

/** An id a proxy may hand on: letters, digits and `._:-`, up to 128 characters (a UUID, a trace id…). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type Severity = Exclude<LogLevel, "silent" | "fatal">;
const RANK: Record<Severity, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4 };

const requestLog = logger();

/**
 * The route label of a path that the API dispatch did not serve: the id of the route Remix would
 * render for it (its deepest match, an index route before its layout), from the build's route table.
 */
export function pageRouteLabeler(build: ServerBuild | null): (pathname: string) => string {
  if (!build) return (pathname) => (pathname.startsWith("/assets/") ? "static" : "other");
  const routes = Object.values(build.routes)
    .map((r, order) => {
      const path = fullPath(build, r.id);
      let depth = 0;
      for (let p = r.parentId; p; p = build.routes[p]?.parentId) depth++;
      return { id: r.id, ...compile(path.replace(/\/[^/]*\?/g, "")), score: score(path), index: r.index ? 1 : 0, depth, order };
    })
    .sort((a, b) => b.score - a.score || b.index - a.index || b.depth - a.depth || a.order - b.order);
  return (pathname) => {
    if (pathname.startsWith("/assets/")) return "static";
    const decoded = decodePath(pathname);
    for (const r of routes) if (r.regex.test(decoded)) return r.id;
    return "other";
  };
}

export type RequestLogOptions = {
  /** proxy hops believed (TRUST_PROXY): an incoming X-Request-Id is taken only behind a proxy */
  trustProxy: number;
  /** the level of a request's line; a 5xx answer's is at least warn */
  level: Severity;
  routeOf: (pathname: string) => string;
};

/** The request's id: a trusted proxy's well-formed `X-Request-Id`, else a new UUID. */
export function requestIdOf(headers: IncomingHttpHeaders, trustProxy: number): string {
  const incoming = trustProxy > 0 ? headers["x-request-id"] : undefined;
  return typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * Writes a request's line once its response has closed (or does nothing below the level): the id,
 * method, route, status and duration, `aborted` when the client went away before the whole answer.
 */
export function requestLineWriter(opts: Pick<RequestLogOptions, "level">) {
  const base = RANK[opts.level];
  const severe: Severity = base > RANK.warn ? opts.level : "warn";
  return (reqId: string, method: string | undefined, route: string, res: ServerResponse, started: number) => {
    const status = res.statusCode;
    const level = status >= 500 ? severe : opts.level;
    if (!requestLog.isLevelEnabled(level)) return;
    const duration = Math.round((performance.now() - started) * 10) / 10;
    const line: Record<string, unknown> = { reqId, method, route, status, duration };
    // the client went away before the whole answer was sent
    if (!res.writableFinished) line.aborted = true;
    requestLog[level](line, "request");
  };
}

/**
 * Express middleware for every request the API dispatch does not serve (pages, assets, what the
 * dispatch leaves to Remix): the id, its header, the line, and the logging context the request is
 * served in (log/logger.ts), so that the lines the app logs meanwhile carry the id.
 */
export function requestLogging(opts: RequestLogOptions): RequestHandler {
  const writeLine = requestLineWriter(opts);
  return (req, res, next) => {
    const reqId = requestIdOf(req.headers, opts.trustProxy);
    res.setHeader("X-Request-Id", reqId);
    const started = performance.now();
    const release = holdRequestContext();
    res.once("close", () => {
      release();
      const q = req.originalUrl.indexOf("?");
      const route = typeof res.locals.route === "string" ? res.locals.route : opts.routeOf(q < 0 ? req.originalUrl : req.originalUrl.slice(0, q));
      writeLine(reqId, req.method, route, res, started);
    });
    withRequestContext({ reqId }, next);
  };
}
