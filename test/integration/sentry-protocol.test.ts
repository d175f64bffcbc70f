import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { pruneEventIds } from "../../db/sentry.js";
import { connect, parseJsonText, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { RecordingProxy } from "../support/recording-proxy.js";
import { countersApplied } from "../support/counters.js";

/**
 * The Sentry ingest protocol over real HTTP on a real PostgreSQL: the legacy raven client, the
 * JSON the Roblox Sentry ports post to /store/, and hand-made envelopes for every edge.
 */

const require = createRequire(import.meta.url);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8"));

let app: TestApp;
let sql: Sql;
let owner: { id: string; email: string };
let cookie: string;

beforeAll(async () => {
  app = await startTestApp();
  sql = connect(app.databaseUrl);
  owner = await makeUser(app.sql);
  cookie = await login(app, owner.email);
});
afterAll(async () => {
  await sql?.end();
  await app?.close();
});

type Project = { projectId: string; apiKey: string; dsnId: string; publicKey: string; dsn: string };

async function project(): Promise<Project> {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id);
  const r = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
  expect(r.status).toBe(201);
  const dsnId = String(r.body.dsn).split("/").pop()!;
  return { projectId, apiKey, dsnId, publicKey: r.body.public_key, dsn: r.body.dsn };
}

async function post(pathname: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const res = await app.request(pathname, { method: "POST", headers, body: typeof body === "string" ? body : new Uint8Array(body) });
  return { status: res.status, body: parseJsonText(await res.text()), headers: res.headers };
}

type Item = { header: Record<string, unknown>; payload: Buffer | string; withLength?: boolean };

/** An envelope: header line, then each item's header line and payload (with `length` unless told not to). */
function envelope(header: Record<string, unknown>, items: Item[]): Buffer {
  const parts: Buffer[] = [Buffer.from(JSON.stringify(header) + "\n")];
  for (const it of items) {
    const payload = Buffer.isBuffer(it.payload) ? it.payload : Buffer.from(it.payload);
    const h = it.withLength === false ? it.header : { ...it.header, length: payload.length };
    parts.push(Buffer.from(JSON.stringify(h) + "\n"), payload, Buffer.from("\n"));
  }
  return Buffer.concat(parts);
}

const eventId = () => randomBytes(16).toString("hex");
const eventItem = (event: Record<string, unknown>, withLength = true): Item => ({ header: { type: "event" }, payload: JSON.stringify(event), withLength });
const toEnvelope = (p: Project, body: Buffer, headers: Record<string, string> = {}) =>
  post(`/api/${p.dsnId}/envelope/?sentry_key=${p.publicKey}`, body, { "content-type": "application/x-sentry-envelope", ...headers });

const counts = async (projectId: string) => {
  const [r] = await sql<{ events: number; groups: number; occurrences: number }[]>`
    select (select count(*) from events where project_id = ${projectId})::int as events,
      (select count(*) from error_groups where project_id = ${projectId})::int as groups,
      (select coalesce(sum(count), 0) from error_groups where project_id = ${projectId})::int as occurrences`;
  return r;
};
const eventsOf = (projectId: string) =>
  sql<any[]>`select e.*, g.culprit, g.count as group_count from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
    where e.project_id = ${projectId} order by e.id`;

describe("Roblox Sentry ports posting to /store/", () => {
  it("stores the devSparkle/sentry-roblox event shape (exception list, frames outermost first)", async () => {
    const p = await project();
    const r = await post(`/api/${p.dsnId}/store/`, JSON.stringify(fixture("sentry-roblox-devsparkle.json")), {
      "content-type": "application/json",
      "x-sentry-auth": `Sentry sentry_key=${p.publicKey},sentry_version=7,sentry_client=sentry-roblox/0.4.0`,
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: "6a1f0c3e9b2d4e7f8a1b2c3d4e5f6a7b" });
    const [e] = await eventsOf(p.projectId);
    expect(e.message).toBe("Error: attempt to index nil with 'Health'");
    expect(e.stack_trace).toBe("ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40");
    expect(e.culprit).toBe("ServerScriptService.Combat");
    expect(e.level).toBe("error");
    expect(String(e.user_id)).toBe("261");
    expect(e.player_name).toBe("Builderman");
    expect(e.job_id).toBe("b6c1e7d0-5b7e-4d7b-9d55-2f3f6b0d9a11");
    expect(e.game_version).toBe("place-v214");
    expect(e.tags).toEqual(["PlaceId:1818", "PlaceVersion:214", "Realm:Server"]);
    expect(new Date(e.timestamp).toISOString()).toBe(new Date(1795430000250).toISOString());
    // the bare-array form, in the event's breadcrumbs (not its context)
    expect(e.breadcrumbs).toEqual([
      { timestamp: "2026-11-23T10:33:10.000Z", level: "info", category: "log", message: "Round 12 started" },
      { timestamp: "2026-11-23T10:33:19.000Z", level: "warning", category: "log", message: "Player Builderman has no Humanoid" },
    ]);
    expect(e.context?.breadcrumbs).toBeUndefined();
  });

  it("stores the nomer888/sentry-roblox event shape (string line numbers, `function name`, zone-less time)", async () => {
    const p = await project();
    const r = await post(`/api/${p.dsnId}/store/`, JSON.stringify(fixture("sentry-roblox-nomer888.json")), {
      "content-type": "application/json",
      "x-sentry-auth": `Sentry sentry_version=7,sentry_timestamp=1795430000,sentry_client=sentry-roblox/0.1.0,sentry_key=${p.publicKey}`,
    });
    expect(r.status).toBe(200);
    const [e] = await eventsOf(p.projectId);
    expect(e.message).toBe("Error: ReplicatedStorage.Shop:58: Not enough coins");
    expect(e.stack_trace).toBe("ReplicatedStorage.Shop:58 function buy\nReplicatedStorage.Shop:12");
    expect(e.culprit).toBe("ReplicatedStorage.Shop");
    expect(e.level).toBe("warn");
    expect(String(e.user_id)).toBe("1337");
    expect(e.player_name).toBe("Shedletsky");
    expect(new Date(e.timestamp).toISOString()).toBe("2026-11-23T10:00:00.000Z");
  });

  it("groups a Roblox port's event with the native event of the same error", async () => {
    const p = await project();
    const native = await post("/api/ingest", JSON.stringify({ message: "Error: attempt to index nil with 'Health'", stack_trace: "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40" }), {
      "content-type": "application/json",
      "x-api-key": p.apiKey,
    });
    expect(native.status).toBe(200);
    const body = { ...fixture("sentry-roblox-devsparkle.json"), event_id: eventId() };
    expect((await post(`/api/${p.dsnId}/store/?sentry_key=${p.publicKey}`, JSON.stringify(body), { "content-type": "application/json" })).status).toBe(200);
    expect(await counts(p.projectId)).toEqual({ events: 2, groups: 1, occurrences: 2 });
  });
});

describe("raven 2.6.4, the legacy Node client", () => {
  it("posts base64 deflated JSON to /store/ with X-Sentry-Auth, here with a native key in the DSN", async () => {
    const p = await project();
    const proxy = await new RecordingProxy(app.port).start();
    try {
      const Raven = require("raven");
      // an existing native key works as the public key of a DSN
      const client = new Raven.Client(`http://${p.apiKey}@127.0.0.1:${proxy.port}/${p.dsnId}`, {
        release: "build-77",
        environment: "qa",
        name: "bot-1",
        tags: { shard: "3" },
      });
      const id: string = await new Promise((resolve, reject) => {
        client.on("error", reject);
        client.captureException(new RangeError("index 7 out of range"), { user: { id: "42", username: "Telamon" } }, (err: unknown, eventId: string) =>
          err ? reject(err) : resolve(eventId),
        );
      });
      expect(proxy.exchanges).toHaveLength(1);
      const [x] = proxy.exchanges;
      expect(x.url).toBe(`/api/${p.dsnId}/store/`);
      expect(x.headers["content-type"]).toBe("application/octet-stream");
      expect(String(x.headers["x-sentry-auth"])).toContain(`sentry_key=${p.apiKey}`);
      expect(x.status).toBe(200);
      const [e] = await eventsOf(p.projectId);
      expect(e.message).toBe("RangeError: index 7 out of range");
      expect(String(e.stack_trace).split("\n")[0]).toMatch(/sentry-protocol\.test\.ts:\d+/);
      expect(e.game_version).toBe("build-77");
      expect(e.environment).toBe("qa");
      expect(e.job_id).toBe("bot-1");
      expect(String(e.user_id)).toBe("42");
      expect(e.player_name).toBe("Telamon");
      expect(e.tags).toContain("shard:3");
      const [claimed] = await sql`select count(*)::int as n from sentry_event_ids where project_id = ${p.projectId} and event_id = ${id}`;
      expect(claimed.n).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe("envelopes", () => {
  it("reads items with and without `length`, payloads holding newlines, binary attachments and unknown types", async () => {
    const p = await project();
    const pretty = JSON.stringify({ event_id: eventId(), message: "first, pretty-printed", level: "info" }, null, 2);
    const binary = Buffer.concat([Buffer.from([0, 10, 255, 10, 13]), randomBytes(2000), Buffer.from("\n\n")]);
    // one event per envelope (see "Limits"), among the other item types
    const bodies = [
      envelope({ event_id: eventId(), sent_at: new Date().toISOString() }, [
        { header: { type: "event" }, payload: pretty },
        { header: { type: "attachment", filename: "save.bin", content_type: "application/octet-stream" }, payload: binary },
        { header: { type: "session" }, payload: JSON.stringify({ sid: "x", status: "ok" }), withLength: false },
        { header: { type: "client_report" }, payload: JSON.stringify({ discarded_events: [] }) },
        { header: { type: "transaction" }, payload: JSON.stringify({ type: "transaction", spans: [] }) },
        { header: { type: "some_future_item" }, payload: "whatever\n" },
      ]),
      envelope({}, [
        { header: { type: "session" }, payload: JSON.stringify({ sid: "y", status: "ok" }), withLength: false },
        eventItem({ event_id: eventId(), message: { formatted: "second, without length" }, level: "debug" }, false),
      ]),
      envelope({}, [eventItem({ event_id: eventId(), logentry: { message: "third %s", params: ["x"], formatted: "third x" } })]),
    ];
    for (const body of bodies) expect((await toEnvelope(p, body)).status).toBe(200);
    const events = (await eventsOf(p.projectId)).sort((a, b) => (a.message < b.message ? -1 : 1));
    expect(events.map((e) => [e.message, e.level])).toEqual([
      ["first, pretty-printed", "info"],
      ["second, without length", "info"],
      ["third x", "error"],
    ]);
  });

  it("answers 200 to an envelope with no event (sessions only) and stores nothing", async () => {
    const p = await project();
    const id = eventId();
    const r = await toEnvelope(p, envelope({ event_id: id }, [{ header: { type: "session" }, payload: "{}" }]));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id });
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("takes the key from the envelope header's dsn when the request carries none", async () => {
    const p = await project();
    const r = await post(`/api/${p.dsnId}/envelope/`, envelope({ dsn: p.dsn }, [eventItem({ message: "keyed by the dsn" })]));
    expect(r.status).toBe(200);
    expect(r.body.id).toMatch(/^[0-9a-f]{32}$/);
    expect((await eventsOf(p.projectId))[0].message).toBe("keyed by the dsn");
  });

  it("refuses malformed envelopes with 400 and writes nothing", async () => {
    const p = await project();
    const good = envelope({}, [eventItem({ message: "never stored" })]);
    const cases: [string, Buffer][] = [
      ["truncated payload", good.subarray(0, good.length - 10)],
      ["header not JSON", Buffer.from('{"event_id": \n{"type":"event"}\n{}\n')],
      ["item header not JSON", Buffer.from('{}\nnot json\n{"message":"x"}\n')],
      ["item without type", Buffer.from('{}\n{"length":2}\n{}\n')],
      ["negative length", Buffer.from('{}\n{"type":"event","length":-1}\n{}\n')],
      ["payload longer than length", Buffer.from('{}\n{"type":"event","length":2}\n{}xx\n')],
      ["event payload not JSON", Buffer.from('{}\n{"type":"event"}\n{"message":\n')],
      ["event payload not an object", Buffer.from('{}\n{"type":"event"}\n[1,2]\n')],
      ["header only, item header at the end", Buffer.from('{}\n{"type":"event","length":10}')],
      ["empty body", Buffer.alloc(0)],
    ];
    for (const [what, body] of cases) {
      const r = await toEnvelope(p, body);
      expect({ what, status: r.status, error: r.body?.error }).toEqual({ what, status: 400, error: "invalid_payload" });
      expect(r.headers.get("x-sentry-error")).toBeTruthy();
    }
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("accepts gzip, deflate and br bodies", async () => {
    const p = await project();
    const make = (m: string) => envelope({}, [eventItem({ message: m })]);
    expect((await toEnvelope(p, zlib.gzipSync(make("gzipped")), { "content-encoding": "gzip" })).status).toBe(200);
    expect((await toEnvelope(p, zlib.deflateSync(make("deflated")), { "content-encoding": "deflate" })).status).toBe(200);
    expect((await toEnvelope(p, zlib.deflateRawSync(make("raw deflated")), { "content-encoding": "deflate" })).status).toBe(200);
    expect((await toEnvelope(p, zlib.brotliCompressSync(make("brotli")), { "content-encoding": "br" })).status).toBe(200);
    expect((await eventsOf(p.projectId)).map((e) => e.message)).toEqual(["gzipped", "deflated", "raw deflated", "brotli"]);
  });

  it("refuses bad gzip with 400 and an unknown encoding with 415", async () => {
    const p = await project();
    const gz = zlib.gzipSync(envelope({}, [eventItem({ message: "x" })]));
    const corrupt = Buffer.concat([gz.subarray(0, 20), Buffer.alloc(20, 7)]);
    expect((await toEnvelope(p, corrupt, { "content-encoding": "gzip" })).body.error).toBe("invalid_payload");
    expect((await toEnvelope(p, Buffer.from("plain text"), { "content-encoding": "gzip" })).status).toBe(400);
    expect((await toEnvelope(p, gz, { "content-encoding": "zstd" })).status).toBe(415);
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("answers 413 to a decompression bomb without writing anything", async () => {
    const p = await project();
    // 64 MiB of zeros inflate from about 64 KiB: past the 20 MiB envelope limit
    const bomb = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const r = await toEnvelope(p, bomb, { "content-encoding": "gzip" });
    expect(r.status).toBe(413);
    expect(r.body.error).toBe("payload_too_large");
    const br = zlib.brotliCompressSync(Buffer.alloc(8 * 1024 * 1024));
    const s = await post(`/api/${p.dsnId}/store/?sentry_key=${p.publicKey}`, br, { "content-encoding": "br", "content-type": "application/json" });
    expect(s.status).toBe(413);
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("refuses an event item over 1 MiB with 413 and a raw body over the envelope limit with 413", async () => {
    const p = await project();
    const big = envelope({}, [eventItem({ message: "big", extra: { blob: "x".repeat(1024 * 1024) } })]);
    expect((await toEnvelope(p, big)).status).toBe(413);
    const huge = Buffer.alloc(21 * 1024 * 1024, 0x20);
    expect((await toEnvelope(p, huge)).status).toBe(413);
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });
});

describe("keys and projects", () => {
  it("answers 401 without a key or with a wrong or revoked key, and 403 for another project's path", async () => {
    const a = await project();
    const b = await project();
    const body = envelope({}, [eventItem({ message: "should not land" })]);
    expect((await post(`/api/${a.dsnId}/envelope/`, body)).status).toBe(401);
    expect((await post(`/api/${a.dsnId}/store/`, JSON.stringify({ message: "no key" }), { "content-type": "application/json" })).status).toBe(401);
    expect((await post(`/api/${a.dsnId}/store/`, JSON.stringify({ message: "bad header" }), { "x-sentry-auth": "Sentry sentry_version=7" })).status).toBe(401);
    const wrong = await post(`/api/${a.dsnId}/envelope/?sentry_key=${"0".repeat(32)}`, body);
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("unauthorized");
    const other = await post(`/api/${b.dsnId}/envelope/?sentry_key=${a.publicKey}`, body);
    expect(other.status).toBe(403);
    expect(other.body.error).toBe("forbidden");
    expect((await post(`/api/${b.projectId}/envelope/?sentry_key=${a.publicKey}`, body)).status).toBe(403);
    expect((await post(`/api/not-a-project/envelope/?sentry_key=${a.publicKey}`, body)).status).toBe(403);
    // the project's UUID works in the path too
    expect((await post(`/api/${a.projectId}/envelope/?sentry_key=${a.publicKey}`, envelope({}, [eventItem({ message: "by uuid" })]))).status).toBe(200);

    const keys = await call(app, "GET", `/api/team/projects/${a.projectId}/dsn-keys`, { cookie });
    const revoked = await call(app, "DELETE", `/api/team/projects/${a.projectId}/dsn-keys/${keys.body.data[0].id}`, { cookie });
    expect(revoked.status).toBe(200);
    expect((await post(`/api/${a.dsnId}/envelope/?sentry_key=${a.publicKey}`, body)).status).toBe(401);
    expect((await eventsOf(a.projectId)).map((e) => e.message)).toEqual(["by uuid"]);
    expect(await counts(b.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("gives DSN keys no access to anything but posting events", async () => {
    const p = await project();
    for (const path of ["/api/v1/errors", "/api/v1/stats", "/api/v1/economy/summary"]) {
      expect((await app.request(path, { headers: { "x-api-key": p.publicKey } })).status).toBe(401);
    }
    const native = await post("/api/ingest", JSON.stringify({ message: "x" }), { "content-type": "application/json", "x-api-key": p.publicKey });
    expect(native.status).toBe(401);
    // while the native key still reads
    expect((await app.request("/api/v1/errors", { headers: { "x-api-key": p.apiKey } })).status).toBe(200);
  });

  it("lets members list DSNs but only owners and admins create and revoke them", async () => {
    const member = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id, [{ userId: member.id, role: "member" }]);
    const made = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: { name: "website" } });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ name: "website", active: true, revoked_at: null });
    const memberCookie = await login(app, member.email);
    const listed = await call(app, "GET", `/api/team/projects/${projectId}/dsn-keys`, { cookie: memberCookie });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].dsn).toBe(made.body.dsn);
    expect((await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie: memberCookie, body: {} })).status).toBe(403);
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/dsn-keys/${made.body.id}`, { cookie: memberCookie })).status).toBe(403);
    expect((await call(app, "GET", `/api/team/projects/${projectId}/dsn-keys`)).status).toBe(401);
    expect((await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: { name: "x".repeat(101) } })).status).toBe(400);
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/dsn-keys/${made.body.id}`, { cookie })).status).toBe(200);
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/dsn-keys/${made.body.id}`, { cookie })).status).toBe(404);
  });
});

describe("deduplication and protocol details", () => {
  it("acknowledges an SDK retry of the same event_id without counting it twice, also when both race", async () => {
    const p = await project();
    const id = eventId();
    const body = envelope({ event_id: id }, [eventItem({ event_id: id, message: "retried", user: { id: "5" } })]);
    const first = await toEnvelope(p, body);
    const again = await toEnvelope(p, body);
    expect(first.body).toEqual({ id });
    expect(again).toMatchObject({ status: 200, body: { id } });
    const racing = eventId();
    const raceBody = envelope({}, [eventItem({ event_id: racing, message: "retried" })]);
    const results = await Promise.all(Array.from({ length: 8 }, () => toEnvelope(p, raceBody)));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await counts(p.projectId)).toEqual({ events: 2, groups: 1, occurrences: 2 });
    // the same id in another project is another event
    const q = await project();
    expect((await toEnvelope(q, body)).status).toBe(200);
    expect((await counts(q.projectId)).events).toBe(1);
  });

  it("goes through the native throttle and counters: 35 events of one error store 30 rows and count 35", async () => {
    const p = await project();
    for (let i = 0; i < 35; i++) {
      const r = await toEnvelope(p, envelope({}, [eventItem({ event_id: eventId(), message: "Storm from a Sentry SDK", user: { id: String(i % 7) } })]));
      expect(r.status).toBe(200);
    }
    expect(await counts(p.projectId)).toEqual({ events: 30, groups: 1, occurrences: 35 });
    await countersApplied(sql);
    const [g] = await sql`select user_count from error_groups where project_id = ${p.projectId}`;
    expect(Number(g.user_count)).toBe(7);
    const stats = await app.request("/api/v1/stats?timeframe=1h", { headers: { "x-api-key": p.apiKey } });
    expect((await stats.json()).total_errors).toBe(35);
  });

  it("forgets event ids after a day (the retention job prunes them), so a much later resend counts again", async () => {
    const p = await project();
    const id = eventId();
    const body = envelope({}, [eventItem({ event_id: id, message: "sent again next week" })]);
    expect((await toEnvelope(p, body)).status).toBe(200);
    await sql`update sentry_event_ids set received_at = now() - interval '25 hours' where project_id = ${p.projectId}`;
    expect(await pruneEventIds(sql)).toBeGreaterThanOrEqual(1);
    expect((await toEnvelope(p, body)).status).toBe(200);
    expect(await counts(p.projectId)).toEqual({ events: 2, groups: 1, occurrences: 2 });
  });

  it("maps level, tags as pairs, trace id, epoch timestamp, fingerprint with {{ default }} and keeps the rest in context", async () => {
    const p = await project();
    const ts = Math.floor(Date.now() / 1000) - 3600;
    const base = {
      exception: { values: [{ type: "KeyError", value: "'sword'", stacktrace: { frames: [{ filename: "bot/inventory.py", function: "equip", lineno: 9, in_app: true }] } }] },
      level: "fatal",
      tags: [["shard", "eu-1"], ["queue", "ranked"]],
      contexts: { trace: { trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" }, runtime: { name: "CPython" } },
      timestamp: ts,
      platform: "python",
      extra: { attempt: 3 },
      fingerprint: ["{{ default }}", "inventory"],
      breadcrumbs: { values: [{ message: "loaded save", category: "db" }] },
    };
    expect((await toEnvelope(p, envelope({}, [eventItem(base)]))).status).toBe(200);
    expect((await toEnvelope(p, envelope({}, [eventItem({ ...base, fingerprint: ["inventory"] })]))).status).toBe(200);
    const [e, f] = await eventsOf(p.projectId);
    expect(e.message).toBe("KeyError: 'sword'");
    expect(e.level).toBe("error");
    expect(e.tags).toEqual(["shard:eu-1", "queue:ranked"]);
    expect(e.trace_id).toBe("4bf92f35-77b3-4da6-a3ce-929d0e0e4736");
    expect(new Date(e.timestamp).getTime()).toBe(ts * 1000);
    expect(e.stack_trace).toBe("bot/inventory.py:9 function equip");
    expect(e.culprit).toBe("bot/inventory.py");
    expect(e.context).toMatchObject({ platform: "python", extra: { attempt: 3 }, contexts: { runtime: { name: "CPython" } } });
    // the `{values: [...]}` form
    expect(e.breadcrumbs).toEqual([{ level: "info", category: "db", message: "loaded save" }]);
    expect(e.context.breadcrumbs).toBeUndefined();
    // {{ default }} keeps the default grouping in the fingerprint, so the two fingerprints differ
    expect(e.group_id).not.toBe(f.group_id);
    const [trace] = await sql`select event_count from traces where project_id = ${p.projectId}`;
    expect(Number(trace.event_count)).toBe(2);
  });

  it("answers 405 to GET, 204 to a CORS preflight, and sends CORS headers on answers", async () => {
    const p = await project();
    const get = await app.request(`/api/${p.dsnId}/envelope/?sentry_key=${p.publicKey}`);
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, OPTIONS");
    const pre = await app.request(`/api/${p.dsnId}/store`, { method: "OPTIONS", headers: { origin: "https://game.example", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
    expect(pre.headers.get("access-control-allow-headers")).toMatch(/x-sentry-auth/);
    expect(pre.headers.get("access-control-max-age")).toBe("3600");
    const ok = await post(`/api/${p.dsnId}/store?sentry_key=${p.publicKey}`, JSON.stringify({ message: "no trailing slash" }), { "content-type": "application/json", origin: "https://game.example" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("*");
    expect(ok.headers.get("access-control-expose-headers")).toMatch(/x-sentry-rate-limits/);
    // what only a preflight's answer is read for is sent on the preflight only
    expect(ok.headers.get("access-control-allow-methods")).toBeNull();
    expect(ok.headers.get("access-control-max-age")).toBeNull();
    // a refusal is readable by the page's script too (X-Sentry-Error)
    const refused = await post(`/api/${p.dsnId}/store?sentry_key=nope`, JSON.stringify({ message: "bad key" }), { "content-type": "application/json", origin: "https://game.example" });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused.headers.get("access-control-expose-headers")).toMatch(/x-sentry-error/);
  });

  it("refuses a /store/ body that is not a Sentry event with 400", async () => {
    const p = await project();
    const url = `/api/${p.dsnId}/store/?sentry_key=${p.publicKey}`;
    expect((await post(url, "not json at all {", { "content-type": "application/json" })).status).toBe(400);
    expect((await post(url, "[1,2,3]", { "content-type": "application/json" })).status).toBe(400);
    expect((await post(url, "", { "content-type": "application/json" })).status).toBe(400);
    expect((await post(url, Buffer.from("aGVsbG8=").toString(), { "content-type": "application/octet-stream" })).status).toBe(400);
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });
});
