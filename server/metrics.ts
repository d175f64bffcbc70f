/**
 * The Express side of the Prometheus metrics (docs/operations.md, "Metrics"): every request's
 * route, status and duration, and `GET /metrics` itself.
 *
 * /metrics is off unless METRICS_TOKEN is set: then the path is not served at all (the app's own
 * 404, as for any unknown page). When set, it is served on the main port to a scraper that sends
 * `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time; anything else gets 401 with the
 * error body. Counts and routes are no secret of a project, but the route ids, queue names and
 * traffic of an instance are nobody's business outside it.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import { httpRequestSeconds, metricsScraper, registry, type MetricsSource } from "../db/metrics.js";

/**
 * The route label: the API route's id the dispatch recorded (server/api-dispatch.ts), else a
 * bounded name for the kind of request. Never the path: it holds project, issue and key ids and
 * share tokens, and every distinct value would be a new series.
 */
export function routeLabel(req: Request, res: Response): string {
  const route: unknown = res.locals.route;
  if (typeof route === "string") return route;
  const path = req.path;
  if (path === "/metrics") return "metrics";
  if (path.startsWith("/assets/")) return "assets";
  // an /api request no API route served (an unknown path, OPTIONS, Remix's own data requests)
  if (path.startsWith("/api/") || path === "/api") return "api";
  return "page";
}

/** Methods as a label: the standard ones, anything else as `other`. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** One answer's observation: its route label, method, status and seconds to its last byte written. */
export function observeRequest(route: string, method: string, status: number, seconds: number): void {
  httpRequestSeconds.observe({ route, method: METHODS.has(method) ? method : "other", status: String(status) }, seconds);
}

/**
 * Times every request Express serves from here to its last byte written; mounted first, so it sees
 * all of them (the API dispatch's requests are timed by the dispatch, with observeRequest).
 */
export function requestMetrics(): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    res.once("finish", () => observeRequest(routeLabel(req, res), req.method, res.statusCode, (performance.now() - started) / 1000));
    next();
  };
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/** `GET /metrics` for a scraper holding `token`. */
export function metricsEndpoint(token: string, source: MetricsSource): RequestHandler {
  const expected = digest(`Bearer ${token}`);
  const scrape = metricsScraper(source);
  return async (req, res, next) => {
    // equal-length digests: the comparison takes the same time whatever was sent
    if (!timingSafeEqual(digest(req.get("authorization") ?? ""), expected)) {
      res.set("WWW-Authenticate", 'Bearer realm="metrics"');
      res.status(401).json({ error: "unauthorized", message: "Send the metrics token as `Authorization: Bearer <METRICS_TOKEN>`." });
      return;
    }
    try {
      const text = await scrape();
      // as prom-client writes it (Express would insert its own charset parameter)
      res.setHeader("Content-Type", registry.contentType);
      res.setHeader("Cache-Control", "no-store");
      res.end(text);
    } catch (err) {
      next(err);
    }
  };
}
