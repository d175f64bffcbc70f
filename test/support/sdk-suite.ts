import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, expect } from "vitest";
import { createProject, startTestApp, type TestApp } from "./server.js";
import { createRobloxServer, type RobloxOptions, type RobloxServer } from "./roblox.js";
import { countersApplied } from "./counters.js";

/** What the proxy in front of the service does: pass through, answer 429, or drop connections as an outage would. */
export type ProxyMode =
  | { kind: "pass" }
  | { kind: "429"; retryAfter: string; times: number }
  | { kind: "down" }
  /** the service answering 503 to everything */
  | { kind: "503" }
  /** the request reaches the service, and its answer is lost on the way back */
  | { kind: "lose-response"; times: number }
  /** something in front of the service (a WAF, a proxy) refusing with its own page */
  | { kind: "403" };

export const luaString = (s: string) => JSON.stringify(s);

/**
 * Hooks for an SDK test file: the real service on a fresh database behind a proxy the test
 * controls, a new project (and key) per test, and checks after each test that no SDK thread died.
 * `env`: the service's configuration (its limits, say). One file holds a limited number of
 * simulated servers: luau-web's memory does not grow, and a
 * state cannot be destroyed and replaced in the same process (see roblox.ts).
 */
export function sdkSuite(env: Record<string, string> = {}) {
  let proxy: http.Server;
  const upstreamAgent = new http.Agent({ keepAlive: false });
  const t = {
    app: undefined as unknown as TestApp,
    apiKey: "",
    projectId: "",
    rbx: undefined as unknown as RobloxServer,
    proxyUrl: "",
    mode: { kind: "pass" } as ProxyMode,
    /** A simulated game server running `Monitor.init` against the proxy with the project's key. */
    async start(options = "", robloxOptions: RobloxOptions = {}) {
      t.rbx = await createRobloxServer({ placeId: 1818, placeVersion: 42, jobId: "0b7c2a4e-5f6d-4e3b-9a1c-2d3e4f5a6b7c", ...robloxOptions });
      return t.rbx.run(`return Monitor.init({ url = ${luaString(t.proxyUrl)}, apiKey = ${luaString(t.apiKey)}, ${options} })`);
    },
    // user_count is a deferred counter (db/counter-deltas.ts): read once applied
    groups: async () =>
      (await countersApplied(t.app.sql), t.app.sql<{ message: string; count: string; level: string; user_count: string }[]>`
        select message, count::text, level, user_count::text from error_groups where project_id = ${t.projectId} order by message`),
    events: () =>
      t.app.sql<any[]>`
        select message, level, stack_trace, user_id::text, player_name, trace_id::text, job_id, place_id::text, game_version,
          environment, context, tags, count from events where project_id = ${t.projectId} order by id`,
  };

  beforeAll(async () => {
    t.app = await startTestApp(env);
    proxy = http.createServer(async (req, res) => {
      const mode = t.mode;
      if (mode.kind === "down") {
        req.socket.destroy();
        return;
      }
      if (mode.kind === "503") {
        req.resume();
        res.writeHead(503, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "unavailable", message: "The database cannot be reached." }));
        return;
      }
      if (mode.kind === "403") {
        req.resume();
        res.writeHead(403, { "content-type": "text/html" });
        res.end("<html><body><h1>403 Forbidden</h1>Request blocked.</body></html>");
        return;
      }
      if (mode.kind === "429" && mode.times > 0) {
        mode.times -= 1;
        req.resume();
        res.writeHead(429, { "content-type": "application/json", "retry-after": mode.retryAfter });
        res.end(JSON.stringify({ error: "rate_limited", message: "Too many requests." }));
        return;
      }
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !["host", "connection"].includes(k))) as Record<string, string>;
      // a fresh connection to the service each time: a kept-alive one the service closed while idle
      // would fail the request for a reason no game server meets
      const target = new URL(t.app.url);
      const upstream = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer } | null>((resolve) => {
        const out = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent: upstreamAgent }, async (answer) => {
          const parts: Buffer[] = [];
          for await (const part of answer) parts.push(part as Buffer);
          resolve({ status: answer.statusCode ?? 502, headers: answer.headers, body: Buffer.concat(parts) });
        });
        out.on("error", () => resolve(null));
        out.end(Buffer.concat(chunks));
      });
      if (!upstream || (mode.kind === "lose-response" && mode.times > 0)) {
        if (upstream && mode.kind === "lose-response") mode.times -= 1;
        req.socket.destroy();
        return;
      }
      const { connection: _, "keep-alive": __, "transfer-encoding": ___, ...answerHeaders } = upstream.headers;
      res.writeHead(upstream.status, answerHeaders);
      res.end(upstream.body);
    });
    // the engine's requests may be many simulated minutes apart and a few real seconds: an idle
    // connection stays open longer than the test takes
    proxy.keepAliveTimeout = 120_000;
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    t.proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy?.close(resolve));
    await t.app?.close();
  });
  beforeEach(async () => {
    t.mode = { kind: "pass" };
    ({ apiKey: t.apiKey, projectId: t.projectId } = await createProject(t.app.sql, "SDK Game"));
  });
  afterEach(() => {
    // no SDK thread may have died with an error, whatever the test checked
    expect(t.rbx?.threadErrors ?? []).toEqual([]);
    t.rbx = undefined as unknown as RobloxServer;
  });
  return t;
}
