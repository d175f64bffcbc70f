import type { IncomingHttpHeaders } from "node:http";
import type { RequestHandler } from "express";
import helmet from "helmet";

/**
 * Express-level hardening shared by every route: forwarded headers believed only from a trusted
 * proxy and a fixed set of security headers.
 */

const HOST = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/i;
const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.split(",")[0].trim();

/**
 * X-Forwarded-Host/-Proto/-For and Forwarded are dropped unless TRUST_PROXY is set, so a client
 * cannot choose the scheme and host of the links the service hands out, the host the CSRF check
 * compares against, or the address the rate limits count. When they are believed, a scheme other
 * than http/https or a host that is not a host name is dropped too.
 */
export function forwardedHeaders(trustProxy: number): RequestHandler {
  return (req, _res, next) => {
    filterForwarded(req.headers, trustProxy);
    next();
  };
}

/** forwardedHeaders' work on a request's headers (the API dispatch's requests skip Express). */
export function filterForwarded(h: IncomingHttpHeaders, trustProxy: number): void {
  if (trustProxy === 0) {
    if (h["x-forwarded-host"] !== undefined) delete h["x-forwarded-host"];
    if (h["x-forwarded-proto"] !== undefined) delete h["x-forwarded-proto"];
    if (h["x-forwarded-port"] !== undefined) delete h["x-forwarded-port"];
    if (h["x-forwarded-for"] !== undefined) delete h["x-forwarded-for"];
    if (h["forwarded"] !== undefined) delete h["forwarded"];
    return;
  }
  const proto = first(h["x-forwarded-proto"]);
  if (proto !== undefined && !/^https?$/i.test(proto)) delete h["x-forwarded-proto"];
  const host = first(h["x-forwarded-host"]);
  if (host !== undefined && !HOST.test(host)) delete h["x-forwarded-host"];
  // the proxy's host replaces ours whole: Remix would otherwise keep our port on the proxy's name
  else if (host !== undefined) h.host = host;
}

/** The origin the client used, as the Remix request URL sees it (forwarded headers already filtered). */
export const requestOrigin = (req: { protocol: string; get(name: string): string | undefined }) =>
  `${req.protocol}://${first(req.get("x-forwarded-host")) || req.get("host") || "localhost"}`;

/**
 * Security headers on every response: pages cannot be framed (clickjacking of the signed-in
 * dashboard), content types are not sniffed, URLs (which hold project ids and share tokens) are not
 * sent to other sites, and the CSP keeps every fetch, script, style and form on our own origin.
 * Remix hydrates through inline scripts and the pages use inline styles, so those stay allowed; no
 * script from another origin can load. HSTS is left to the TLS-terminating proxy, which knows
 * whether the site is https-only. In development Vite's HMR also needs its websocket.
 */
export function securityHeaders(opts: { dev?: boolean } = {}): RequestHandler {
  const common = helmetHeaders(opts);
  const steps = fixedSecurityHeaders(opts);
  return (req, res, next) => {
    // a share page's URL is its credential: it is never sent anywhere, not even to our own pages
    res.setHeader("Referrer-Policy", /^\/share\//.test(req.path) ? "no-referrer" : "same-origin");
    if (!steps) return common(req, res, next);
    for (const [name, value] of steps) {
      if (value === undefined) res.removeHeader(name);
      else res.setHeader(name, value);
    }
    next();
  };
}

/**
 * The header writes of the security headers but Referrer-Policy, recorded once (see
 * recordHeaderWrites); null if helmet's did not record.
 */
export const fixedSecurityHeaders = (opts: { dev?: boolean } = {}) => recordHeaderWrites(helmetHeaders(opts));

/** helmet with the policy above (all but Referrer-Policy, which depends on the path). */
export function helmetHeaders(opts: { dev?: boolean } = {}): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'self'"],
        "script-src": ["'self'", "'unsafe-inline'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'", ...(opts.dev ? ["ws:", "wss:"] : [])],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
        "form-action": ["'self'"],
      },
    },
    xFrameOptions: { action: "deny" },
    referrerPolicy: false,
    strictTransportSecurity: false,
    crossOriginResourcePolicy: { policy: "same-origin" },
  });
}

type HeaderWrite = [name: string, value?: string];

/**
 * The header writes a middleware makes (in order; no value is a removal) when it depends on nothing
 * in the request, as helmet's does for a fixed configuration: recorded once instead of running its
 * chain of a dozen middlewares on every response. Null when it did anything else.
 */
export function recordHeaderWrites(middleware: RequestHandler): HeaderWrite[] | null {
  const writes: HeaderWrite[] = [];
  let exact = true;
  let passed = false;
  const res = {
    setHeader(name: unknown, value: unknown) {
      if (typeof name === "string" && typeof value === "string") writes.push([name, value]);
      else exact = false;
    },
    removeHeader(name: unknown) {
      if (typeof name === "string") writes.push([name]);
      else exact = false;
    },
  };
  // a request without anything in it: a middleware that reads it fails or records something else
  const req = new Proxy({}, { get: () => (exact = false), has: () => (exact = false) });
  try {
    middleware(req as never, res as never, (err?: unknown) => (passed = err === undefined));
  } catch {
    return null;
  }
  return exact && passed ? writes : null;
}

/** Share tokens are credentials: a logged URL keeps its shape but not the token (every log line goes through it, log/redact.ts). */
export { redactUrl } from "../log/redact.js";
