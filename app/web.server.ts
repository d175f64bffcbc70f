import type { RequestHandler } from "express";
import helmet from "helmet";

/**
 * Express-level hardening shared by every route: forwarded headers believed only from a trusted
 * proxy, a fixed set of security headers, and request logs without share tokens.
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
    const h = req.headers;
    if (trustProxy === 0) {
      delete h["x-forwarded-host"];
      delete h["x-forwarded-proto"];
      delete h["x-forwarded-port"];
      delete h["x-forwarded-for"];
      delete h["forwarded"];
      return next();
    }
    const proto = first(h["x-forwarded-proto"]);
    if (proto !== undefined && !/^https?$/i.test(proto)) delete h["x-forwarded-proto"];
    const host = first(h["x-forwarded-host"]);
    if (host !== undefined && !HOST.test(host)) delete h["x-forwarded-host"];
    // the proxy's host replaces ours whole: Remix would otherwise keep our port on the proxy's name
    else if (host !== undefined) h.host = host;
    next();
  };
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
  const common = helmet({
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
  return (req, res, next) => {
    // a share page's URL is its credential: it is never sent anywhere, not even to our own pages
    res.setHeader("Referrer-Policy", /^\/share\//.test(req.path) ? "no-referrer" : "same-origin");
    common(req, res, next);
  };
}

/** Share tokens are credentials: a logged URL keeps its shape but not the token. */
export const redactUrl = (url: string) =>
  url.replace(/(\/share\/)[^/?#]+/gi, "$1[redacted]").replace(/shr_[A-Za-z0-9_-]+/g, "shr_[redacted]");
