import http from "node:http";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertDsnKey, projectDsnId } from "../../db/sentry.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { envelopeOf } from "../support/hostile-bodies.js";

/**
 * How request bodies are admitted: one content-coding, judged on the header before the body is
 * read; small bodies where anyone may post; an envelope keyed only inside its body held to one
 * event's bytes; page forms refused when Remix could not read them within bounds; and the
 * process's body budget (BODY_MEMORY_BYTES), given back whatever happens to the request.
 */

let app: TestApp;
let apiKey: string;
let dsnId: string;
let publicKey: string;

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "1" });
  const p = await createProject(app.sql);
  apiKey = p.apiKey;
  publicKey = (await insertDsnKey(app.sql, p.projectId, "0123456789abcdef0123456789abcdef", "limits", null)).public_key;
  dsnId = (await projectDsnId(app.sql, p.projectId))!;
});
afterAll(() => app?.close());

type Raw = { status: number; body: any; headers: http.IncomingHttpHeaders };

/**
 * Sends the headers of a request that declares `declared` body bytes, then `sent` of them, and
 * waits for an answer without sending the rest; null when none comes within `waitMs`.
 */
function partial(base: string, method: string, pathname: string, headers: Record<string, string>, declared: number, sent = 0, waitMs = 3000) {
  const req = http.request(`${base}${pathname}`, { method, headers: { ...headers, "content-length": String(declared) } });
  req.on("error", () => {});
  if (sent > 0) req.write(Buffer.alloc(sent, 0x20));
  else req.flushHeaders();
  const answer = new Promise<Raw | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), waitMs);
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        clearTimeout(timer);
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, body, headers: res.headers });
      });
    });
  });
  return { answer, abort: () => req.destroy() };
}

const errorBody = (code: string) => ({ error: code, message: expect.any(String) });

/** The budget is back to nothing held once every request has ended (a released hold is given back at once). */
async function budgetIdle(t: TestApp) {
  for (let i = 0; i < 100 && t.services.bodies.inUse !== 0; i++) await new Promise((r) => setTimeout(r, 50));
  expect(t.services.bodies.inUse).toBe(0);
}

describe("content-codings", () => {
  it("answers 415 to stacked or unknown codings on the header alone, before the body is sent", async () => {
    const json = { "content-type": "application/json" };
    const cases: [string, string, Record<string, string>][] = [
      ["/api/ingest", "gzip, gzip", { ...json, "x-api-key": apiKey }],
      ["/api/ingest", "gzip,br", { ...json, "x-api-key": apiKey }],
      ["/api/economy/ingest", "deflate, gzip", { ...json, "x-api-key": apiKey }],
      ["/api/auth/login", "gzip, gzip", json],
      ["/api/auth/login", "zstd", json],
      [`/api/${dsnId}/envelope/`, "gzip, gzip", { "content-type": "application/x-sentry-envelope" }],
      [`/api/${dsnId}/store/?sentry_key=${publicKey}`, "x-gzip, gzip", json],
      ["/login", "gzip", { "content-type": "application/x-www-form-urlencoded" }],
      ["/setup", "gzip, gzip", { "content-type": "application/x-www-form-urlencoded" }],
    ];
    for (const [pathname, coding, headers] of cases) {
      const { answer, abort } = partial(app.url, "POST", pathname, { ...headers, "content-encoding": coding }, 100_000);
      const r = await answer;
      abort();
      expect({ pathname, coding, status: r?.status, body: r?.body }).toEqual({ pathname, coding, status: 415, body: errorBody("unsupported_media_type") });
    }
    await budgetIdle(app);
  });

  it("still decodes one coding, and takes identity as none", async () => {
    const batch = (m: string) => JSON.stringify({ errors: [{ message: m }] });
    for (const [coding, body] of [
      ["gzip", zlib.gzipSync(batch("one gzip"))],
      ["identity, gzip", zlib.gzipSync(batch("identity and gzip"))],
      ["br", zlib.brotliCompressSync(batch("one br"))],
      ["deflate", zlib.deflateRawSync(batch("raw deflate"))],
      ["identity", Buffer.from(batch("identity"))],
    ] as const) {
      const r = await app.request("/api/ingest", { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey, "content-encoding": coding }, body: new Uint8Array(body) });
      expect({ coding, status: r.status }).toEqual({ coding, status: 200 });
    }
    await budgetIdle(app);
  });
});

describe("bodies anyone may send", () => {
  it("holds sign-in and share-status bodies to what they carry", async () => {
    const login413 = await call(app, "POST", "/api/auth/login", { body: { email: "a@example.test", password: "x".repeat(20_000) } });
    expect(login413.status).toBe(413);
    expect(login413.body).toEqual(errorBody("payload_too_large"));

    const owner = await makeUser(app.sql);
    const { projectId, apiKey: key } = await makeProject(app.sql, owner.id);
    const cookie = await login(app, owner.email);
    await ingest(app, key, { message: "shared" });
    const [{ id: groupId }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role: "editor" } });
    expect(link.status).toBe(201);
    const big = await call(app, "POST", `/api/share/${link.body.token}`, { body: { status: "resolved", pad: "x".repeat(2000) } });
    expect(big.status).toBe(413);
    const ok = await call(app, "POST", `/api/share/${link.body.token}`, { body: { status: "resolved" } });
    expect(ok.status).toBe(200);

    // the same form from a hydrated page posts to its `.data` path, under the same limit
    for (const path of ["/login", "/login.data"]) {
      const form = await app.request(path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ email: "a@example.test", password: "x".repeat(40_000) }).toString(),
        redirect: "manual",
      });
      expect(form.status, path).toBe(413);
      expect(await form.json()).toEqual(errorBody("payload_too_large"));
    }
    await budgetIdle(app);
  });

  it("refuses a page form sent in chunks (411) and answers an ordinary one as before", async () => {
    const chunked = await app.request("/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("email=a%40example.test&password=wrong"));
          c.close();
        },
      }),
      duplex: "half",
      redirect: "manual",
    } as RequestInit);
    expect(chunked.status).toBe(411);
    expect(await chunked.json()).toEqual(errorBody("length_required"));

    const wrong = await app.request("/login", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "nobody@example.test", password: "wrong password" }).toString(),
      redirect: "manual",
    });
    expect(wrong.status).toBeLessThan(500);
    expect([411, 413, 415, 503]).not.toContain(wrong.status);
    expect(await wrong.text()).toContain("wrong");
    await budgetIdle(app);
  });
});

describe("Sentry envelopes", () => {
  const withAttachment = (dsn?: string) => {
    const base = envelopeOf("with an attachment", dsn);
    const attachment = Buffer.alloc(2 * 1024 * 1024, 0x61);
    return Buffer.concat([base, Buffer.from(`${JSON.stringify({ type: "attachment", length: attachment.length })}\n`), attachment, Buffer.from("\n")]);
  };

  it("holds an envelope keyed only by its dsn to one event's bytes, decoded or not", async () => {
    const dsn = `http://${publicKey}@127.0.0.1/${dsnId}`;
    const headers = { "content-type": "application/x-sentry-envelope" };
    const plain = await app.request(`/api/${dsnId}/envelope/`, { method: "POST", headers, body: new Uint8Array(withAttachment(dsn)) });
    expect(plain.status).toBe(413);
    const gz = await app.request(`/api/${dsnId}/envelope/`, { method: "POST", headers: { ...headers, "content-encoding": "gzip" }, body: new Uint8Array(zlib.gzipSync(withAttachment(dsn))) });
    expect(gz.status).toBe(413);
    expect((await gz.json()).message).toMatch(/decompressed/);
    // the same envelope with the key where it can be checked first gets the envelope limit
    const keyed = await app.request(`/api/${dsnId}/envelope/?sentry_key=${publicKey}`, { method: "POST", headers, body: new Uint8Array(withAttachment()) });
    expect(keyed.status).toBe(200);
    // and a small one keyed by its dsn is taken
    const small = await app.request(`/api/${dsnId}/envelope/`, { method: "POST", headers, body: new Uint8Array(envelopeOf("dsn only", dsn)) });
    expect(small.status).toBe(200);
    await budgetIdle(app);
  });

  it("takes the key from Authorization: Sentry … before the body", async () => {
    const r = await app.request(`/api/${dsnId}/envelope/`, {
      method: "POST",
      headers: { "content-type": "application/x-sentry-envelope", authorization: `Sentry sentry_version=7, sentry_key=${publicKey}` },
      body: new Uint8Array(withAttachment()),
    });
    expect(r.status).toBe(200);
    // a wrong key there is refused before a byte of the body is read
    const { answer, abort } = partial(app.url, "POST", `/api/${dsnId}/envelope/`, { "content-type": "application/x-sentry-envelope", authorization: "Sentry sentry_key=ffffffffffffffffffffffffffffffff" }, 1_000_000);
    expect((await answer)?.status).toBe(401);
    abort();
    await budgetIdle(app);
  });
});

describe("the process's body budget", () => {
  let small: TestApp;
  let key: string;
  const LIMIT = 256 * 1024;
  beforeAll(async () => {
    small = await startTestApp({
      BODY_MEMORY_BYTES: String(1024 * 1024),
      MAX_BODY_BYTES: String(LIMIT),
      ECONOMY_MAX_BODY_BYTES: String(LIMIT),
      SENTRY_MAX_EVENT_BYTES: String(LIMIT),
      SENTRY_MAX_ENVELOPE_BYTES: String(LIMIT),
    });
    key = (await createProject(small.sql)).apiKey;
  });
  afterAll(() => small?.close());

  it("answers 503 with Retry-After, unread, past the budget, and gives back what aborted requests held", async () => {
    const headers = { "content-type": "application/json", "x-api-key": key };
    // four clients send most of a body and stall: what they sent is held
    const slow = Array.from({ length: 4 }, () => partial(small.url, "POST", "/api/ingest", headers, 250_000, 240_000, 60_000));
    for (let i = 0; i < 200 && small.services.bodies.inUse < 4 * 240_000; i++) await new Promise((r) => setTimeout(r, 25));
    expect(small.services.bodies.inUse).toBe(4 * 240_000);

    const refused = partial(small.url, "POST", "/api/ingest", headers, 200_000);
    const r = await refused.answer;
    refused.abort();
    expect(r?.status).toBe(503);
    expect(r?.body).toEqual(errorBody("unavailable"));
    expect(Number(r?.headers["retry-after"])).toBeGreaterThan(0);
    // a page form is held against the same budget
    const form = partial(small.url, "POST", "/projects/00000000-0000-0000-0000-000000000000/settings", { "content-type": "application/x-www-form-urlencoded" }, 200_000);
    expect((await form.answer)?.status).toBe(503);
    form.abort();

    // the stalled clients go away: their bytes are given back
    for (const s of slow) s.abort();
    await budgetIdle(small);
    const big = JSON.stringify({ message: "x".repeat(200_000) });
    const ok = await small.request("/api/ingest", { method: "POST", headers, body: big });
    expect(ok.status).toBe(200);
    await budgetIdle(small);
  });

  it("refuses a start with a budget that could not hold a body at the largest limit", async () => {
    await expect(startTestApp({ BODY_MEMORY_BYTES: String(2 * 1024 * 1024) })).rejects.toThrow(/BODY_MEMORY_BYTES/);
  });
});
