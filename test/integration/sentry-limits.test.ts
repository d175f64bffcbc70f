import http from "node:http";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { createApiKey } from "../../app/auth/api-keys.server.js";
import { pruneIngestWindows } from "../../db/ingest-limits.js";
import { connect, parseJsonText, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { countersApplied } from "../support/counters.js";

/**
 * The abuse limits of the Sentry endpoints, whose keys are public: one event per envelope, the
 * write backlog counting the request's own events, a per-key events-per-minute limit, and a bound
 * on new issues per project per minute whose overflow is counted in a catch-all issue.
 */

const NEW_ISSUES_PER_MINUTE = 5;

let app: TestApp;
let sql: Sql;
let owner: { id: string; email: string };
let cookie: string;

beforeAll(async () => {
  app = await startTestApp({ SENTRY_MAX_NEW_ISSUES_PER_MINUTE: String(NEW_ISSUES_PER_MINUTE) });
  sql = connect(app.databaseUrl);
  owner = await makeUser(app.sql);
  cookie = await login(app, owner.email);
});
afterAll(async () => {
  await sql?.end();
  await app?.close();
});

type Project = { projectId: string; apiKey: string; dsnId: string; publicKey: string; keyId: string };

async function project(key: Record<string, unknown> = {}, members: { userId: string; role: "member" }[] = []): Promise<Project> {
  const on = app;
  const as = cookie;
  const { projectId, apiKey } = await makeProject(on.sql, owner.id, members);
  const r = await call(on, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie: as, body: key });
  expect(r.status).toBe(201);
  return { projectId, apiKey, dsnId: String(r.body.dsn).split("/").pop()!, publicKey: r.body.public_key, keyId: r.body.id };
}

/** An envelope: header line, then each item's header line (with its length) and payload. */
function envelope(items: { type: string; payload: string }[]): Buffer {
  const lines = [JSON.stringify({ sent_at: new Date().toISOString() })];
  for (const it of items) lines.push(JSON.stringify({ type: it.type, length: Buffer.byteLength(it.payload) }), it.payload);
  return Buffer.from(lines.join("\n") + "\n");
}
const event = (message: string) => ({ type: "event", payload: JSON.stringify({ event_id: randomBytes(16).toString("hex"), message }) });

async function post(pathname: string, body: Buffer | string, headers: Record<string, string> = {}, on: TestApp = app) {
  const res = await on.request(pathname, { method: "POST", headers, body: typeof body === "string" ? body : new Uint8Array(body) });
  return { status: res.status, body: parseJsonText(await res.text()), headers: res.headers };
}
const toEnvelope = (p: Project, body: Buffer, on: TestApp = app) =>
  post(`/api/${p.dsnId}/envelope/?sentry_key=${p.publicKey}`, body, { "content-type": "application/x-sentry-envelope" }, on);
const sendEvent = (p: Project, message: string, on: TestApp = app) => toEnvelope(p, envelope([event(message)]), on);

const counts = async (projectId: string) => {
  const [r] = await sql<{ events: number; groups: number; occurrences: number }[]>`
    select (select count(*) from events where project_id = ${projectId})::int as events,
      (select count(*) from error_groups where project_id = ${projectId})::int as groups,
      (select coalesce(sum(count), 0) from error_groups where project_id = ${projectId})::int as occurrences`;
  return r;
};

/** Words of letters g–z only: grouping keeps them (numbers and hex-like words become placeholders). */
const word = (i: number) => {
  let s = "";
  do {
    s += "ghijklmnopqrstuvwxyz"[i % 20];
    i = Math.floor(i / 20);
  } while (i > 0);
  return s;
};

/**
 * Waits for the next minute when the database's current one has less than `need` seconds left, so
 * a test's requests fall in one limit window (the windows are PostgreSQL's clock minutes).
 */
async function withinOneWindow(need = 25) {
  const [{ left }] = await sql<{ left: number }[]>`select 60 - extract(second from now())::float8 as left`;
  if (left < need) await new Promise((r) => setTimeout(r, left * 1000 + 200));
}

describe("events per request", () => {
  it("refuses an envelope with a second event item with 413, as Relay does, and writes nothing", async () => {
    const p = await project();
    const two = await toEnvelope(p, envelope([event("first of two"), event("second of two")]));
    expect(two.status).toBe(413);
    expect(two.body.error).toBe("payload_too_large");
    expect(two.headers.get("x-sentry-error")).toMatch(/more than 1 event item/);
    // the flood's shape: thousands of tiny event items in one envelope
    const flood = Buffer.concat([Buffer.from("{}\n"), Buffer.from('{"type":"event"}\n{}\n'.repeat(20_000))]);
    const r = await toEnvelope(p, flood);
    expect(r.status).toBe(413);
    expect(r.body.error).toBe("payload_too_large");
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });

  it("refuses an envelope of more than 100 items with 413 and takes one event among other items", async () => {
    const p = await project();
    const sessions = Array.from({ length: 100 }, () => ({ type: "session", payload: "{}" }));
    const over = await toEnvelope(p, envelope([event("among too many items"), ...sessions]));
    expect(over.status).toBe(413);
    expect(over.headers.get("x-sentry-error")).toMatch(/more than 100 items/);
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
    const fits = await toEnvelope(p, envelope([event("among 100 items"), ...sessions.slice(1)]));
    expect(fits.status).toBe(200);
    expect(await counts(p.projectId)).toEqual({ events: 1, groups: 1, occurrences: 1 });
  });

  it("refuses a /store/ body holding several events with 400 and writes nothing", async () => {
    const p = await project();
    const r = await post(`/api/${p.dsnId}/store/?sentry_key=${p.publicKey}`, JSON.stringify([{ message: "a" }, { message: "b" }]), {
      "content-type": "application/json",
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(await counts(p.projectId)).toEqual({ events: 0, groups: 0, occurrences: 0 });
  });
});

describe("per-key rate limit", () => {
  it("gives new keys 6,000 events per minute, settable per key through the Team API (null: none)", async () => {
    const member = await makeUser(app.sql);
    const p = await project({}, [{ userId: member.id, role: "member" }]);
    const url = `/api/team/projects/${p.projectId}/dsn-keys`;
    const listed = await call(app, "GET", url, { cookie });
    expect(listed.body.data[0].rate_limit_per_minute).toBe(6000);
    const made = await call(app, "POST", url, { cookie, body: { name: "web", rate_limit_per_minute: 250 } });
    expect(made.body.rate_limit_per_minute).toBe(250);
    const unlimited = await call(app, "PATCH", `${url}/${made.body.id}`, { cookie, body: { rate_limit_per_minute: null } });
    expect(unlimited.status).toBe(200);
    expect(unlimited.body).toMatchObject({ id: made.body.id, name: "web", rate_limit_per_minute: null, dsn: made.body.dsn });
    const renamed = await call(app, "PATCH", `${url}/${made.body.id}`, { cookie, body: { name: "website" } });
    expect(renamed.body).toMatchObject({ name: "website", rate_limit_per_minute: null });

    for (const bad of [0, -1, 1.5, "600", 100_000_001]) {
      const r = await call(app, "PATCH", `${url}/${made.body.id}`, { cookie, body: { rate_limit_per_minute: bad } });
      expect({ bad, status: r.status, error: r.body.error }).toEqual({ bad, status: 400, error: "invalid_payload" });
      expect(r.body.details[0].path).toBe("rate_limit_per_minute");
    }
    expect((await call(app, "PATCH", `${url}/${made.body.id}`, { cookie, body: {} })).status).toBe(400);
    expect((await call(app, "POST", url, { cookie, body: { rate_limit_per_minute: 0 } })).status).toBe(400);
    expect((await call(app, "PATCH", `${url}/${crypto.randomUUID()}`, { cookie, body: { rate_limit_per_minute: 5 } })).status).toBe(404);
    // members read the limit but do not change it
    const memberCookie = await login(app, member.email);
    expect((await call(app, "GET", url, { cookie: memberCookie })).body.data.map((k: any) => k.rate_limit_per_minute)).toEqual([6000, null]);
    expect((await call(app, "PATCH", `${url}/${made.body.id}`, { cookie: memberCookie, body: { rate_limit_per_minute: 5 } })).status).toBe(403);
    // a revoked key is not changed
    await call(app, "DELETE", `${url}/${made.body.id}`, { cookie });
    expect((await call(app, "PATCH", `${url}/${made.body.id}`, { cookie, body: { rate_limit_per_minute: 5 } })).status).toBe(404);
  });

  it("answers 429 with Retry-After and X-Sentry-Rate-Limits past the limit, writes nothing then, and a raised limit applies at once", async () => {
    const p = await project({ rate_limit_per_minute: 5 });
    await withinOneWindow();
    for (let i = 0; i < 5; i++) expect((await sendEvent(p, "Within the key's limit")).status).toBe(200);
    const refused = await sendEvent(p, "Past the key's limit");
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe("rate_limited");
    const retry = Number(refused.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(refused.headers.get("x-sentry-rate-limits")).toBe(`${retry}:error:key:key_quota`);
    // /store/ shares the key's minute
    const store = await post(`/api/${p.dsnId}/store/?sentry_key=${p.publicKey}`, JSON.stringify({ message: "Past the key's limit" }), { "content-type": "application/json" });
    expect(store.status).toBe(429);
    expect(await counts(p.projectId)).toEqual({ events: 5, groups: 1, occurrences: 5 });

    // the project's native key is secret and has no per-minute limit, also on the Sentry endpoints
    for (let i = 0; i < 3; i++) {
      const r = await post(`/api/${p.dsnId}/store/?sentry_key=${p.apiKey}`, JSON.stringify({ message: "Native key in a DSN" }), { "content-type": "application/json" });
      expect(r.status).toBe(200);
    }

    // a raised limit applies at once, in this minute
    const raised = await call(app, "PATCH", `/api/team/projects/${p.projectId}/dsn-keys/${p.keyId}`, { cookie, body: { rate_limit_per_minute: 7 } });
    expect(raised.status).toBe(200);
    expect((await sendEvent(p, "Within the key's limit")).status).toBe(200);
    expect((await sendEvent(p, "Within the key's limit")).status).toBe(429);
    expect(await counts(p.projectId)).toEqual({ events: 9, groups: 2, occurrences: 9 });

    // the hourly retention job forgets windows older than an hour
    await sql`update ingest_windows set window_start = window_start - interval '2 hours' where project_id = ${p.projectId}`;
    expect(await pruneIngestWindows(sql)).toBeGreaterThanOrEqual(1);
    const [left] = await sql<{ n: number }[]>`select count(*)::int as n from ingest_windows where project_id = ${p.projectId}`;
    expect(left.n).toBe(0);
  });

  it("holds exactly under concurrent requests: of 40 sent at once past a limit of 25, 25 are taken and counted", async () => {
    const p = await project({ rate_limit_per_minute: 25 });
    await withinOneWindow();
    const answers = await Promise.all(Array.from({ length: 40 }, () => sendEvent(p, "Sent all at once")));
    const tally = answers.reduce<Record<number, number>>((t, a) => ({ ...t, [a.status]: (t[a.status] ?? 0) + 1 }), {});
    expect(tally).toEqual({ 200: 25, 429: 15 });
    expect(await counts(p.projectId)).toEqual({ events: 25, groups: 1, occurrences: 25 });
    // the minute counted past the limit (refused requests count too, except those this instance
    // refused from memory without asking the database again)
    const [{ used }] = await sql<{ used: number }[]>`select sum(used)::int as used from ingest_windows where project_id = ${p.projectId}`;
    expect(used).toBeGreaterThan(25);
    expect(used).toBeLessThanOrEqual(40);
  });

  it("takes a large limit's minute in blocks of 1%: a block's events cost no upsert, and the last block stops at the limit", async () => {
    const p = await project({ rate_limit_per_minute: 1000 });
    await withinOneWindow();
    const used = async () => {
      const [r] = await sql<{ used: number | null }[]>`select sum(used)::int as used from ingest_windows where project_id = ${p.projectId}`;
      return r.used ?? 0;
    };
    // the first event takes itself and a block of 10 more
    expect((await sendEvent(p, "Counted in blocks")).status).toBe(200);
    expect(await used()).toBe(11);
    for (let i = 0; i < 10; i++) expect((await sendEvent(p, "Counted in blocks")).status).toBe(200);
    expect(await used()).toBe(11);
    expect((await sendEvent(p, "Counted in blocks")).status).toBe(200);
    expect(await used()).toBe(22);
    // near the limit a block holds only what is left of it. The count is set to 990: the 10 events
    // this process already holds are taken first, then the 10 the limit leaves (one request and a
    // block of 9), and the next request is refused
    await sql`update ingest_windows set used = 990 where project_id = ${p.projectId}`;
    let taken = 0;
    for (;;) {
      const r = await sendEvent(p, "Counted in blocks");
      if (r.status !== 200) {
        expect(r.status).toBe(429);
        expect(r.headers.get("x-sentry-rate-limits")).toMatch(/:error:key:key_quota$/);
        break;
      }
      taken++;
      expect(taken).toBeLessThanOrEqual(20);
    }
    expect(taken).toBe(20);
    expect(await counts(p.projectId)).toMatchObject({ occurrences: 32 });
  });

  it("is settable on the Settings page; an empty field lifts it", async () => {
    const p = await project({ rate_limit_per_minute: 1 });
    await withinOneWindow();
    expect((await sendEvent(p, "One a minute")).status).toBe(200);
    expect((await sendEvent(p, "One a minute")).status).toBe(429);
    const form = (fields: Record<string, string>) =>
      app.request(`/projects/${p.projectId}/settings`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
        body: new URLSearchParams(fields).toString(),
        redirect: "manual",
      });
    const page = await app.request(`/projects/${p.projectId}/settings`, { headers: { cookie } });
    expect(await page.text()).toMatch(/name="rate_limit_per_minute"[^>]*value="1"/);
    const bad = await form({ intent: "dsn-limit", key_id: p.keyId, rate_limit_per_minute: "lots" });
    expect(bad.status).toBe(400);
    const ok = await form({ intent: "dsn-limit", key_id: p.keyId, rate_limit_per_minute: "" });
    expect(ok.status).toBe(200);
    const [row] = await sql`select rate_limit_per_minute from dsn_keys where id = ${p.keyId}`;
    expect(row.rate_limit_per_minute).toBeNull();
    for (let i = 0; i < 3; i++) expect((await sendEvent(p, "One a minute")).status).toBe(200);
    expect((await form({ intent: "dsn-limit", key_id: p.keyId, rate_limit_per_minute: "2,500" })).status).toBe(200);
    const [after] = await sql`select rate_limit_per_minute from dsn_keys where id = ${p.keyId}`;
    expect(after.rate_limit_per_minute).toBe(2500);
    expect(await counts(p.projectId)).toEqual({ events: 4, groups: 1, occurrences: 4 });
  });
});

describe("new issues per project per minute", () => {
  it("counts a flood of unique errors past the bound in one catch-all issue, exactly, while another project's events go on", async () => {
    const flooded = await project();
    const other = await project();
    await withinOneWindow();
    const FLOOD = 40;
    const [floodReplies, otherReplies] = await Promise.all([
      Promise.all(Array.from({ length: FLOOD }, (_, i) => sendEvent(flooded, `Unique failure ${word(i)}`))),
      Promise.all(Array.from({ length: 12 }, (_, i) => sendEvent(other, `Steady failure ${word(i % 3)}`))),
    ]);
    expect(floodReplies.map((r) => r.status)).toEqual(Array(FLOOD).fill(200));
    expect(otherReplies.map((r) => r.status)).toEqual(Array(12).fill(200));

    const groups = await sql<{ fingerprint: string; message: string; count: string }[]>`
      select fingerprint, message, count from error_groups where project_id = ${flooded.projectId} order by fingerprint`;
    const catchAll = groups.filter((g) => g.fingerprint === "overflow:new-issues");
    const own = groups.filter((g) => g.fingerprint !== "overflow:new-issues");
    expect(own).toHaveLength(NEW_ISSUES_PER_MINUTE);
    expect(own.every((g) => Number(g.count) === 1)).toBe(true);
    expect(catchAll).toHaveLength(1);
    expect(catchAll[0].message).toMatch(/^Too many new issues/);
    expect(Number(catchAll[0].count)).toBe(FLOOD - NEW_ISSUES_PER_MINUTE);
    // every event is counted once: in its own issue or in the catch-all, stats included
    expect((await counts(flooded.projectId)).occurrences).toBe(FLOOD);
    await countersApplied(sql); // stats read the rollups, which the deferred counters write
    const stats = await app.request("/api/v1/stats?timeframe=1h", { headers: { "x-api-key": flooded.apiKey } });
    expect((await stats.json()).total_errors).toBe(FLOOD);
    // the raw events keep their own messages (within the throttle's 30 rows a minute)
    const [kept] = await sql<{ n: number }[]>`
      select count(distinct e.message)::int as n from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
      where e.project_id = ${flooded.projectId} and g.fingerprint = 'overflow:new-issues'`;
    expect(kept.n).toBe(30);

    // the other project's issues are its own, untouched by the flood
    const otherGroups = await sql<{ message: string; count: string }[]>`select message, count from error_groups where project_id = ${other.projectId} order by message`;
    expect(otherGroups.map((g) => [g.message, Number(g.count)])).toEqual([
      ["Steady failure g", 4],
      ["Steady failure h", 4],
      ["Steady failure i", 4],
    ]);

    // an error that got its issue before the bound keeps going to it; a new one joins the catch-all
    expect((await sendEvent(flooded, own[0].message)).status).toBe(200);
    expect((await sendEvent(flooded, "Yet another unique failure")).status).toBe(200);
    const after = await sql<{ fingerprint: string; count: string }[]>`select fingerprint, count from error_groups where project_id = ${flooded.projectId}`;
    expect(after).toHaveLength(NEW_ISSUES_PER_MINUTE + 1);
    expect(Number(after.find((g) => g.fingerprint === own[0].fingerprint)!.count)).toBe(2);
    expect(Number(after.find((g) => g.fingerprint === "overflow:new-issues")!.count)).toBe(FLOOD - NEW_ISSUES_PER_MINUTE + 1);
  });

  it("does not bound native ingest, whose key is secret", async () => {
    const p = await project();
    await withinOneWindow();
    const { apiKey } = await createApiKey(app.sql, p.projectId, "server");
    const errors = Array.from({ length: 12 }, (_, i) => ({ message: `Server failure ${word(i)}` }));
    const r = await call(app, "POST", "/api/ingest", { body: { errors }, headers: { "x-api-key": apiKey } });
    expect(r.status).toBe(200);
    expect(await counts(p.projectId)).toMatchObject({ groups: 12, occurrences: 12 });
  });
});

describe("the write backlog", () => {
  let busy: TestApp;
  beforeAll(async () => {
    // a backlog of one event is already full here
    busy = await startTestApp({ SENTRY_MAX_PENDING_EVENTS: "1" });
  });
  afterAll(() => busy?.close());

  it("is checked again after the body is read, counting the request's own events", async () => {
    const busyOwner = await makeUser(busy.sql);
    const busyCookie = await login(busy, busyOwner.email);
    const { projectId } = await makeProject(busy.sql, busyOwner.id);
    const made = await call(busy, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie: busyCookie, body: {} });
    const dsnId = String(made.body.dsn).split("/").pop();
    const { apiKey } = await createApiKey(busy.sql, projectId, "native");
    const db = connect(busy.databaseUrl);
    try {
      // the request starts while the backlog is empty and sends its body slowly
      const body = envelope([event("sent while the backlog filled")]);
      const req = http.request(`${busy.url}/api/${dsnId}/envelope/?sentry_key=${made.body.public_key}`, {
        method: "POST",
        headers: { "content-type": "application/x-sentry-envelope", "content-length": String(body.length) },
      });
      const reply = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>((resolve, reject) => {
        req.on("response", (res) => {
          let text = "";
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, text }));
        });
        req.on("error", reject);
      });
      req.write(body.subarray(0, 10));
      await new Promise((r) => setTimeout(r, 300));

      // meanwhile the backlog fills: a native event creating a group waits behind a held project row
      const holder = await db.reserve();
      await holder`begin`;
      await holder`select id from projects where id = ${projectId} for update`;
      const blocked = fetch(`${busy.url}/api/ingest`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: JSON.stringify({ message: "native event behind a lock" }),
      });
      for (let i = 0; i < 200 && busy.services.writer.pendingEvents < 1; i++) await new Promise((r) => setTimeout(r, 25));
      expect(busy.services.writer.pendingEvents).toBe(1);

      req.end(body.subarray(10));
      const r = await reply;
      expect(r.status).toBe(429);
      expect(r.headers["x-sentry-rate-limits"]).toBe("10::organization:backlog");
      expect(r.headers["retry-after"]).toBe("10");

      await holder`commit`;
      holder.release();
      expect((await blocked).status).toBe(200);
      const messages = await db<{ message: string }[]>`select message from events where project_id = ${projectId}`;
      expect(messages.map((m) => m.message)).toEqual(["native event behind a lock"]);
    } finally {
      await db.end();
    }
  });
});
