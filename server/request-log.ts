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
import type { RequestHandler } from "express";
import type { ServerBuild } from "@remix-run/node";
import { logger, withRequestContext, type LogLevel } from "../log/logger.js";
import { compile, decodePath, fullPath, score } from "./api-dispatch.js";

/** An id a proxy may hand on: letters, digits and `._:-`, up to 128 characters (a UUID, a trace id…). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

type Severity = Exclude<LogLevel, "silent" | "fatal">;
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

export function requestLogging(opts: RequestLogOptions): RequestHandler {
  const base = RANK[opts.level];
  return (req, res, next) => {
    const incoming = opts.trustProxy > 0 ? req.headers["x-request-id"] : undefined;
    const reqId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader("X-Request-Id", reqId);
    const started = performance.now();
    res.once("close", () => {
      const status = res.statusCode;
      const level = status >= 500 ? (base > RANK.warn ? opts.level : "warn") : opts.level;
      if (!requestLog.isLevelEnabled(level)) return;
      const q = req.originalUrl.indexOf("?");
      const route = typeof res.locals.route === "string" ? res.locals.route : opts.routeOf(q < 0 ? req.originalUrl : req.originalUrl.slice(0, q));
      const duration = Math.round((performance.now() - started) * 10) / 10;
      const line: Record<string, unknown> = { reqId, method: req.method, route, status, duration };
      // the client went away before the whole answer was sent
      if (!res.writableFinished) line.aborted = true;
      requestLog[level](line, "request");
    });
    withRequestContext({ reqId }, next);
  };
}
