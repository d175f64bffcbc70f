import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { isPublicAddress } from "./address.server";

/**
 * The one outbound HTTP sender for every alert adapter, shaped so callers cannot misuse it:
 * - the host is resolved once, every address is checked, and the connection goes to the checked
 *   address (no second lookup an attacker's DNS could answer differently);
 * - every destination that is not global unicast (private, loopback, link-local, site-local,
 *   tunnelled and IPv4-embedding IPv6 forms…) is refused unless WEBHOOK_ALLOW_PRIVATE is set;
 * - redirects are never followed (a 3xx is a failure), each attempt has a fixed 5 s timeout;
 * - 429s are retried after `retry_after` (Discord body, float seconds) or `Retry-After`, 5xx and
 *   network errors after a short backoff, up to a bound on attempts and on the wait.
 */
export type OutboundRequest = { url: string; body: string; headers?: Record<string, string> };
export type SendResult = { ok: boolean; status: number | null; error: string | null; attempts: number };
export type SendOptions = {
  allowPrivate: boolean;
  timeoutMs?: number;
  maxAttempts?: number;
  /** a 429 asking to wait longer than this is not retried */
  maxRetryWaitMs?: number;
};

const TIMEOUT_MS = 5_000;
const MAX_ATTEMPTS = 3;
const MAX_RETRY_WAIT_MS = 10_000;
const MAX_RESPONSE_BYTES = 16 * 1024;

/** True for addresses a webhook must not reach from a production server: anything but global unicast. */
export const isPrivateAddress = (address: string): boolean => !isPublicAddress(address);

class Refused extends Error {}

async function resolvePinned(url: URL, allowPrivate: boolean): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Refused(`${host} does not resolve`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) throw new Refused(`${host} resolves to a private or loopback address (${bad.address}); refused`);
  }
  return addresses[0];
}

type Attempt = { status: number | null; body: string; headers: http.IncomingHttpHeaders; error: string | null; retryable: boolean };

function attempt(url: URL, pinned: { address: string; family: number }, req: OutboundRequest, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const lib = url.protocol === "https:" ? https : http;
    let settled = false;
    const done = (a: Attempt) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(a);
    };
    const r = lib.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ""),
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "roblox-monitor-alerts/1", ...req.headers, "content-length": Buffer.byteLength(req.body) },
        // connect to the address that was checked, whatever DNS would say now
        lookup: (_host, opts, cb) => {
          if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
          else cb(null, pinned.address, pinned.family);
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size <= MAX_RESPONSE_BYTES) chunks.push(c);
        });
        res.on("end", () => done({ status: res.statusCode ?? null, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers, error: null, retryable: false }));
        res.on("error", (e) => done({ status: res.statusCode ?? null, body: "", headers: res.headers, error: e.message, retryable: true }));
      },
    );
    const timer = setTimeout(() => {
      r.destroy();
      done({ status: null, body: "", headers: {}, error: `no answer within ${timeoutMs / 1000} s`, retryable: false });
    }, timeoutMs);
    r.on("error", (e) => done({ status: null, body: "", headers: {}, error: e.message, retryable: true }));
    r.end(req.body);
  });
}

/** Seconds to wait before retrying a 429: Discord's JSON `retry_after`, else the Retry-After header. */
export function retryAfterMs(body: string, headers: http.IncomingHttpHeaders): number | null {
  try {
    const j = JSON.parse(body) as { retry_after?: unknown };
    if (typeof j.retry_after === "number" && j.retry_after >= 0) return Math.ceil(j.retry_after * 1000);
  } catch {
    // not JSON (Slack answers text)
  }
  const h = headers["retry-after"];
  const v = Array.isArray(h) ? h[0] : h;
  if (v && /^\d+(\.\d+)?$/.test(v.trim())) return Math.ceil(Number(v) * 1000);
  if (v) {
    const at = Date.parse(v);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function describe(a: Attempt): string {
  const text = a.body.trim().slice(0, 300);
  return `HTTP ${a.status}${text ? `: ${text}` : ""}`;
}

export async function sendWebhook(req: OutboundRequest, opts: SendOptions): Promise<SendResult> {
  const timeoutMs = opts.timeoutMs ?? TIMEOUT_MS;
  const maxAttempts = opts.maxAttempts ?? MAX_ATTEMPTS;
  const maxWait = opts.maxRetryWaitMs ?? MAX_RETRY_WAIT_MS;
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { ok: false, status: null, error: "the channel URL is not a valid URL", attempts: 0 };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, status: null, error: "only http and https URLs are allowed", attempts: 0 };
  let pinned: { address: string; family: number };
  try {
    pinned = await resolvePinned(url, opts.allowPrivate);
  } catch (err) {
    return { ok: false, status: null, error: err instanceof Refused ? err.message : `DNS lookup failed: ${(err as Error).message}`, attempts: 0 };
  }

  let last: Attempt | undefined;
  let tries = 0;
  for (let n = 1; n <= maxAttempts; n++) {
    const a = await attempt(url, pinned, req, timeoutMs);
    last = a;
    tries = n;
    if (a.status !== null && a.status >= 200 && a.status < 300) return { ok: true, status: a.status, error: null, attempts: n };
    if (a.status !== null && a.status >= 300 && a.status < 400) {
      return { ok: false, status: a.status, error: `HTTP ${a.status}: redirects are not followed`, attempts: n };
    }
    let wait: number | null = null;
    if (a.status === 429) {
      wait = retryAfterMs(a.body, a.headers) ?? 1000 * n;
      if (wait > maxWait) return { ok: false, status: 429, error: `${describe(a)} (asked to wait ${Math.ceil(wait / 1000)} s; not retried)`, attempts: n };
    } else if ((a.status !== null && a.status >= 500) || a.retryable) {
      wait = 500 * n;
    }
    if (wait === null || n === maxAttempts) break;
    await sleep(wait);
  }
  return { ok: false, status: last!.status, error: last!.error ?? describe(last!), attempts: tries };
}
