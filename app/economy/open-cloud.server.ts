/**
 * A client for the Open Cloud data-stores v2 API that callers cannot misuse: every request waits for
 * the pacer, a 429 waits for Retry-After (or x-ratelimit-reset) before trying again, 5xx and network
 * errors back off exponentially, 401/403 end the scan with a typed error, and everything stops at
 * once when the signal aborts. Requests go only to the configured base URL, without redirects.
 */

export const MAX_PAGE_SIZE = 256;
const REQUEST_TIMEOUT_MS = 30_000;
const MAX_SERVER_ATTEMPTS = 6;
const MAX_RATE_LIMITED = 50;
const MAX_WAIT_MS = 5 * 60_000;

export class Interrupted extends Error {
  constructor() {
    super("interrupted");
  }
}

/** 401/403: the key is wrong, expired, or lacks a scope. Retrying cannot help. */
export class OpenCloudAuthError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(
      status === 401
        ? `Open Cloud rejected the API key (401 ${detail}); store a valid key with PUT /api/economy/key and start the scan again.`
        : `The Open Cloud key is not allowed to read this data store (403 ${detail}); it needs universe-datastores.objects:list and universe-datastores.objects:read for the universe.`,
    );
  }
}

/** Any other failure that retries did not cure. */
export class OpenCloudError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Interrupted());
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new Interrupted());
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Spaces requests evenly at `perMinute` (with a 2% margin), so no rolling minute ever holds more than
 * the budget: not even across a restart, since a new process needs longer than one interval to start.
 */
export class Pacer {
  private next = 0;
  readonly intervalMs: number;

  constructor(perMinute: number) {
    this.intervalMs = (60_000 / perMinute) * 1.02;
  }

  /** Callers take one at a time (the scan is sequential); the gap is measured from the actual send. */
  async take(signal?: AbortSignal): Promise<void> {
    for (;;) {
      const wait = this.next - performance.now();
      if (wait <= 0) break;
      await sleep(Math.ceil(wait), signal);
    }
    this.next = performance.now() + this.intervalMs;
  }

  /** Nothing goes out before `ms` from now (after a 429). */
  pause(ms: number) {
    this.next = Math.max(this.next, performance.now() + ms);
  }
}

/** Seconds to wait from Retry-After (seconds or HTTP date), else x-ratelimit-reset (seconds), else null. */
export function retryDelayMs(headers: Headers, now = Date.now()): number | null {
  const ra = headers.get("retry-after")?.trim();
  if (ra) {
    if (/^\d+(\.\d+)?$/.test(ra)) return Number(ra) * 1000;
    const at = Date.parse(ra);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  const reset = headers.get("x-ratelimit-reset")?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) {
    const n = Number(reset);
    // a value that looks like a Unix time is a moment, not a duration
    return n > 1e9 ? Math.max(0, n * 1000 - now) : n * 1000;
  }
  return null;
}

async function errorDetail(res: Response): Promise<string> {
  const text = await res.text().catch(() => "");
  try {
    const body = JSON.parse(text);
    if (Array.isArray(body?.errors) && body.errors[0]?.message) return String(body.errors[0].message).slice(0, 200);
    if (body?.code || body?.message) return [body.code, body.message].filter(Boolean).join(": ").slice(0, 200);
  } catch {
    /* not JSON */
  }
  return res.statusText || "error";
}

export type OpenCloudTarget = {
  baseUrl: string;
  apiKey: string;
  universeId: string;
  datastoreName: string;
  scope: string;
  keyPrefix: string | null;
};

export type ListedEntry = { id: string };
export type EntryValue = { id: string; value: unknown; revisionCreateTime: Date | null };

export class OpenCloudClient {
  private readonly entriesUrl: string;
  /** requests sent, for progress logs and tests */
  requests = 0;

  constructor(
    private readonly target: OpenCloudTarget,
    private readonly pacer: Pacer,
    private readonly signal: AbortSignal,
    private readonly backoffBaseMs = 1000,
  ) {
    const base = target.baseUrl.replace(/\/+$/, "");
    const scope = target.scope && target.scope !== "global" ? `/scopes/${encodeURIComponent(target.scope)}` : "";
    this.entriesUrl = `${base}/cloud/v2/universes/${target.universeId}/data-stores/${encodeURIComponent(target.datastoreName)}${scope}/entries`;
  }

  /** One page of entry ids. The paging parameters stay the same on every page (the API requires it). */
  async listEntries(pageToken: string | null): Promise<{ entries: ListedEntry[]; nextPageToken: string | null }> {
    const q = new URLSearchParams({ maxPageSize: String(MAX_PAGE_SIZE) });
    if (this.target.keyPrefix) q.set("filter", `id.startsWith("${this.target.keyPrefix.replace(/["\\]/g, "\\$&")}")`);
    if (pageToken) q.set("pageToken", pageToken);
    const body = (await this.request(`${this.entriesUrl}?${q}`)) as { dataStoreEntries?: { id?: unknown }[]; nextPageToken?: unknown } | null;
    if (!body) throw new OpenCloudError(404, "The data store was not found; check universe_id and datastore_name.");
    const entries = (body.dataStoreEntries ?? []).filter((e) => typeof e?.id === "string").map((e) => ({ id: e.id as string }));
    const next = typeof body.nextPageToken === "string" && body.nextPageToken !== "" ? body.nextPageToken : null;
    return { entries, nextPageToken: next };
  }

  /** One entry's value, or null when it is gone or deleted. */
  async getEntry(id: string): Promise<EntryValue | null> {
    const body = (await this.request(`${this.entriesUrl}/${encodeURIComponent(id)}`)) as Record<string, unknown> | null;
    if (!body || body.state === "DELETED") return null;
    const t = Date.parse(String(body.revisionCreateTime ?? body.createTime ?? ""));
    return { id, value: body.value, revisionCreateTime: Number.isNaN(t) ? null : new Date(t) };
  }

  private async request(url: string): Promise<unknown> {
    let serverFailures = 0;
    let rateLimited = 0;
    for (;;) {
      await this.pacer.take(this.signal);
      this.requests++;
      let res: Response;
      try {
        res = await fetch(url, {
          headers: { "x-api-key": this.target.apiKey, accept: "application/json" },
          redirect: "error",
          signal: AbortSignal.any([this.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
        });
      } catch (err) {
        if (this.signal.aborted) throw new Interrupted();
        if (++serverFailures >= MAX_SERVER_ATTEMPTS) throw new OpenCloudError(0, `Open Cloud could not be reached: ${(err as Error).message}`);
        await this.backoff(serverFailures);
        continue;
      }
      if (res.ok) return res.json();
      if (res.status === 401 || res.status === 403) throw new OpenCloudAuthError(res.status, await errorDetail(res));
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      if (res.status === 429) {
        await res.body?.cancel();
        if (++rateLimited > MAX_RATE_LIMITED) throw new OpenCloudError(429, "Open Cloud kept answering 429 Too Many Requests.");
        const wait = Math.min(MAX_WAIT_MS, retryDelayMs(res.headers) ?? this.backoffBaseMs * 2 ** Math.min(rateLimited, 6));
        this.pacer.pause(wait);
        continue;
      }
      if (res.status >= 500) {
        const detail = await errorDetail(res);
        if (++serverFailures >= MAX_SERVER_ATTEMPTS) throw new OpenCloudError(res.status, `Open Cloud kept failing (${res.status} ${detail}).`);
        await this.backoff(serverFailures);
        continue;
      }
      throw new OpenCloudError(res.status, `Open Cloud refused the request (${res.status} ${await errorDetail(res)}).`);
    }
  }

  private backoff(attempt: number) {
    const ms = Math.min(60_000, this.backoffBaseMs * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
    return sleep(ms, this.signal);
  }
}
