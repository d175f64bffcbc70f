import * as Sentry from "@sentry/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Sql } from "../../db/client.js";
import { createApiKey } from "../../app/auth/api-keys.server.js";
import { connect, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { RecordingProxy } from "../support/recording-proxy.js";

/**
 * The real @sentry/node client, pointed at the running server through a DSN made in the Team API.
 * A recording proxy between them shows what the SDK sent (and whether it sent anything).
 */

type Setup = { app: TestApp; sql: Sql; proxy: RecordingProxy; projectId: string; dsn: string; publicKey: string; keyId: string; cookie: string };

async function setup(env: Record<string, string> = {}): Promise<Setup> {
  const app = await startTestApp(env);
  const sql = connect(app.databaseUrl);
  const proxy = await new RecordingProxy(app.port).start();
  const owner = await makeUser(app.sql);
  const { projectId } = await makeProject(app.sql, owner.id);
  const cookie = await login(app, owner.email);
  const created = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: { name: "web" } });
  expect(created.status).toBe(201);
  // the DSN names the proxy's port instead of the server's, so every request passes the recorder
  const dsn = String(created.body.dsn).replace(`:${app.port}/`, `:${proxy.port}/`);
  return { app, sql, proxy, projectId, dsn, publicKey: created.body.public_key, keyId: created.body.id, cookie };
}

async function teardown(s: Setup | undefined) {
  await Sentry.close(2000);
  await s?.proxy.close();
  await s?.sql.end();
  await s?.app.close();
}

function init(dsn: string) {
  Sentry.init({
    dsn,
    defaultIntegrations: false,
    // chained causes come from this integration, which is otherwise a default one
    integrations: [Sentry.linkedErrorsIntegration()],
    release: "1.4.2",
    environment: "staging",
    serverName: "game-server-7",
  });
}

const eventsOf = (sql: Sql, projectId: string, message: string) =>
  sql<any[]>`
    select e.*, g.fingerprint, g.count as group_count, g.message as group_message, g.culprit
    from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
    where e.project_id = ${projectId} and e.message = ${message} order by e.id`;

describe("@sentry/node against the service", () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup();
    init(s.dsn);
  });
  afterAll(() => teardown(s));

  it("hands out a DSN in the shape Sentry SDKs accept (numeric project, hex public key)", () => {
    expect(s.dsn).toMatch(/^http:\/\/[0-9a-f]{32}@127\.0\.0\.1:\d+\/\d+$/);
    expect(s.dsn).toContain(s.publicKey);
  });

  it("stores captureException with its nested cause, user, tags, release, environment and server", async () => {
    const inner = new TypeError("cannot read properties of undefined (reading 'coins')");
    const outer = new Error("purchase failed", { cause: inner });
    let sentId: string | undefined;
    Sentry.withScope((scope) => {
      scope.setUser({ id: "261", username: "Builderman", email: "b@example.test" });
      scope.setTags({ store: "gems", region: "eu" });
      sentId = scope.captureException(outer);
    });
    expect(await Sentry.flush(10_000)).toBe(true);

    const [e] = await eventsOf(s.sql, s.projectId, "Error: purchase failed");
    expect(e).toBeDefined();
    expect(e.level).toBe("error");
    expect(String(e.user_id)).toBe("261");
    expect(e.player_name).toBe("Builderman");
    expect(e.tags).toEqual(expect.arrayContaining(["store:gems", "region:eu"]));
    expect(e.game_version).toBe("1.4.2");
    expect(e.environment).toBe("staging");
    expect(e.job_id).toBe("game-server-7");
    // raised exception's frames first (innermost first), then the cause under its own heading
    const lines = String(e.stack_trace).split("\n");
    expect(lines[0]).toMatch(/sentry-node\.test\.ts:\d+/);
    expect(lines).toContain("Caused by: TypeError: cannot read properties of undefined (reading 'coins')");
    expect(e.culprit).toMatch(/sentry-node\.test/);
    expect(e.context.sdk.name).toBe("sentry.javascript.node");
    expect(e.context.user).toEqual({ email: "b@example.test" });
    expect(e.group_message).toBe("Error: purchase failed");
    const [claimed] = await s.sql`select count(*)::int as n from sentry_event_ids where project_id = ${s.projectId} and event_id = ${sentId!}`;
    expect(claimed.n).toBe(1);
    const posted = s.proxy.exchanges.filter((x) => x.url.startsWith("/api/") && x.url.includes("/envelope/"));
    expect(posted.length).toBeGreaterThan(0);
    expect(posted.every((x) => x.status === 200)).toBe(true);
  });

  it("stores captureMessage with its level", async () => {
    Sentry.captureMessage("Matchmaking queue is slow", "warning");
    Sentry.captureMessage("Shop opened", "info");
    expect(await Sentry.flush(10_000)).toBe(true);
    const [warn] = await eventsOf(s.sql, s.projectId, "Matchmaking queue is slow");
    const [info] = await eventsOf(s.sql, s.projectId, "Shop opened");
    expect(warn.level).toBe("warn");
    expect(info.level).toBe("info");
    // the SDK attaches the calling stack to a message; it is kept like an exception's
    expect(String(warn.stack_trace).split("\n")[0]).toMatch(/^\/.*sentry-node\.test\.ts:\d+$/);
  });

  it("groups by a custom fingerprint", async () => {
    for (const msg of ["Payment declined for order 1", "Payment gateway timed out"]) {
      Sentry.withScope((scope) => {
        scope.setFingerprint(["payments"]);
        scope.captureException(new Error(msg));
      });
    }
    expect(await Sentry.flush(10_000)).toBe(true);
    const [a] = await eventsOf(s.sql, s.projectId, "Error: Payment declined for order 1");
    const [b] = await eventsOf(s.sql, s.projectId, "Error: Payment gateway timed out");
    expect(a.group_id).toBe(b.group_id);
    expect(Number(a.group_count)).toBe(2);
  });

  it("accepts an event over 32 KiB, which the SDK gzips", async () => {
    const before = s.proxy.exchanges.length;
    Sentry.withScope((scope) => {
      scope.setExtra("inventory", "x".repeat(40 * 1024));
      scope.captureMessage("Inventory too large to save");
    });
    expect(await Sentry.flush(10_000)).toBe(true);
    const sent = s.proxy.exchanges.slice(before);
    expect(sent.some((x) => x.headers["content-encoding"] === "gzip" && x.status === 200)).toBe(true);
    const [e] = await eventsOf(s.sql, s.projectId, "Inventory too large to save");
    expect(e).toBeDefined();
    // the context keeps to its 16 KiB limit by leaving out the oversized part, and says so
    expect(e.context._dropped).toContain("extra");
    expect(e.context.sdk.name).toBe("sentry.javascript.node");
  });
});

describe("@sentry/node and a server refusing for load", () => {
  let s: Setup;
  beforeAll(async () => {
    // a backlog of one event is already too many here
    s = await setup({ SENTRY_MAX_PENDING_EVENTS: "1" });
    init(s.dsn);
  });
  afterAll(() => teardown(s));

  it("answers 429 with Retry-After and X-Sentry-Rate-Limits, and the SDK stops sending", async () => {
    const { apiKey } = await createApiKey(s.app.sql, s.projectId, "native");

    // hold the project row so a native event creating a group waits: a real backlog of one event
    const holder = await s.sql.reserve();
    await holder`begin`;
    await holder`select id from projects where id = ${s.projectId} for update`;
    const blocked = fetch(`${s.app.url}/api/ingest`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey },
      body: JSON.stringify({ message: "native event behind a lock" }),
    });
    for (let i = 0; i < 200 && s.app.services.writer.pendingEvents < 1; i++) await new Promise((r) => setTimeout(r, 25));
    expect(s.app.services.writer.pendingEvents).toBe(1);

    Sentry.captureMessage("refused while busy");
    await Sentry.flush(10_000);
    const refused = s.proxy.exchanges.filter((x) => x.status === 429);
    expect(refused).toHaveLength(1);
    expect(Number(refused[0].responseHeaders["retry-after"])).toBeGreaterThan(0);
    expect(refused[0].responseHeaders["x-sentry-rate-limits"]).toMatch(/^\d+::/);

    await holder`commit`;
    holder.release();
    expect((await blocked).status).toBe(200);
    expect(s.app.services.writer.pendingEvents).toBe(0);

    // the server would accept now, but the SDK honours the limit and does not send at all
    const before = s.proxy.exchanges.length;
    Sentry.captureMessage("dropped by the SDK while limited");
    await Sentry.flush(5_000);
    expect(s.proxy.exchanges.length).toBe(before);
    const [{ n }] = await s.sql<{ n: number }[]>`
      select count(*)::int as n from events where project_id = ${s.projectId} and message like '%while%'`;
    expect(n).toBe(0);
  });
});

describe("@sentry/node and a DSN key over its rate limit", () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setup();
    const limited = await call(s.app, "PATCH", `/api/team/projects/${s.projectId}/dsn-keys/${s.keyId}`, { cookie: s.cookie, body: { rate_limit_per_minute: 2 } });
    expect(limited.status).toBe(200);
    init(s.dsn);
  });
  afterAll(() => teardown(s));

  it("gets 429 with Retry-After and X-Sentry-Rate-Limits past the key's events per minute, and stops sending", async () => {
    // the limit counts PostgreSQL's clock minutes: start with enough of one left for the whole test
    const [{ left }] = await s.sql<{ left: number }[]>`select 60 - extract(second from now())::float8 as left`;
    if (left < 20) await new Promise((r) => setTimeout(r, left * 1000 + 200));
    for (const m of ["first within the limit", "second within the limit", "third, past the limit"]) {
      Sentry.captureMessage(m);
      await Sentry.flush(10_000);
    }
    const statuses = s.proxy.exchanges.filter((x) => x.url.includes("/envelope/")).map((x) => x.status);
    expect(statuses).toEqual([200, 200, 429]);
    const refused = s.proxy.exchanges.find((x) => x.status === 429)!;
    const retry = Number(refused.responseHeaders["retry-after"]);
    expect(retry).toBeGreaterThan(0);
    expect(refused.responseHeaders["x-sentry-rate-limits"]).toBe(`${retry}:error:key:key_quota`);

    // the SDK honours the limit: no event reaches the server for now (its client reports of the
    // events it dropped are not in the limited category and may still be sent)
    const before = s.proxy.exchanges.length;
    Sentry.captureMessage("dropped by the SDK while limited");
    await Sentry.flush(5_000);
    const after = s.proxy.exchanges.slice(before);
    expect(after.filter((x) => /"type":"event"/.test(x.body.toString("utf8")))).toEqual([]);
    const stored = await s.sql<{ message: string }[]>`select message from events where project_id = ${s.projectId} order by id`;
    expect(stored.map((e) => e.message)).toEqual(["first within the limit", "second within the limit"]);
  });
});
