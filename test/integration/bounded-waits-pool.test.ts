import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { lockTables } from "../support/locks.js";
import { connect, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser, type Reply } from "../support/team.js";

/**
 * A held lock fills a small pool: every connection waits on it and the other requests queue for a
 * connection, which PostgreSQL's statement and lock timeouts do not bound. Every request that touches
 * the database still answers within its budget of DB_TIMEOUT_MS (the queue wait included): 503 with
 * Retry-After and the error body, or success when it needs no locked table. No timing is asserted: the
 * lock is held for 20 times DB_TIMEOUT_MS, and every answer must arrive while it is still held. A
 * write answered 503 is not stored, then or after the lock.
 */
const DB_TIMEOUT_MS = 1500;
const LOCK_HOLD_MS = 30_000;
const ROUNDS = 6;
const LOCKED = "error_groups, events, economy_snapshots, economy_history";
const ok = (status: number) => status === 200 || status === 201;

describe("requests queued for a pool connection behind a held lock", () => {
  let app: TestApp;
  let admin: Sql;
  let apiKey: string;
  let projectId: string;
  let groupId: string;
  let cookie: string;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp({ DB_TIMEOUT_MS: String(DB_TIMEOUT_MS), DB_POOL_SIZE: "4" });
    admin = connect(app.databaseUrl);
    const user = await makeUser(admin);
    ({ projectId, apiKey } = await makeProject(admin, user.id));
    cookie = await login(app, user.email);
    // the key is looked up (and cached), the group, the player and the share link exist, before the lock
    await ingest(app, apiKey, { message: "Before the lock", user_id: 7 });
    [{ id: groupId }] = await admin<{ id: string }[]>`select id::text from error_groups where project_id = ${projectId}`;
    const push = await call(app, "POST", "/api/economy/ingest", {
      body: { players: [{ user_id: 77, profile: { RPCharacterOne: { Cash: 5 } } }] },
      headers: { "x-api-key": apiKey },
    });
    expect(push.status).toBe(200);
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role: "editor" } });
    expect(link.status).toBe(201);
    token = link.body.token;
  });

  afterAll(async () => {
    await admin?.end();
    await app?.close();
  });

  type Sent = { what: string; reply: Reply; whileLocked: boolean; locked: boolean; write?: { kind: "key" | "project" | "player" | "status"; id: string } };

  it("every request answers while the lock is held: 503 with Retry-After, or success where it needs no locked table", async () => {
    const lock = await lockTables(admin, LOCKED);

    const sent: Promise<Sent>[] = [];
    const send = (what: string, request: Promise<Reply>, opts: { locked?: boolean; write?: Sent["write"] } = {}) =>
      sent.push(request.then((reply) => ({ what, reply, whileLocked: lock.held(), locked: opts.locked ?? false, write: opts.write })));
    const key = { "x-api-key": apiKey };
    const team = `/api/team/projects/${projectId}`;
    for (let i = 0; i < ROUNDS; i++) {
      for (const path of [
        "/api/v1/errors?grouped=true",
        "/api/v1/errors",
        `/api/v1/errors/${groupId}`,
        `/api/v1/errors/${groupId}/events`,
      ]) {
        send(`GET ${path}`, call(app, "GET", path, { headers: key }), { locked: true });
      }
      for (const path of [
        `/api/v1/errors/${groupId}/tags`,
        "/api/v1/stats?timeframe=24h",
        "/api/v1/players",
        "/api/v1/releases",
        "/api/v1/traces",
        "/api/v1/economy/players",
        "/api/v1/economy/players/77",
        "/api/v1/economy/summary",
        "/api/v1/economy/anomalies",
        "/api/economy/key?project_id=" + projectId,
      ]) {
        send(`GET ${path}`, call(app, "GET", path, { headers: key, cookie }));
      }
      const userId = String(1000 + i);
      send("POST /api/economy/ingest", call(app, "POST", "/api/economy/ingest", { headers: key, body: { players: [{ user_id: userId, profile: { RPCharacterOne: { Cash: 9 } } }] } }), {
        write: { kind: "player", id: userId },
      });
      send(`GET ${team}`, call(app, "GET", team, { cookie }));
      send("GET /api/team/projects", call(app, "GET", "/api/team/projects", { cookie }));
      send(`GET ${team}/keys`, call(app, "GET", `${team}/keys`, { cookie }));
      const keyName = `During the lock ${i}`;
      send(`POST ${team}/keys`, call(app, "POST", `${team}/keys`, { cookie, body: { name: keyName } }), { write: { kind: "key", id: keyName } });
      // a transaction: its BEGIN waits in the pool's queue too
      const projectName = `During the lock ${i}`;
      send("POST /api/team/projects", call(app, "POST", "/api/team/projects", { cookie, body: { name: projectName } }), { write: { kind: "project", id: projectName } });
      send(`GET /api/share/:token`, call(app, "GET", `/api/share/${token}`));
      send(`GET /projects/:id/issues`, call(app, "GET", `/projects/${projectId}/issues`, { cookie }));
      send(`GET /projects/:id/economy`, call(app, "GET", `/projects/${projectId}/economy`, { cookie }));
      // a client-side navigation asks for the page's data alone
      send(`GET /projects/:id/issues.data`, call(app, "GET", `/projects/${projectId}/issues.data`, { cookie }));
    }
    send(`PATCH ${team}/groups/:id`, call(app, "PATCH", `${team}/groups/${groupId}`, { cookie, body: { status: "ignored" } }), {
      write: { kind: "status", id: groupId },
    });

    // the lock goes once every request answered, or after LOCK_HOLD_MS: an unbounded wait answers after that
    const answered = Promise.all(sent);
    await Promise.race([answered, new Promise((r) => setTimeout(r, LOCK_HOLD_MS))]);
    await lock.release();
    const answers = await answered;

    const late = answers.filter((a) => !a.whileLocked).map((a) => `${a.what} ${a.reply.status}`);
    expect(late).toEqual([]);
    const wrong: string[] = [];
    for (const a of answers) {
      const { status, headers, body } = a.reply;
      if (status !== 503) {
        if (a.locked || !ok(status)) wrong.push(`${a.what}: ${status}`);
        continue;
      }
      if (!(Number(headers.get("retry-after")) > 0)) wrong.push(`${a.what}: 503 without Retry-After`);
      const page = a.what.startsWith("GET /projects/");
      // a page answers its 503 as a document, its data as the turbo-stream its error boundary reads
      const pageType = a.what.endsWith(".data") ? /text\/x-script/ : /text\/html/;
      const errorBody = typeof body === "object" && body !== null && body.error === "unavailable" && typeof body.message === "string" && Object.keys(body).length === 2;
      if (page ? !pageType.test(headers.get("content-type") ?? "") : !errorBody) wrong.push(`${a.what}: 503 body ${JSON.stringify(body).slice(0, 200)}`);
    }
    expect(wrong).toEqual([]);
    // the queue was really there: most requests met their budget
    expect(answers.filter((a) => a.reply.status === 503).length).toBeGreaterThan(answers.length / 2);

    // writes answered 503 are not stored, then or later; those answered with success are
    await new Promise((r) => setTimeout(r, 2 * DB_TIMEOUT_MS));
    const writes: string[] = [];
    for (const a of answers) {
      if (!a.write) continue;
      const { kind, id } = a.write;
      const rows =
        kind === "key"
          ? await admin`select 1 from api_keys where project_id = ${projectId} and name = ${id}`
          : kind === "project"
            ? await admin`select 1 from projects where name = ${id}`
            : kind === "player"
              ? await admin`select 1 from economy_snapshots where project_id = ${projectId} and user_id = ${id}`
              : await admin`select 1 from error_groups where project_id = ${projectId} and id = ${id} and status = 'ignored'`;
      if ((rows.length > 0) !== ok(a.reply.status)) writes.push(`${a.what} ${a.write.id}: answered ${a.reply.status}, stored ${rows.length > 0}`);
    }
    expect(writes).toEqual([]);

    // the pool recovers: the next requests are answered as usual
    expect((await call(app, "GET", "/api/v1/errors?grouped=true", { headers: key })).status).toBe(200);
    expect((await call(app, "GET", `/projects/${projectId}/issues`, { cookie })).status).toBe(200);
  });
});
