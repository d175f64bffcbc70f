import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendWebhook } from "../../app/alerts/send.server.js";

/** The sender against a local server: no redirects, a fixed timeout, bounded retries, private destinations refused. */
let server: Server;
let base = "";
const hits: Record<string, number> = {};

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? "/";
    hits[path] = (hits[path] ?? 0) + 1;
    req.resume();
    if (path === "/redirect") return void res.writeHead(302, { location: "http://169.254.169.254/" }).end();
    if (path === "/slow") return void setTimeout(() => res.writeHead(204).end(), 2000);
    if (path === "/flaky") return void res.writeHead(hits[path] === 1 ? 503 : 204).end();
    if (path === "/limited") return void res.writeHead(429, { "retry-after": "60" }).end("slow down");
    res.writeHead(204).end();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const send = (path: string, opts: Partial<Parameters<typeof sendWebhook>[1]> = {}) =>
  sendWebhook({ url: base + path, body: "{}" }, { allowPrivate: true, ...opts });

describe("sendWebhook", () => {
  it("does not follow redirects", async () => {
    const r = await send("/redirect");
    expect(r).toMatchObject({ ok: false, status: 302, attempts: 1 });
    expect(r.error).toMatch(/redirects are not followed/);
  });

  it("gives up on a destination that does not answer in time", async () => {
    const r = await send("/slow", { timeoutMs: 300 });
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/no answer within/);
  });

  it("retries a 5xx and succeeds", async () => {
    expect(await send("/flaky")).toMatchObject({ ok: true, status: 204, attempts: 2 });
  });

  it("does not wait out a Retry-After longer than its bound", async () => {
    const t = Date.now();
    const r = await send("/limited", { maxRetryWaitMs: 1000 });
    expect(r).toMatchObject({ ok: false, status: 429, attempts: 1 });
    expect(Date.now() - t).toBeLessThan(1000);
  });

  it("refuses loopback and private destinations unless allowed, before connecting", async () => {
    const before = hits["/ok"] ?? 0;
    const r = await send("/ok", { allowPrivate: false });
    expect(r).toMatchObject({ ok: false, status: null, attempts: 0 });
    expect(r.error).toMatch(/private or loopback/);
    expect(hits["/ok"] ?? 0).toBe(before);
    const viaName = await sendWebhook({ url: base.replace("127.0.0.1", "localhost") + "/ok", body: "{}" }, { allowPrivate: false });
    expect(viaName.error).toMatch(/private or loopback/);
    expect((await sendWebhook({ url: "ftp://example.com/x", body: "{}" }, { allowPrivate: false })).ok).toBe(false);
  });
});
