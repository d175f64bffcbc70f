import { createServer, request, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import type { ServerBuild } from "@remix-run/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { apiFront } from "../../server/api-dispatch.js";
import { fixedSecurityHeaders } from "../../server/web.js";
import * as http from "../../app/http.server.js";
import { configureLogging, loggingSettings, requestContextOn } from "../../log/logger.js";

/**
 * The API front door (server/api-dispatch.ts, `apiFront`) on a build of three API routes: the lines
 * it logs for a request carry the request's id without the logging context, which it never enters,
 * and whatever it does not serve is left to the next handler untouched.
 */

const route = (id: string, path: string, module: Record<string, unknown>) => ({ id, path, parentId: "root", module });
const build = {
  routes: {
    root: { id: "root", path: "", module: { default: () => null } },
    "routes/api.fails": route("routes/api.fails", "api/fails", {
      // an unexpected error answered by the one error body (handle → errorResponse)
      loader: () => http.handle(async () => {
        await new Promise((r) => setTimeout(r, 5));
        throw new Error("the route broke");
      }),
    }),
    "routes/api.throws": route("routes/api.throws", "api/throws", {
      loader: async () => {
        throw new Error("thrown past the route");
      },
    }),
    "routes/api.text": route("routes/api.text", "api/text", {
      loader: () => new Response("plain", { headers: { "Content-Type": "text/plain", "X-Twice": "1" } }),
    }),
    "routes/api.ok": route("routes/api.ok", "api/ok", {
      loader: () => http.json({ ok: true }),
      action: () => http.handle(async () => http.json({ posted: true }, { status: 201, headers: { "Retry-After": "5" } })),
    }),
  },
} as unknown as ServerBuild;

const lines: Record<string, unknown>[] = [];
const before = loggingSettings();
let server: Server;
let base: string;
let passedOn: string[] = [];

beforeAll(async () => {
  configureLogging({ sink: { write: (line: string) => void lines.push(JSON.parse(line)) }, format: "json", level: "info" });
  const front = apiFront({
    build,
    face: http,
    loadContext: (clientAddress) => ({ clientAddress }) as never,
    trustProxy: 0,
    trust: () => false,
    fixedHeaders: fixedSecurityHeaders(),
    logLevel: "info",
    unread: () => {},
  })!;
  server = createServer((req, res) => {
    if (front(req, res)) return;
    passedOn.push(`${req.method} ${req.url}`);
    res.statusCode = 404;
    res.end("next");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  configureLogging(before);
  await new Promise((r) => server.close(r));
});
afterEach(() => {
  lines.length = 0;
  passedOn = [];
});

type Answer = { status: number; headers: Record<string, string | string[] | undefined>; text: string };

/**
 * One request through node:http (the test stand-in is no service: its answers stay out of the
 * suite's OpenAPI contract record, which fetch feeds).
 */
function send(method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The lines logged with `reqId`, once its request line is there. */
async function linesOf(reqId: string) {
  for (let i = 0; i < 100 && !lines.some((l) => l.reqId === reqId && l.msg === "request"); i++) await new Promise((r) => setTimeout(r, 10));
  // a line logged a turn later (errorResponse's own, if nothing claimed it) would show here
  await new Promise((r) => setTimeout(r, 20));
  return lines.filter((l) => l.msg !== "request" || l.reqId === reqId);
}

describe("the API front door", () => {
  it("logs an unexpected error once, with the request's id, and answers the error body", async () => {
    const res = await send("GET", "/api/fails");
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ error: "internal", message: "Something went wrong on our side; the request was not completed." });
    const reqId = res.headers["x-request-id"] as string;
    const logged = await linesOf(reqId);
    const errors = logged.filter((l) => l.msg === "[api] unexpected error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: "error", reqId, err: { message: "the route broke" } });
    expect(logged.find((l) => l.msg === "request")).toMatchObject({ level: "warn", reqId, route: "routes/api.fails", status: 500, method: "GET" });
    expect(requestContextOn()).toBe(false);
  });

  it("logs a route that throws with the request's id, and answers Remix's plain 500", async () => {
    const res = await send("GET", "/api/throws");
    expect(res.status).toBe(500);
    expect(res.text).toBe("Unexpected Server Error");
    const reqId = res.headers["x-request-id"] as string;
    const logged = await linesOf(reqId);
    expect(logged.find((l) => l.msg === "[api] route routes/api.throws failed")).toMatchObject({ level: "error", reqId, err: { message: "thrown past the route" } });
  });

  it("answers with the security headers, the request id, the route's headers and the length, in one write", async () => {
    const res = await send("POST", "/api/ok", "{}");
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text)).toEqual({ posted: true });
    const h = res.headers;
    expect(h).toMatchObject({
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "retry-after": "5",
      "referrer-policy": "same-origin",
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      "content-length": String('{"posted":true}'.length),
    });
    expect(h["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(h["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(h["transfer-encoding"]).toBeUndefined();
    // HEAD: the same headers, no body
    const head = await send("HEAD", "/api/ok");
    expect(head.status).toBe(200);
    expect(head.headers["x-frame-options"]).toBe("DENY");
    expect(head.text).toBe("");
  });

  it("answers 400 with the error body, not 500, to a Host header that makes no address", async () => {
    const { port } = server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect({ port, host: "127.0.0.1" });
      let got = "";
      socket.on("data", (d) => (got += d.toString("latin1")));
      socket.on("end", () => resolve(got));
      socket.on("error", reject);
      socket.end("GET /api/ok HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n");
    });
    expect(text).toMatch(/^HTTP\/1\.1 400 /);
    expect(text).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    expect(text).toMatch(/\r\nx-frame-options: DENY\r\n/i);
    expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))).toEqual({ error: "invalid_payload", message: "The request's Host header is not a valid host." });
  });

  it("writes another Response's Content-Type as Express did, with its charset", async () => {
    const res = await send("GET", "/api/text");
    expect(res.text).toBe("plain");
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.headers["x-frame-options"]).toBe("DENY");
    expect(res.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("leaves everything it does not serve to the next handler", async () => {
    for (const [method, path] of [
      ["GET", "/"],
      ["GET", "/projects"],
      ["GET", "/api/nowhere"],
      ["OPTIONS", "/api/ok"],
      ["GET", "/api/ok.data"],
      ["GET", "/api/ok?_data=routes%2Fapi.ok"],
      ["DELETE", "/api/throws"],
    ]) {
      const res = await send(method, path);
      expect(`${method} ${path} ${res.status} ${res.headers["x-request-id"]}`).toBe(`${method} ${path} 404 undefined`);
    }
    expect(passedOn).toHaveLength(7);
  });
});
