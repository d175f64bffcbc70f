import { createServer, type IncomingMessage, type ServerResponse } from "node:http";

/**
 * A local stand-in for the Roblox Open Cloud data-stores v2 API, speaking its documented paths,
 * auth header, paging, error bodies and rate-limit answers:
 *   GET /cloud/v2/universes/{u}/data-stores/{ds}[/scopes/{scope}]/entries?maxPageSize=&pageToken=&filter=
 *   GET /cloud/v2/universes/{u}/data-stores/{ds}[/scopes/{scope}]/entries/{id}
 * Bad key: 401 with the gateway body; wrong universe or `forbid`: 403 PERMISSION_DENIED; injected
 * 429 with Retry-After; injected 5xx; paging parameters that change between pages: 400.
 * Every request's arrival time is kept so tests can check the client's pacing.
 */
export type FakeEntry = { id: string; value: unknown; revisionCreateTime?: string; deleted?: boolean };

type Injection = { status: number; headers?: Record<string, string>; afterRequests: number };

export type FakeOpenCloud = {
  url: string;
  apiKey: string;
  universeId: string;
  datastoreName: string;
  /** arrival times (ms) of every request, in order */
  arrivals: number[];
  log: { path: string; status: number }[];
  entries: Map<string, FakeEntry>;
  /** answer `status` once the fake has seen `afterRequests` requests (once per injection) */
  inject(status: number, afterRequests: number, headers?: Record<string, string>): void;
  forbid: boolean;
  /** the most requests that arrived within any window of `ms` */
  maxInWindow(ms: number): number;
  close(): Promise<void>;
};

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
};
const v2Error = (code: string, message: string) => ({ code, message, details: [] });

export async function startFakeOpenCloud(opts: {
  apiKey?: string;
  universeId?: string;
  datastoreName?: string;
  entries?: FakeEntry[];
}): Promise<FakeOpenCloud> {
  const state: Omit<FakeOpenCloud, "url" | "close" | "inject" | "maxInWindow"> = {
    apiKey: opts.apiKey ?? "oc_fake_key_1234567890",
    universeId: opts.universeId ?? "4815162342",
    datastoreName: opts.datastoreName ?? "PlayerData",
    arrivals: [],
    log: [],
    entries: new Map((opts.entries ?? []).map((e) => [e.id, e])),
    forbid: false,
  };
  const injections: Injection[] = [];

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    state.arrivals.push(performance.now());
    const url = new URL(req.url ?? "/", "http://fake");
    const reply = (status: number, body: unknown, headers?: Record<string, string>) => {
      state.log.push({ path: url.pathname + url.search, status });
      send(res, status, body, headers);
    };
    const due = injections.findIndex((i) => state.arrivals.length > i.afterRequests);
    if (due >= 0) {
      const [inj] = injections.splice(due, 1);
      const body = inj.status === 429 ? v2Error("RESOURCE_EXHAUSTED", "Too many requests.") : v2Error("UNAVAILABLE", "The service is unavailable.");
      return reply(inj.status, body, inj.headers);
    }
    const m = /^\/cloud\/v2\/universes\/([^/]+)\/data-stores\/([^/]+)(?:\/scopes\/([^/]+))?\/entries(?:\/([^/]+))?$/.exec(url.pathname);
    if (req.method !== "GET" || !m) return reply(404, v2Error("NOT_FOUND", "Not found."));
    if (req.headers["x-api-key"] !== state.apiKey) return reply(401, { errors: [{ code: 0, message: "Invalid API Key" }] });
    const [, universe, ds, , rawId] = m;
    if (state.forbid || universe !== state.universeId) {
      return reply(403, v2Error("PERMISSION_DENIED", "Insufficient scope: universe-datastores.objects:list"));
    }
    if (decodeURIComponent(ds) !== state.datastoreName) return reply(404, v2Error("NOT_FOUND", "Data store not found."));
    const base = `universes/${universe}/data-stores/${ds}`;
    if (rawId !== undefined) {
      const id = decodeURIComponent(rawId);
      const e = state.entries.get(id);
      if (!e || e.deleted) return reply(404, v2Error("NOT_FOUND", "Entry not found."));
      const rev = e.revisionCreateTime ?? "2026-01-01T00:00:00.000Z";
      const userIds = /(\d+)$/.exec(id);
      return reply(200, {
        path: `${base}/entries/${id}`,
        createTime: "2025-06-01T00:00:00.000Z",
        revisionId: "08DC" + rev.replace(/\D/g, ""),
        revisionCreateTime: rev,
        state: "ACTIVE",
        etag: `"${rev}"`,
        value: e.value,
        id,
        users: userIds ? [`users/${userIds[1]}`] : [],
        attributes: {},
      });
    }
    const rawSize = url.searchParams.get("maxPageSize");
    const size = rawSize === null ? 10 : Number(rawSize);
    if (!Number.isInteger(size) || size < 1 || size > 256) return reply(400, v2Error("INVALID_ARGUMENT", "maxPageSize must be between 1 and 256."));
    const filter = url.searchParams.get("filter") ?? "";
    const prefix = /^id\.startsWith\("(.*)"\)$/.exec(filter)?.[1] ?? (filter ? null : "");
    if (prefix === null) return reply(400, v2Error("INVALID_ARGUMENT", "Unsupported filter."));
    let offset = 0;
    const token = url.searchParams.get("pageToken");
    if (token) {
      let t: { offset: number; size: number; filter: string };
      try {
        t = JSON.parse(Buffer.from(token, "base64url").toString());
      } catch {
        return reply(400, v2Error("INVALID_ARGUMENT", "Invalid page token."));
      }
      if (t.size !== size || t.filter !== filter) return reply(400, v2Error("INVALID_ARGUMENT", "Paging parameters must stay the same."));
      offset = t.offset;
    }
    const ids = [...state.entries.values()].filter((e) => !e.deleted && e.id.startsWith(prefix)).map((e) => e.id);
    const pageIds = ids.slice(offset, offset + size);
    const more = offset + size < ids.length;
    return reply(200, {
      dataStoreEntries: pageIds.map((id) => ({ path: `${base}/entries/${id}`, id })),
      nextPageToken: more ? Buffer.from(JSON.stringify({ offset: offset + size, size, filter })).toString("base64url") : "",
    });
  };

  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const fake = state as FakeOpenCloud;
  fake.url = `http://127.0.0.1:${port}`;
  fake.inject = (status, afterRequests, headers) => injections.push({ status, afterRequests, headers });
  fake.maxInWindow = (ms) => {
    let max = 0;
    let lo = 0;
    for (let hi = 0; hi < fake.arrivals.length; hi++) {
      while (fake.arrivals[hi] - fake.arrivals[lo] >= ms) lo++;
      max = Math.max(max, hi - lo + 1);
    }
    return max;
  };
  fake.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return fake;
}
