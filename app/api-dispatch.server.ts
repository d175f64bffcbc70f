/**
 * Hands `/api` requests straight to their resource route's loader or action.
 *
 * Remix matches every request against the whole route table, rebuilding and recompiling it on each
 * call (twice per request); on the API that matching costs more than the endpoint itself. This table
 * is built once from the same build's routes and picks the route Remix would pick (same path syntax,
 * same case-insensitive matching, same ranking), so the route modules stay the one place each
 * endpoint is defined. It then calls the route the way Remix calls a resource route: a returned
 * Response is sent, a thrown Response is sent with `X-Remix-Catch`, anything else thrown is logged and
 * answered with Remix's plain 500, and HEAD answers without a body.
 *
 * Whatever the table is not sure about goes to Remix unchanged: other methods (OPTIONS…), `.data`
 * and `_data`/`index` requests, a route without the needed loader or action, and every path when a
 * non-API route could also match under `/api`.
 */
import type { Request as ExpressRequest, Response as ExpressResponse, NextFunction } from "express";
import { createReadableStreamFromReadable, writeReadableStreamToWritable, type ServerBuild, type AppLoadContext } from "@remix-run/node";
import { JSON_TEXT } from "./http.server.js";

type RouteModule = ServerBuild["routes"][string]["module"];
type Matcher = { id: string; regex: RegExp; params: string[]; splat: boolean; module: RouteModule };
export type ApiMatch = { id: string; params: Record<string, string>; module: RouteModule };

const paramRe = /^:[\w-]+$/;

/** react-router's route score: more segments, static over dynamic, a splat last. */
function score(path: string): number {
  const segments = path.split("/");
  let s = segments.length;
  if (segments.includes("*")) s -= 2;
  for (const seg of segments) {
    if (seg === "*") continue;
    s += paramRe.test(seg) ? 3 : seg === "" ? 1 : 10;
  }
  return s;
}

/** react-router's path pattern as a RegExp (case-insensitive, trailing slashes ignored). */
function compile(path: string): { regex: RegExp; params: string[]; splat: boolean } {
  const params: string[] = [];
  const splat = path.endsWith("*");
  let source =
    "^" +
    path
      .replace(/\/*\*?$/, "")
      .replace(/^\/*/, "/")
      .replace(/[\\.*+^${}|()[\]]/g, "\\$&")
      .replace(/\/:([\w-]+)/g, (_, name: string) => {
        params.push(name);
        return "/([^\\/]+)";
      });
  if (splat) {
    params.push("*");
    source += path === "*" || path === "/*" ? "(.*)$" : "(?:\\/(.+)|\\/*)$";
  } else {
    source += "\\/*$";
  }
  return { regex: new RegExp(source, "i"), params, splat };
}

function decodePath(pathname: string): string {
  if (!pathname.includes("%")) return pathname;
  try {
    return pathname
      .split("/")
      .map((v) => decodeURIComponent(v).replace(/\//g, "%2F"))
      .join("/");
  } catch {
    return pathname;
  }
}

function fullPath(build: ServerBuild, id: string): string {
  const parts: string[] = [];
  for (let route = build.routes[id]; route; route = route.parentId ? build.routes[route.parentId] : (undefined as never)) {
    if (route.path) parts.unshift(route.path);
  }
  return ("/" + parts.join("/")).replace(/\/\/+/g, "/");
}

/**
 * The API routes of a build, ranked as react-router ranks them; null when the table cannot be exact
 * (a non-API route whose path could match under /api, optional segments, a basename).
 */
export function apiRouteTable(build: ServerBuild): ((pathname: string) => ApiMatch | null) | null {
  if (build.basename && build.basename !== "/") return null;
  const api: (Matcher & { score: number; order: number })[] = [];
  let order = 0;
  for (const route of Object.values(build.routes)) {
    order++;
    const path = fullPath(build, route.id);
    const first = path.split("/")[1] ?? "";
    const isApi = first.toLowerCase() === "api";
    if (!isApi) {
      // a page or pathless route could only compete under /api with a dynamic, splat or optional first segment
      if (first.startsWith(":") || first.includes("*") || first.endsWith("?")) return null;
      continue;
    }
    if (path.includes("?")) return null;
    const m = route.module;
    if (m.default != null || m.ErrorBoundary != null || route.index) return null;
    api.push({ id: route.id, ...compile(path), module: m, score: score(path), order });
  }
  api.sort((a, b) => b.score - a.score || a.order - b.order);
  return (pathname) => {
    const decoded = decodePath(pathname);
    for (const r of api) {
      const hit = r.regex.exec(decoded);
      if (!hit) continue;
      const params: Record<string, string> = {};
      r.params.forEach((name, i) => {
        params[name] = (hit[i + 1] ?? "").replace(/%2F/g, "/");
      });
      return { id: r.id, params, module: r.module };
    }
    return null;
  };
}

const MUTATIONS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Express middleware: serves the matched API route, or calls `next()` so the Remix handler serves
 * the request as before.
 */
export function apiDispatch(build: ServerBuild, getLoadContext: (req: ExpressRequest) => AppLoadContext) {
  const match = apiRouteTable(build);
  return async (req: ExpressRequest, res: ExpressResponse, next: NextFunction) => {
    if (!match || !req.path.startsWith("/api/")) return next();
    const method = req.method;
    const isMutation = MUTATIONS.has(method);
    if (!isMutation && method !== "GET" && method !== "HEAD") return next();
    const url = req.originalUrl;
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    if (pathname.endsWith(".data") || (q >= 0 && /[?&](_data|index)(=|&|$)/.test(url.slice(q)))) return next();
    const found = match(pathname);
    const fn = found && (isMutation ? found.module.action : found.module.loader);
    if (!found || !fn) return next();
    try {
      const request = toRequest(req, res);
      let response: Response;
      try {
        const out: unknown = fn({ request, params: found.params, context: getLoadContext(req) });
        // a loader that answers synchronously costs no extra turn of the microtask queue
        const result = typeof (out as PromiseLike<unknown> | null)?.then === "function" ? await out : out;
        if (!(result instanceof Response)) throw new Error(`Route "${found.id}" did not return a Response`);
        response = result;
      } catch (err) {
        if (err instanceof Response) {
          response = withHeader(err, "X-Remix-Catch", "yes");
        } else {
          if (!request.signal.aborted) console.error(err);
          response = new Response("Unexpected Server Error", { status: 500, headers: { "Content-Type": "text/plain" } });
        }
      }
      const sending = send(res, response, method === "HEAD");
      if (sending) await sending;
    } catch (err) {
      next(err);
    }
  };
}

/** The Fetch Request Remix's Express adapter would build for this request. */
function toRequest(req: ExpressRequest, res: ExpressResponse): Request {
  const [, forwardedPort] = req.get("X-Forwarded-Host")?.split(":") ?? [];
  const [, hostPort] = req.get("host")?.split(":") ?? [];
  const fp = Number.parseInt(forwardedPort ?? "", 10);
  const hp = Number.parseInt(hostPort ?? "", 10);
  const port = Number.isSafeInteger(fp) ? fp : Number.isSafeInteger(hp) ? hp : "";
  const controller = new AbortController();
  const init: RequestInit & { duplex?: "half" } = { method: req.method, signal: controller.signal };
  if (req.method !== "GET" && req.method !== "HEAD") {
    init.body = createReadableStreamFromReadable(req);
    init.duplex = "half";
  }
  // the Request parses the URL itself (as the adapter's `new URL(...).href` would) and its own
  // headers are filled in place rather than copied from a Headers built first
  const request = new Request(`${req.protocol}://${req.hostname}${port ? `:${port}` : ""}${req.originalUrl}`, init);
  for (const [key, values] of Object.entries(req.headers)) {
    if (!values) continue;
    if (Array.isArray(values)) for (const v of values) request.headers.append(key, v);
    else request.headers.set(key, values);
  }
  // abort the loader or action when the client goes away before the response is written
  res.on("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return request;
}

function withHeader(response: Response, name: string, value: string): Response {
  try {
    response.headers.set(name, value);
    return response;
  } catch {
    // immutable headers (a redirect from Response.redirect): copy the response
    const copy = new Response(response.body, response);
    copy.headers.set(name, value);
    return copy;
  }
}

/** Writes the Response; a promise only while a body is still being read or piped. */
function send(res: ExpressResponse, response: Response, head: boolean): Promise<void> | undefined {
  res.statusMessage = response.statusText;
  res.statusCode = response.status;
  for (const [key, value] of response.headers) {
    // res.append's result without its lookups for a header not set yet; Content-Type (which
    // Express may complete with a charset) and repeated headers still go through it
    if (key !== "content-type" && res.getHeader(key) === undefined) res.setHeader(key, value);
    else res.append(key, value);
  }
  if (!response.body || head) return void res.end();
  // API bodies are small JSON documents: one write with a Content-Length is cheaper than piping a
  // stream (an event-stream would still be piped as it comes)
  const body = response.body;
  if (/text\/event-stream/i.test(response.headers.get("content-type") ?? "")) {
    res.flushHeaders();
    return writeReadableStreamToWritable(body, res);
  }
  // a body made by json() is written from its text instead of being read back from its stream
  const text = (response as Response & { [JSON_TEXT]?: unknown })[JSON_TEXT];
  if (typeof text === "string" && !response.bodyUsed && !body.locked) return void res.end(text);
  return response.arrayBuffer().then((bytes) => void res.end(Buffer.from(bytes)));
}
