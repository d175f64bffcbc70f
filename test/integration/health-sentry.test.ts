import * as Sentry from "@sentry/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson, parseJsonText, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

/**
 * Sentry release health as player sessions: Relay's `session` and `sessions` payloads as documented
 * (https://develop.sentry.dev/sdk/telemetry/sessions/), and the real @sentry/node client's session.
 */
let app: TestApp;
let cookie: string;
let ownerId: string;

type Project = { projectId: string; apiKey: string; dsnId: string; publicKey: string; dsn: string };

async function project(): Promise<Project> {
  const { projectId, apiKey } = await makeProject(app.sql, ownerId);
  const r = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
  expect(r.status).toBe(201);
  const dsnId = String(r.body.dsn).split("/").pop()!;
  return { projectId, apiKey, dsnId, publicKey: r.body.public_key, dsn: r.body.dsn };
}

function envelope(header: Record<string, unknown>, items: { type: string; payload: unknown }[]): Buffer {
  const parts = [JSON.stringify(header)];
  for (const it of items) parts.push(JSON.stringify({ type: it.type }), JSON.stringify(it.payload));
  return Buffer.from(parts.join("\n") + "\n");
}

async function send(p: Project, body: Buffer) {
  const res = await app.request(`/api/${p.dsnId}/envelope/?sentry_key=${p.publicKey}`, {
    method: "POST",
    headers: { "content-type": "application/x-sentry-envelope" },
    body: new Uint8Array(body),
  });
  return { status: res.status, body: parseJsonText(await res.text()) };
}

const sessionsOf = (projectId: string) =>
  app.sql<any[]>`
    select session_id, user_id::text, place_version, environment, ended_at is not null as ended, exit_reason, errors_client, crashed
    from health_sessions where project_id = ${projectId} order by session_id`;

const healthOf = async (p: Project, version: string) =>
  (await getJson(app, "/api/v1/releases", p.apiKey)).body.data.find((r: any) => r.version === version)?.health;

beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ownerId = owner.id;
  cookie = await login(app, owner.email);
});
afterAll(async () => {
  await Sentry.close(2000);
  await app?.close();
});

describe("Sentry session items", () => {
  it("maps a session's updates forward, and aggregates into ended sessions counted once per envelope", async () => {
    const p = await project();
    const started = new Date(Date.now() - 30 * 60_000).toISOString();
    const attrs = { release: "77", environment: "production" };
    const sid = "fd14c1d4-1c4e-4d0b-9e2f-2d9c5c5c5c5c";
    const open = { sid, did: "261", init: true, started, timestamp: started, status: "ok", errors: 0, attrs };
    const crashed = { sid: "0e0e0e0e-1c4e-4d0b-9e2f-2d9c5c5c5c5c", did: "262", started, status: "crashed", errors: 1, duration: 60, attrs };
    const aggregates = {
      attrs,
      aggregates: [{ started: started.slice(0, 16) + ":00Z", exited: 3, errored: 1, abnormal: 1 }],
    };
    expect((await send(p, envelope({ sent_at: started }, [{ type: "session", payload: open }]))).status).toBe(200);
    const body = envelope({ sent_at: new Date().toISOString() }, [
      { type: "session", payload: { ...open, init: false, status: "exited", duration: 120, errors: 0 } },
      { type: "session", payload: crashed },
      { type: "sessions", payload: aggregates },
      // dropped: no release; a status Relay does not know
      { type: "session", payload: { sid: "x1", started, status: "exited" } },
      { type: "session", payload: { sid: "x2", started, status: "teleported", attrs } },
    ]);
    expect((await send(p, body)).status).toBe(200);
    // a resent envelope (the SDK's retry) counts nothing twice
    expect((await send(p, body)).status).toBe(200);

    const rows = await sessionsOf(p.projectId);
    expect(rows).toHaveLength(7);
    const own = rows.find((r) => r.session_id === `sentry:${sid}`);
    expect(own).toMatchObject({ user_id: "261", place_version: "77", environment: "production", ended: true, exit_reason: "Exited", errors_client: 0, crashed: false });
    expect(rows.find((r) => r.user_id === "262")).toMatchObject({ ended: true, exit_reason: "Crashed", crashed: true });
    expect(rows.filter((r) => r.session_id.startsWith("sentry-aggregate:")).map((r) => r.exit_reason).sort()).toEqual(
      ["Abnormal", "Errored", "Exited", "Exited", "Exited"],
    );
    const h = await healthOf(p, "77");
    // 7 ended: 1 + 3 exited error-free; crashed, errored, abnormal not
    expect(h.sessions).toEqual({ open: 0, ended: 7, error_free: 4, error_free_rate: 4 / 7 });
    expect(h.players).toMatchObject({ distinct: 2, error_free: 1, error_free_rate: 0.5 });
    expect(h.servers).toEqual({ live: 0, started: 0, ended: 0, abnormal: 0, out_of_memory: 0 });
  });

  it("the real @sentry/node client's session (startSession, captureException, endSession)", async () => {
    const p = await project();
    Sentry.init({ dsn: p.dsn, defaultIntegrations: false, release: "78", environment: "production" });
    Sentry.setUser({ id: "300" });
    Sentry.startSession();
    Sentry.captureSession();
    Sentry.captureException(new Error("shop failed"));
    Sentry.endSession();
    expect(await Sentry.flush(10_000)).toBe(true);
    const rows = await sessionsOf(p.projectId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ user_id: "300", place_version: "78", environment: "production", ended: true, exit_reason: "Exited", crashed: false });
    expect(rows[0].errors_client).toBeGreaterThanOrEqual(1);
    const h = await healthOf(p, "78");
    expect(h.sessions).toMatchObject({ ended: 1, error_free: 0 });
  });
});
