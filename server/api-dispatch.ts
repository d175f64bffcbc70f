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
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import type { Request as ExpressRequest } from "express";
import { createReadableStreamFromReadable, writeReadableStreamToWritable, type ServerBuild, type AppLoadContext } from "@remix-run/node";
import type * as Http from "../app/http.server.js";
import { requestLogger } from "../log/logger.js";
import { requestIdOf, requestLineWriter, type Severity } from "./request-log.js";
import { filterForwarded } from "./web.js";

/**
 * The app's Fetch fast paths (app/http.server.ts): the JSON text of a Response made by `json()`, the
 * raw body a Request can hand over, and the 413 past a limit. Taken from the loaded app (the build's
 * entry module), so they are the very ones the routes use.
 */
export type FetchFace = Pick<typeof Http, "JSON_TEXT" | "JSON_HEADERS" | "NODE_BODY" | "payloadTooLarge"> & Partial<Pick<typeof Http, "UNEXPECTED" | "NODE_TARGET">>;

type RouteModule = ServerBuild["routes"][string]["module"];
/** `segments`: how many segments a path it matches has (none of them empty, trailing slashes aside); null for a splat */
type Matcher = { id: string; regex: RegExp; params: string[]; splat: boolean; segments: number | null; module: RouteModule };
export type ApiMatch = { id: string; params: Record<string, string>; module: RouteModule };

const paramRe = /^:[\w-]+$/;
const TRAILING_SLASHES = /\/+$/;

/** react-router's route score: more segments, static over dynamic, a splat last. */
export function score(path: string): number {
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
export function compile(path: string): { regex: RegExp; params: string[]; splat: boolean } {
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

export function decodePath(pathname: string): string {
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

/**
 * The segments of a path without trailing slashes (`/api/1/envelope` has 3). A pattern without a
 * splat (see compile) matches a path only when they have as many: each of its segments matches one
 * non-empty segment, an empty one (`//`) is matched by none of them, and trailing slashes by `\/*$`.
 */
export function segmentCount(trimmed: string): number {
  let n = 0;
  for (let i = 0; i < trimmed.length; i++) if (trimmed.charCodeAt(i) === 47) n++;
  return n;
}

export function fullPath(build: ServerBuild, id: string): string {
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
    const compiled = compile(path);
    api.push({ id: route.id, ...compiled, segments: compiled.splat ? null : segmentCount(path.replace(TRAILING_SLASHES, "")), module: m, score: score(path), order });
  }
  api.sort((a, b) => b.score - a.score || a.order - b.order);
  // a path without parameters is looked up by its text, when no route ranked before it matches it
  const exact = new Map<string, Matcher>();
  api.forEach((r, i) => {
    if (r.params.length > 0) return;
    const path = fullPath(build, r.id).replace(/\/+$/, "");
    if (!api.slice(0, i).some((before) => before.regex.test(path))) exact.set(path.toLowerCase(), r);
  });
  return (pathname) => {
    const decoded = decodePath(pathname);
    const trimmed = decoded.replace(TRAILING_SLASHES, "");
    const hit = exact.get(trimmed.toLowerCase());
    // its own pattern decides (a name that only lowercases to the route's is no match)
    if (hit?.regex.test(decoded)) return { id: hit.id, params: {}, module: hit.module };
    // a pattern without a splat matches only paths of its number of segments: the others are not tried
    const segments = segmentCount(trimmed);
    for (const r of api) {
      if (r.segments !== null && r.segments !== segments) continue;
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

/** Express's own `req.ip` (proxy-addr, an Express dependency without types of its own). */
const proxyaddr = createRequire(import.meta.url)("proxy-addr") as (req: IncomingMessage, trust: (address: string, hop: number) => boolean) => string;

/** The proxies a request passed through, believed as Express believes them (`trust proxy`). */
type Trust = (address: string | undefined, hop: number) => boolean;

export type ApiFrontOptions = {
  build: ServerBuild;
  face: FetchFace;
  /** the load context of one request (its database budget, the client's address) */
  loadContext: (clientAddress: string) => AppLoadContext;
  /** TRUST_PROXY hops, and Express's compiled trust function for them */
  trustProxy: number;
  trust: Trust;
  /** the header writes every answer carries (the security headers), in order; null when not fixed */
  fixedHeaders: [name: string, value?: string][] | null;
  /** the request line's level (LOG_REQUESTS) */
  logLevel: Severity;
  /** observes each answer for the Prometheus metrics (only with METRICS_TOKEN) */
  observe?: (route: string, method: string, status: number, seconds: number) => void;
  /** called before an answer is written while its request's body is still unread (server.ts) */
  unread: (req: IncomingMessage, res: ServerResponse) => void;
};

/** What the front keeps of a request it serves, for its response's `close` and `finish`. */
type Exchange = { reqId: string; route: string; method: string; started: number };
const EXCHANGE = Symbol("api exchange");
type Served = ServerResponse & { [EXCHANGE]?: Exchange };

/**
 * The API requests' front door, ahead of Express: a request to a known API route (GET, HEAD, POST,
 * PUT, PATCH, DELETE) is served here from Node's request and response, with what the Express layers
 * give every request (forwarded headers filtered, the request id, its header and log line, the
 * security headers, the metrics) and the route called as Remix calls a resource route (see
 * `apiRouteTable` for how the route is found). Returns false, having touched nothing, for anything
 * else: pages, assets, `/metrics`, other methods, `.data` and `_data` requests, unknown API paths
 * (Express and Remix serve those as before). Null when the build's routes do not allow an exact table.
 */
export function apiFront(o: ApiFrontOptions): ((req: IncomingMessage, res: ServerResponse) => boolean) | null {
  const match = apiRouteTable(o.build);
  if (!match || !o.fixedHeaders) return null;
  const { toRequest, send, sendJson } = nodeFetch(o.face);
  const { JSON_TEXT, JSON_HEADERS, UNEXPECTED } = o.face;
  // the security headers as Node takes them whole, and Referrer-Policy as an /api path has it
  const fixed: string[] = ["Referrer-Policy", "same-origin"];
  for (const [name, value] of o.fixedHeaders) if (value !== undefined) fixed.push(name, value);
  const writeLine = requestLineWriter({ level: o.logLevel });
  const { trust, trustProxy, observe } = o;

  function onClose(this: Served) {
    const x = this[EXCHANGE]!;
    writeLine(x.reqId, x.method, x.route, this, x.started);
  }
  function onFinish(this: Served) {
    const x = this[EXCHANGE]!;
    observe!(x.route, x.method, this.statusCode, (performance.now() - x.started) / 1000);
  }

  /** The request's address as Remix's Express adapter spells it (Express's protocol and hostname). */
  function requestUrl(req: IncomingMessage): string {
    const h = req.headers;
    const believed = trustProxy > 0 && trust(req.socket.remoteAddress, 0);
    const [, forwardedPort] = (h["x-forwarded-host"] as string | undefined)?.split(":") ?? [];
    const [, hostPort] = h.host?.split(":") ?? [];
    const fp = Number.parseInt(forwardedPort ?? "", 10);
    const hp = Number.parseInt(hostPort ?? "", 10);
    const port = Number.isSafeInteger(fp) ? fp : Number.isSafeInteger(hp) ? hp : "";
    let protocol = (req.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
    if (believed) {
      const header = (h["x-forwarded-proto"] as string | undefined) || protocol;
      const i = header.indexOf(",");
      protocol = i !== -1 ? header.substring(0, i).trim() : header.trim();
    }
    let host = h["x-forwarded-host"] as string | undefined;
    if (!host || !believed) host = h.host;
    else if (host.indexOf(",") !== -1) host = host.substring(0, host.indexOf(",")).trimEnd();
    let hostname: string | undefined;
    if (host) {
      const offset = host[0] === "[" ? host.indexOf("]") + 1 : 0;
      const i = host.indexOf(":", offset);
      hostname = i !== -1 ? host.substring(0, i) : host;
    }
    return `${protocol}://${hostname}${port ? `:${port}` : ""}${req.url}`;
  }

  /** Writes an answer: a json() body at once, with the fixed headers, in one writeHead. */
  function answer(req: IncomingMessage, res: ServerResponse, reqId: string, response: Response, head: boolean): Promise<void> | undefined {
    if (!req.complete) o.unread(req, res);
    const lazy = response as unknown as Record<symbol, unknown>;
    const pairs = lazy[JSON_HEADERS] as [string, string][] | undefined;
    const text = lazy[JSON_TEXT];
    // a header set before (Connection: close while shutting down) merges through setHeader
    if (pairs && typeof text === "string" && res.getHeaderNames().length === 0 && !response.statusText) {
      return void sendJson(res, response.status, fixed, reqId, pairs, text, head);
    }
    for (let i = 0; i < fixed.length; i += 2) res.setHeader(fixed[i], fixed[i + 1]);
    res.setHeader("X-Request-Id", reqId);
    return send(res, response, head);
  }

  /** What Express's last handler answers for an error the dispatch did not expect. */
  function failed(req: IncomingMessage, res: ServerResponse, reqId: string, err: unknown) {
    requestLogger(reqId).error({ err }, "[http] unexpected error");
    if (res.headersSent) return void res.destroy();
    if (!req.complete) o.unread(req, res);
    res.statusCode = 500;
    for (let i = 0; i < fixed.length; i += 2) res.setHeader(fixed[i], fixed[i + 1]);
    res.setHeader("X-Request-Id", reqId);
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.end(JSON.stringify({ error: "internal", message: "Something went wrong on our side; the request was not completed." }));
  }

  return (req, res) => {
    const url = req.url ?? "";
    if (!url.startsWith("/api/")) return false;
    const method = req.method ?? "";
    const isMutation = MUTATIONS.has(method);
    if (!isMutation && method !== "GET" && method !== "HEAD") return false;
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    if (pathname.endsWith(".data") || (q >= 0 && /[?&](_data|index)(=|&|$)/.test(url.slice(q)))) return false;
    const found = match(pathname);
    const fn = found && (isMutation ? found.module.action : found.module.loader);
    if (!found || !fn) return false;

    filterForwarded(req.headers, trustProxy);
    const reqId = requestIdOf(req.headers, trustProxy);
    const started = performance.now();
    // the route's id names the request in logs and metrics (the path would name every project)
    (res as Served)[EXCHANGE] = { reqId, route: found.id, method, started };
    res.once("close", onClose);
    if (observe) res.once("finish", onFinish);
    const clientAddress = (trustProxy > 0 ? proxyaddr(req, trust as (a: string, i: number) => boolean) : req.socket.remoteAddress) ?? "unknown";
    void serve(req, res, reqId, found, fn, method === "HEAD", clientAddress);
    return true;
  };

  /** A 400 with the error body for a request no route can be handed (its address is not one). */
  function refuse(req: IncomingMessage, res: ServerResponse, reqId: string, message: string, head: boolean) {
    if (!req.complete) o.unread(req, res);
    const text = JSON.stringify({ error: "invalid_payload", message });
    const pairs: [string, string][] = [["content-type", "application/json; charset=utf-8"], ["cache-control", "no-store"]];
    if (res.getHeaderNames().length === 0) return sendJson(res, 400, fixed, reqId, pairs, text, head);
    res.statusCode = 400;
    for (let i = 0; i < fixed.length; i += 2) res.setHeader(fixed[i], fixed[i + 1]);
    res.setHeader("X-Request-Id", reqId);
    for (const [name, value] of pairs) res.setHeader(name, value);
    res.end(head ? undefined : text);
  }

  async function serve(req: IncomingMessage, res: ServerResponse, reqId: string, found: ApiMatch, fn: RouteFunction, head: boolean, clientAddress: string) {
    let request: Request;
    try {
      request = toRequest(req, res, requestUrl);
    } catch {
      // the Host (or the forwarded host a trusted proxy sent) makes no address: the client's mistake
      return refuse(req, res, reqId, "The request's Host header is not a valid host.", head);
    }
    try {
      let response: Response;
      try {
        const out: unknown = fn({ request, params: found.params, context: o.loadContext(clientAddress) });
        // a loader that answers synchronously costs no extra turn of the microtask queue
        const result = typeof (out as PromiseLike<unknown> | null)?.then === "function" ? await out : out;
        if (!(result instanceof Response)) throw new Error(`Route "${found.id}" did not return a Response`);
        response = result;
      } catch (err) {
        if (err instanceof Response) {
          response = withHeader(err, "X-Remix-Catch", "yes");
        } else {
          if (!request.signal.aborted) requestLogger(reqId).error({ err }, `[api] route ${found.id} failed`);
          response = new Response("Unexpected Server Error", { status: 500, headers: { "Content-Type": "text/plain" } });
        }
      }
      const unexpected = UNEXPECTED && ((response as unknown as Record<symbol, { err: unknown; logged: boolean } | undefined>)[UNEXPECTED]);
      if (unexpected && !unexpected.logged) {
        unexpected.logged = true;
        requestLogger(reqId).error({ err: unexpected.err }, "[api] unexpected error");
      }
      const sending = answer(req, res, reqId, response, head);
      if (sending) await sending;
    } catch (err) {
      failed(req, res, reqId, err);
    }
  }
}

type RouteFunction = NonNullable<RouteModule["loader"]>;

/**
 * The Fetch Request for an Express request and the writer of a Fetch Response, over the app's fast
 * paths (see FetchFace).
 */
export function nodeFetch({ JSON_TEXT, JSON_HEADERS, NODE_BODY, NODE_TARGET, payloadTooLarge }: FetchFace) {
  /**
   * The Fetch Request Remix's Express adapter would build for this request, made lazily. On Node 20
   * the undici Request constructor (URL parsing, its Headers, its body stream and abort signal) costs
   * more than the rest of an API answer, and the API routes mostly read a header or two and take
   * their bodies through `readBody` (which takes the bytes straight from the socket, see NODE_BODY).
   * So this is a Request (`instanceof Request` holds) that is never constructed as one: `method`,
   * `url`, `headers`, `signal` and the body answer from the Node request, and every other member
   * (`mode`, `clone()`, the body readers…) from a full Request built on first use, as the adapter
   * builds it. Everything a route can observe is the same; the signal aborts when the client goes
   * away before the response is written.
   */
  class ApiRequest {
    private readonly rawUrl: string | (() => string);
    private href: string | undefined;
    private readonly req: IncomingMessage;
    private readonly res: ServerResponse;
    private nodeHeaders: NodeHeaders | undefined;
    private full: Request | undefined;
    private controller: AbortController | undefined;
    /** the body was read through NODE_BODY */
    private drained = false;

    constructor(rawUrl: string | (() => string), req: IncomingMessage, res: ServerResponse) {
      this.rawUrl = rawUrl;
      this.req = req;
      this.res = res;
    }

    get method(): string {
      return this.req.method!;
    }

    /** as the Request constructor serializes it */
    get url(): string {
      return (this.href ??= new URL(typeof this.rawUrl === "string" ? this.rawUrl : this.rawUrl()).href);
    }

    get headers(): Headers {
      return (this.nodeHeaders ??= new NodeHeaders(this.req.headers));
    }

    get signal(): AbortSignal {
      if (!this.controller) {
        const controller = (this.controller = new AbortController());
        const res = this.res;
        // the client went away before the response was written (now, or before this was asked for)
        if (res.destroyed && !res.writableFinished) controller.abort();
        else res.once("close", () => void (res.writableFinished || controller.abort()));
      }
      return this.controller.signal;
    }

    /** The Request as the adapter builds it, with the body stream (none for GET and HEAD). */
    request(): Request {
      if (this.full) return this.full;
      const init: RequestInit & { duplex?: "half" } = { method: this.method, headers: (this.headers as NodeHeaders).filled(), signal: this.signal };
      if (this.method !== "GET" && this.method !== "HEAD") {
        // a body already read through NODE_BODY is a used body here too
        init.body = this.drained ? "" : createReadableStreamFromReadable(this.req);
        init.duplex = "half";
      }
      this.full = new Request(this.url, init);
      if (this.drained) this.full.arrayBuffer().catch(() => {});
      return this.full;
    }

    get body() {
      return this.request().body;
    }
    get bodyUsed() {
      return this.drained || (this.full?.bodyUsed ?? false);
    }
    text() {
      return this.request().text();
    }
    json() {
      return this.request().json();
    }
    arrayBuffer() {
      return this.request().arrayBuffer();
    }
    blob() {
      return this.request().blob();
    }
    formData() {
      return this.request().formData();
    }
    clone(): Request {
      return this.request().clone();
    }

    /**
     * See NODE_TARGET: the target of a request whose address is spelled out only when asked for
     * (toRequest checked that it makes a SIMPLE_URL). Its query is the text after its first `?` and
     * before any `#`, as in the serialized address; URL parsing only percent-encodes `"`, `'`, `<`
     * and `>` in it, which URLSearchParams decodes back, so every parameter reads the same.
     */
    nodeTarget(): string | undefined {
      return typeof this.rawUrl === "string" ? undefined : this.req.url;
    }

    /** See NODE_BODY: the raw body straight from the socket, refused past `max` bytes or when `take` throws. */
    [NODE_BODY](max: number, take: (bytes: number) => void = () => {}): Promise<Buffer> | null {
      if (this.full || this.drained || this.method === "GET" || this.method === "HEAD") return null;
      this.drained = true;
      return readNodeBody(this.req, max, take);
    }
  }
  if (NODE_TARGET) Object.defineProperty(ApiRequest.prototype, NODE_TARGET, { value: ApiRequest.prototype.nodeTarget });
  Object.setPrototypeOf(ApiRequest.prototype, Request.prototype);
  delegate(ApiRequest.prototype, Request.prototype, (self: ApiRequest) => self.request());

  /** The request's bytes; a 413 (and no further reading) once they pass `max`, or what `take` throws for a chunk. */
  function readNodeBody(req: IncomingMessage, max: number, take: (bytes: number) => void): Promise<Buffer> {
    const now = buffered(req, max, take);
    if (now) return Promise.resolve(now);
    // A small body usually comes in the same packet as its headers, but the parser reads it only
    // after the request's handler has returned (a route that asks at once finds nothing yet): one
    // turn of the microtask queue later it is all buffered, and is taken without stream listeners.
    if (!req.complete) return Promise.resolve().then(() => buffered(req, max, take) ?? streamed(req, max, take));
    return streamed(req, max, take);
  }

  /** The whole body when the parser has it all and nothing has read from the stream; else null. */
  function buffered(req: IncomingMessage, max: number, take: (bytes: number) => void): Buffer | null {
    if (!req.complete || req.readableFlowing || req.readableEnded || req.readableObjectMode !== false || req.readableEncoding !== null) return null;
    const size = req.readableLength;
    if (size > max) throw payloadTooLarge("body", max);
    const bytes = size === 0 ? Buffer.alloc(0) : (req.read(size) as Buffer | null);
    if (bytes) take(size);
    return bytes;
  }

  /** The body as its chunks come. */
  function streamed(req: IncomingMessage, max: number, take: (bytes: number) => void): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (err?: unknown) => {
        req.off("data", onData);
        req.off("end", onEnd);
        req.off("error", done);
        req.off("close", onClose);
        if (err) reject(err);
        else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        try {
          if (size > max) throw payloadTooLarge("body", max);
          take(chunk.length);
        } catch (err) {
          // destroying the request would close the socket before the answer is written: stop reading instead
          req.pause();
          return done(err);
        }
        chunks.push(chunk);
      };
      const onEnd = () => done();
      const onClose = () => done(new Error("The client closed the connection before the body was read."));
      req.on("data", onData);
      req.once("end", onEnd);
      req.once("error", done);
      req.once("close", onClose);
    });
  }

  /**
   * The Fetch Request for this request (see ApiRequest); `urlOf` spells its address out as Remix's
   * Express adapter does (by default from an Express request's protocol and hostname).
   */
  function toRequest(req: IncomingMessage, res: ServerResponse, urlOf: (req: IncomingMessage) => string = expressUrl): Request {
    // a plain Host and path (and no forwarded host) always make an address the constructor takes:
    // it is spelled out only when a route reads `url`
    const host = req.headers.host;
    const target = req.url ?? "";
    if (host !== undefined && req.headers["x-forwarded-host"] === undefined && SIMPLE_HOST.test(host) && SIMPLE_PATH.test(target)) {
      return new ApiRequest(() => urlOf(req), req, res) as unknown as Request;
    }
    const url = urlOf(req);
    // an address the Request constructor would refuse fails here, as it did there
    if (!SIMPLE_URL.test(url)) new URL(url);
    return new ApiRequest(url, req, res) as unknown as Request;
  }


  /**
   * Writes a json() answer in one writeHead: `fixed` (name, value, name, value…), the request id,
   * the Response's header pairs and the length, then its text. Only on a response with no header set.
   */
  function sendJson(res: ServerResponse, status: number, fixed: readonly string[], reqId: string, pairs: [string, string][], text: string, head: boolean): void {
    const headers = fixed.slice();
    headers.push("X-Request-Id", reqId);
    for (const [key, value] of pairs) headers.push(key, value);
    if (!head) headers.push("Content-Length", String(Buffer.byteLength(text)));
    res.writeHead(status, headers);
    res.end(head ? undefined : text);
  }

  /** Writes the Response; a promise only while a body is still being read or piped. */
  function send(res: ServerResponse, response: Response, head: boolean): Promise<void> | undefined {
    res.statusMessage = response.statusText;
    res.statusCode = response.status;
    const lazy = response as unknown as Record<symbol, unknown>;
    // a Response made by json() hands over its headers as pairs while its Headers were never made
    const pairs = lazy[JSON_HEADERS] as [string, string][] | undefined;
    const headers: Iterable<[string, string]> = pairs ?? response.headers;
    for (const [key, value] of headers) {
      // what Express's res.append wrote: a header once, a repeated one as several lines, and a
      // text or JSON Content-Type with its charset (a json() one already names it)
      const prev = res.getHeader(key);
      if (prev === undefined) res.setHeader(key, key === "content-type" && !pairs ? withCharset(value) : value);
      else if (key === "content-type") res.setHeader(key, withCharset(value));
      else res.appendHeader(key, value);
    }
    // a body made by json() is written from its text: its stream is never made (see JsonResponse)
    const text = lazy[JSON_TEXT];
    if (typeof text === "string") return void res.end(head ? undefined : text);
    if (!response.body || head) return void res.end();
    // API bodies are small JSON documents: one write with a Content-Length is cheaper than piping a
    // stream (an event-stream would still be piped as it comes)
    const body = response.body;
    if (/text\/event-stream/i.test(response.headers.get("content-type") ?? "")) {
      res.flushHeaders();
      return writeReadableStreamToWritable(body, res);
    }
    return response.arrayBuffer().then((bytes) => void res.end(Buffer.from(bytes)));
  }

  return { toRequest, send, sendJson };
}

/** The request's address as Remix's Express adapter spells it, for an Express request. */
export function expressUrl(node: IncomingMessage): string {
  const req = node as ExpressRequest;
  const [, forwardedPort] = req.get("X-Forwarded-Host")?.split(":") ?? [];
  const [, hostPort] = req.get("host")?.split(":") ?? [];
  const fp = Number.parseInt(forwardedPort ?? "", 10);
  const hp = Number.parseInt(hostPort ?? "", 10);
  const port = Number.isSafeInteger(fp) ? fp : Number.isSafeInteger(hp) ? hp : "";
  return `${req.protocol}://${req.hostname}${port ? `:${port}` : ""}${req.originalUrl}`;
}

/** A Content-Type as Express's res.set writes it: a text, JavaScript or JSON type names its charset. */
function withCharset(type: string): string {
  if (/;\s*charset\s*=/.test(type)) return type;
  return /^text\/|^application\/(javascript|json)/.test(type.split(";")[0]) ? `${type}; charset=utf-8` : type;
}

/** An http(s) URL with a plain host name or IPv4 address, which `new URL` always accepts. */
const SIMPLE_URL = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?\/[\x21-\x7e]*$/i;
/** A Host header and a request target that make a SIMPLE_URL. */
const SIMPLE_HOST = /^[a-z0-9.-]+(:\d{1,5})?$/i;
const SIMPLE_PATH = /^\/[\x21-\x7e]*$/;

/** A header name as Headers takes it (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/i;

/**
 * The Headers of a Node request, filled from it only when something other than `get` or `has` is
 * used (iteration, a change, handing it to a Request): reading a header or two is what API routes
 * do. Filled as the Express adapter fills them: empty values are left out, repeated ones appended.
 */
class NodeHeaders extends Headers {
  private source: IncomingHttpHeaders | undefined;

  constructor(source: IncomingHttpHeaders) {
    super();
    this.source = source;
  }

  /** These headers, filled from the Node request. */
  filled(): this {
    const source = this.source;
    if (source) {
      this.source = undefined;
      for (const [key, values] of Object.entries(source)) {
        if (!values) continue;
        if (Array.isArray(values)) for (const v of values) super.append(key, v);
        else super.set(key, values);
      }
    }
    return this;
  }

  override get(name: string): string | null {
    const source = this.source;
    // a name Headers would refuse is refused by Headers
    if (!source || !TOKEN.test(name)) return this.filled() && super.get(name);
    const v = source[name.toLowerCase()];
    return !v ? null : Array.isArray(v) ? v.join(", ") : v;
  }

  override has(name: string): boolean {
    return this.get(name) !== null;
  }
}
delegate(NodeHeaders.prototype, Headers.prototype, (self: NodeHeaders) => self.filled(), (name) => name !== "get" && name !== "has");

/**
 * Every member of `base`'s prototype that `proto` does not define answers from `target(this)`:
 * getters and methods alike, symbols included.
 */
function delegate<T>(proto: object, base: object, target: (self: T) => object, include: (name: string | symbol) => boolean = () => true) {
  for (const name of Reflect.ownKeys(base)) {
    if (name === "constructor" || Object.hasOwn(proto, name) || !include(name)) continue;
    const d = Object.getOwnPropertyDescriptor(base, name)!;
    if (d.get) {
      const get = d.get;
      Object.defineProperty(proto, name, { configurable: true, enumerable: d.enumerable, get(this: T) { return get.call(target(this)); } });
    } else if (typeof d.value === "function") {
      const fn = d.value as (...args: unknown[]) => unknown;
      Object.defineProperty(proto, name, { configurable: true, writable: true, enumerable: d.enumerable, value(this: T, ...args: unknown[]) { return fn.apply(target(this), args); } });
    }
  }
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
