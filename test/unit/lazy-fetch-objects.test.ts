import type { AddressInfo } from "node:net";
import { request as httpRequest } from "node:http";
import express from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeFetch } from "../../server/api-dispatch.js";
import * as http from "../../app/http.server.js";
import { ApiError, JSON_HEADERS, JSON_TEXT, NODE_TARGET, json, readBody, readJson } from "../../app/http.server.js";
import { queryOf } from "../../app/errors/params.server.js";
import { BodyBudget } from "../../app/body-budget.server.js";

const { toRequest } = nodeFetch(http);

/**
 * The API dispatch hands routes a Request whose body stream and signal are made on first use, and
 * json() answers with a Response whose body stream is made on first use. Whatever a route, Remix or
 * a test can observe must be what the plain Fetch objects give.
 */

describe("json() Response", () => {
  const plain = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" } });

  it("has the status, headers and body of a plain Response", async () => {
    const body = { success: true, count: 2, text: "é ✓" };
    const lazy = json(body, { status: 201, headers: { "Retry-After": "5" } });
    const ref = plain(body, 201);
    ref.headers.set("retry-after", "5");
    expect(lazy.status).toBe(201);
    expect([...lazy.headers]).toEqual([...ref.headers]);
    expect(lazy.bodyUsed).toBe(false);
    expect(await lazy.text()).toBe(await ref.text());
    expect(lazy.bodyUsed).toBe(true);
    await expect(lazy.text()).rejects.toThrow(TypeError);
  });

  it("reads as JSON, bytes, a blob and a stream", async () => {
    expect(await json({ a: 1 }).json()).toEqual({ a: 1 });
    expect(Buffer.from(await json([1, 2]).arrayBuffer()).toString()).toBe("[1,2]");
    expect(await (await json("x").blob()).text()).toBe('"x"');
    const reader = json({ b: 2 }).body!.getReader();
    const chunks: Uint8Array[] = [];
    for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
    expect(Buffer.concat(chunks).toString()).toBe('{"b":2}');
  });

  it("offers its text to the dispatch until its stream is handed out", () => {
    const r = json({ a: 1 });
    expect((r as unknown as Record<symbol, unknown>)[JSON_TEXT]).toBe('{"a":1}');
    void r.body;
    expect((r as unknown as Record<symbol, unknown>)[JSON_TEXT]).toBeUndefined();
  });

  it("clones with its body, and refuses to clone a used body", async () => {
    const r = json({ a: 1 }, 404);
    const c = r.clone();
    expect(c.status).toBe(404);
    expect(c.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(await c.json()).toEqual({ a: 1 });
    expect(await r.json()).toEqual({ a: 1 });
    expect(() => r.clone()).toThrow(TypeError);
    expect(r).toBeInstanceOf(Response);
  });
});

describe("json() Response, as the dispatch writes it", () => {
  const pairs = (r: Response) => (r as unknown as Record<symbol, [string, string][] | undefined>)[JSON_HEADERS];

  it("hands over the header pairs its Headers would hold, until its Headers are asked for", () => {
    const r = json({ a: 1 }, { status: 429, headers: { "Retry-After": "5", "Content-Type": "text/plain" } });
    const given = pairs(r)!;
    expect(given).toEqual([
      ["content-type", "application/json; charset=utf-8"],
      ["cache-control", "no-store"],
      ["retry-after", "5"],
    ]);
    expect([...given].sort()).toEqual([...r.headers]);
    expect(pairs(r)).toBeUndefined();
    expect((r as unknown as Record<symbol, unknown>)[JSON_TEXT]).toBe('{"a":1}');
  });

  it("answers status, ok and the rest as a constructed Response does", () => {
    const r = json({ a: 1 }, 404);
    const ref = new Response("{}", { status: 404 });
    expect([r.status, r.statusText, r.ok, r.type, r.url, r.redirected]).toEqual([ref.status, ref.statusText, ref.ok, ref.type, ref.url, ref.redirected]);
    expect(Object.prototype.toString.call(r)).toBe("[object Response]");
  });

  it("is a plain Response for what only the constructor takes, and refuses what it refuses", async () => {
    const named = json({ a: 1 }, { status: 200, statusText: "Fine", headers: new Headers({ "x-a": "1" }) });
    expect([named.statusText, named.headers.get("x-a"), named.headers.get("content-type")]).toEqual(["Fine", "1", "application/json; charset=utf-8"]);
    expect(await named.json()).toEqual({ a: 1 });
    expect(() => json({}, 99)).toThrow(RangeError);
  });
});

describe("the dispatch's Request", () => {
  type Probe = (request: Request) => Promise<unknown>;
  let probe: Probe;
  let url: string;
  let server: ReturnType<express.Express["listen"]>;

  beforeAll(async () => {
    const app = express();
    app.use(async (req, res) => {
      try {
        res.json({ ok: await probe(toRequest(req, res)) });
      } catch (err) {
        res.status(ApiError.is(err) ? err.status : 500).json({ error: err instanceof Error ? err.message : String(err) });
      }
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/api/x?q=1`, { method: "POST", body, headers: { "content-type": "application/json", ...headers } }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as Record<string, unknown>,
    }));

  it("has the URL, method and headers the client sent", async () => {
    probe = async (r) => [r.url.replace(/:\d+\//, ":PORT/"), r.method, r.headers.get("x-custom"), r.bodyUsed];
    expect((await post("{}", { "x-custom": "v" })).body.ok).toEqual(["http://127.0.0.1:PORT/api/x?q=1", "POST", "v", false]);
  });

  it("is a Request, and answers every other member as the constructed Request does", async () => {
    probe = async (r) => {
      const ref = new Request(r.url, { method: r.method, headers: r.headers });
      return [
        r instanceof Request,
        Object.prototype.toString.call(r),
        ...(["mode", "credentials", "cache", "redirect", "integrity", "keepalive", "destination", "referrer", "referrerPolicy", "duplex"] as const).map(
          (k) => (r as unknown as Record<string, unknown>)[k] === (ref as unknown as Record<string, unknown>)[k],
        ),
      ];
    };
    expect((await post("{}")).body.ok).toEqual([true, "[object Request]", ...Array(10).fill(true)]);
  });

  it("has the headers a Headers filled from the Node request has: names any case, repeats joined, empty ones absent", async () => {
    probe = async (r) => {
      const early = [r.headers.get("X-Custom"), r.headers.has("x-empty"), r.headers.get("x-empty"), r.headers.get("cookie"), r.headers.has("nope")];
      const invalid = (() => {
        try {
          r.headers.get("bad name");
          return "accepted";
        } catch (e) {
          return e instanceof TypeError ? "TypeError" : String(e);
        }
      })();
      const all = [...r.headers].filter(([k]) => k.startsWith("x-") || k === "content-type");
      const list = r.headers.get("x-list");
      r.headers.set("x-added", "1");
      r.headers.delete("x-custom");
      return [early, list, invalid, all, r.headers.get("x-added"), r.headers.get("x-custom"), r.clone().headers.get("x-added")];
    };
    const res = await new Promise<string>((resolve, reject) => {
      // repeated and empty headers, which fetch() would not send as such (raw headers: Host and length by hand)
      const req = httpRequest(
        `${url}/api/x`,
        { method: "POST", headers: ["X-Custom", "v", "x-empty", "", "content-type", "application/json", "cookie", "", "x-list", "a", "x-list", "b", "content-length", "2", "host", "localhost"] as unknown as Record<string, string> },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks).toString()));
        },
      );
      req.on("error", reject);
      req.end("{}");
    });
    expect(JSON.parse(res), res).toHaveProperty("ok");
    expect(JSON.parse(res).ok).toEqual([
      ["v", false, null, null, false],
      "a, b",
      "TypeError",
      [["content-type", "application/json"], ["x-custom", "v"], ["x-list", "a, b"]],
      "1",
      null,
      "1",
    ]);
  });

  it("has a query, read off its request target, that reads as the query of its URL", async () => {
    // the target as sent (Node's client sends these bytes unescaped); queryOf reads it without the URL
    const get = (target: string) =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest(`${url}${target}`, { method: "GET" }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks).toString()));
        });
        req.on("error", reject);
        req.end();
      });
    probe = async (r) => {
      const target = (r as unknown as Record<symbol, () => string | undefined>)[NODE_TARGET]();
      const fromTarget = [...queryOf(r)];
      return [target !== undefined, fromTarget, [...new URL(r.url).searchParams]];
    };
    for (const target of [
      "/api/1/envelope/?sentry_key=abc&sentry_version=7",
      "/api/x?a=%22q%22&b=\"q\"&c='<>'&d=%27%3C%3E%27",
      "/api/x?a=1+2&b=%2B&c=%zz&d=%E2%9C%93&e",
      "/api/x?a=1#b=2",
      "/api/x#a?b=2",
      "/api/x?",
      "/api/x?&&a=&=b",
      "/api/x?a=%00",
    ]) {
      const body = JSON.parse(await get(target)) as { ok?: [boolean, [string, string][], [string, string][]]; error?: string };
      expect(body.ok, target).toBeDefined();
      const [lazy, fromTarget, fromUrl] = body.ok!;
      expect(lazy, target).toBe(true);
      expect(fromTarget, target).toEqual(fromUrl);
    }
  });

  it("gives its body to readJson straight from the socket, then counts it as used", async () => {
    probe = async (r) => {
      const body = await readJson(r, 1000, new BodyBudget(1024 * 1024));
      const used = r.bodyUsed;
      const again = await r.text().then(() => "read twice", (e: unknown) => (e instanceof TypeError ? "TypeError" : String(e)));
      return [body, used, again];
    };
    expect((await post('{"a":[1,2,3]}')).body.ok).toEqual([{ a: [1, 2, 3] }, true, "TypeError"]);
  });

  it("takes a body the parser already holds whole at once, within its limit", async () => {
    const settled = () => new Promise((res) => setTimeout(res, 50));
    probe = async (r) => {
      await settled();
      return [await readJson(r, 1000, new BodyBudget(1024 * 1024)), r.bodyUsed];
    };
    expect((await post('{"c":[1,2]}')).body.ok).toEqual([{ c: [1, 2] }, true]);
    probe = async (r) => {
      await settled();
      return readBody(r, 4);
    };
    expect((await post('{"c":[1,2]}')).status).toBe(413);
    // held against the budget like bytes read as they come
    probe = async (r) => {
      await settled();
      return readBody(r, 1000, new BodyBudget(4).reserve(0));
    };
    expect((await post('{"c":[1,2]}')).status).toBe(503);
  });

  it("reads its body through the Fetch readers when a route uses them", async () => {
    probe = async (r) => [await r.clone().text(), await r.json(), r.bodyUsed, await readBody(r, 1000).then(() => "read twice", () => "refused")];
    expect((await post('{"b":"✓"}')).body.ok).toEqual(['{"b":"✓"}', { b: "✓" }, true, "refused"]);
  });

  it("answers 413 once a body without a declared length passes the limit", async () => {
    probe = (r) => readBody(r, 10);
    const status = await new Promise<number>((resolve, reject) => {
      // chunked: no Content-Length to refuse up front
      const req = httpRequest(`${url}/api/x`, { method: "POST", headers: { "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on("error", reject);
      req.write("[1,2,3,4,5,");
      req.write("6,7,8,9]");
      req.end();
    });
    expect(status).toBe(413);
  });

  it("has a signal that aborts when the client goes away before the answer", async () => {
    let seen: (v: boolean) => void;
    const aborted = new Promise<boolean>((r) => (seen = r));
    probe = async (r) => {
      const signal = r.signal;
      await new Promise((res) => setTimeout(res, 300));
      seen(signal.aborted);
      return null;
    };
    const controller = new AbortController();
    const req = fetch(`${url}/api/x`, { signal: controller.signal }).catch(() => null);
    setTimeout(() => controller.abort(), 50);
    await req;
    expect(await aborted).toBe(true);
  });

  it("has a signal that is already aborted when first asked for after the client left", async () => {
    let seen: (v: boolean) => void;
    const aborted = new Promise<boolean>((r) => (seen = r));
    probe = async (r) => {
      await new Promise((res) => setTimeout(res, 300));
      seen(r.signal.aborted);
      return null;
    };
    const controller = new AbortController();
    const req = fetch(`${url}/api/x`, { signal: controller.signal }).catch(() => null);
    setTimeout(() => controller.abort(), 50);
    await req;
    expect(await aborted).toBe(true);
  });

  it("has a signal that stays quiet for an answered request", async () => {
    let signal: AbortSignal | undefined;
    probe = async (r) => {
      signal = r.signal;
      return 1;
    };
    expect((await post("{}")).body.ok).toBe(1);
    await new Promise((r) => setTimeout(r, 50));
    expect(signal?.aborted).toBe(false);
  });
});
