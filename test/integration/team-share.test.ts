import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

let app: TestApp;
let cookie: string;
let projectId: string;
let groupId: string;
let addr = 0;
// every request from its own address unless a test is about the per-address limit
const fresh = () => ({ "x-forwarded-for": `10.9.${Math.floor(++addr / 250)}.${addr % 250}` });

const share = (token: string, headers = fresh()) => call(app, "GET", `/api/share/${token}`, { headers });
const setStatus = (token: string, body: unknown, headers = fresh()) => call(app, "POST", `/api/share/${token}`, { body, headers });
const create = async (body: Record<string, unknown>) => {
  const r = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, ...body } });
  expect(r.status).toBe(201);
  return r.body;
};

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "1", SHARE_RATE_LIMIT: "5", SHARE_RATE_WINDOW_SECONDS: "600" });
  const u = await makeUser(app.sql);
  let apiKey: string;
  ({ projectId, apiKey } = await makeProject(app.sql, u.id));
  cookie = await login(app, u.email);
  await ingest(app, apiKey, {
    errors: [
      { message: "Data store budget exceeded", user_id: 123456789, player_name: "builderman", context: { shop: "gems" }, tags: ["economy"], trace_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7" },
      { message: "Data store budget exceeded", user_id: 987654321, player_name: "Shedletsky", count: 4 },
    ],
  });
  [{ id: groupId }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
});
afterAll(() => app?.close());

describe("share links (Team API)", () => {
  it("creates a link whose token is shown once and stored hashed, with a URL to the share page", async () => {
    const link = await create({ role: "viewer", expires_in_days: 7 });
    expect(link).toMatchObject({ id: expect.any(String), role: "viewer", group_id: groupId, active: true });
    expect(link.token).toMatch(/^shr_[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`${app.url}/share/${link.token}`);
    const days = (new Date(link.expires_at).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    const [row] = await app.sql`select token_hash from share_links where id = ${link.id}`;
    expect(Buffer.from(row.token_hash).toString("utf8")).not.toContain(link.token);
    const list = await call(app, "GET", `/api/team/projects/${projectId}/share-links?group_id=${groupId}`, { cookie });
    const listed = list.body.data.find((l: { id: string }) => l.id === link.id);
    expect(listed).toMatchObject({ role: "viewer", active: true, revoked_at: null });
    expect(JSON.stringify(list.body)).not.toContain(link.token);
  });

  it("validates the body, and refuses a group of another project with 404", async () => {
    for (const body of [{ role: "owner" }, { role: "viewer", expires_in_days: 0 }, { role: "viewer", expires_in_days: 1.5 }, { role: "viewer", group_id: "x" }]) {
      const r = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, ...body } });
      expect(r.status).toBe(400);
    }
    const r = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, {
      cookie,
      body: { group_id: "00000000-0000-4000-8000-000000000000", role: "viewer" },
    });
    expect(r.status).toBe(404);
  });
});

describe("GET /api/share/:token", () => {
  it("answers {role, expires_at, group, events, series} without user ids or player names", async () => {
    const link = await create({ role: "viewer" });
    const r = await share(link.token);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["events", "expires_at", "group", "role", "series"]);
    expect(r.body.role).toBe("viewer");
    expect(r.body.expires_at).toBeNull();
    expect(r.body.group).toMatchObject({ id: groupId, message: "Data store budget exceeded", status: "open", count: 5, user_count: 2 });
    expect(r.body.events).toHaveLength(2);
    expect(r.body.events[0]).toMatchObject({ message: "Data store budget exceeded" });
    // free-form context, job and trace ids are not shared (they can lead back to a player)
    for (const e of r.body.events) for (const k of ["context", "job_id", "trace_id"]) expect(e).not.toHaveProperty(k);
    expect(r.body.events.some((e: { tags: string[] | null }) => e.tags?.includes("economy"))).toBe(true);
    expect(r.body.series).toHaveLength(168);
    expect(r.body.series.reduce((n: number, s: { count: number }) => n + s.count, 0)).toBe(5);
    const text = JSON.stringify(r.body);
    for (const secret of ["user_id", "player_name", "123456789", "987654321", "builderman", "Shedletsky", "fingerprint", "project_id"]) {
      expect(text, secret).not.toContain(secret);
    }
  });

  it("answers the same 404 for unknown, revoked and expired tokens", async () => {
    const revoked = await create({ role: "editor" });
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/share-links/${revoked.id}`, { cookie })).status).toBe(200);
    const expired = await create({ role: "editor", expires_in_days: 1 });
    await app.sql`update share_links set expires_at = now() - interval '1 second' where id = ${expired.id}`;
    const bodies = [];
    for (const token of ["shr_unknown", revoked.token, expired.token, "x".repeat(300)]) {
      const get = await share(token);
      expect(get.status, token).toBe(404);
      bodies.push(get.body);
      const post = await setStatus(token, { status: "resolved" });
      expect(post.status).toBe(404);
      bodies.push(post.body);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(bodies[0].error).toBe("not_found");
    const [{ status }] = await app.sql`select status from error_groups where id = ${groupId}`;
    expect(status).toBe("open");
  });
});

describe("POST /api/share/:token", () => {
  it("lets an editor change the status", async () => {
    const link = await create({ role: "editor" });
    const r = await setStatus(link.token, { status: "resolved" });
    expect(r.status).toBe(200);
    expect(r.body.group).toMatchObject({ id: groupId, status: "resolved", resolved_at: expect.any(String) });
    expect(JSON.stringify(r.body)).not.toContain("user_id");
    expect((await share(link.token)).body.group.status).toBe("resolved");
    expect((await setStatus(link.token, { status: "open" })).body.group).toMatchObject({ status: "open", resolved_at: null });
  });

  it("refuses a viewer with 403 and a bad status with 400", async () => {
    const viewer = await create({ role: "viewer" });
    const r = await setStatus(viewer.token, { status: "resolved" });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("forbidden");
    const editor = await create({ role: "editor" });
    const bad = await setStatus(editor.token, { status: "fixed" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid_payload");
    const notJson = await call(app, "POST", `/api/share/${editor.token}`, { body: "status=resolved", headers: { ...fresh(), "content-type": "application/x-www-form-urlencoded" } });
    expect(notJson.status).toBe(415);
    const [{ status }] = await app.sql`select status from error_groups where id = ${groupId}`;
    expect(status).toBe("open");
  });
});

describe("share rate limit per client address", () => {
  it("answers 429 with Retry-After past SHARE_RATE_LIMIT requests in the window, for good and bad tokens alike", async () => {
    const link = await create({ role: "viewer" });
    const me = { "x-forwarded-for": "203.0.113.7" };
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await share(i % 2 ? "shr_guess" + i : link.token, me)).status);
    expect(statuses).toEqual([200, 404, 200, 404, 200]);
    const limited = await share(link.token, me);
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await setStatus(link.token, { status: "open" }, me)).status).toBe(429);
    // another address is not affected
    expect((await share(link.token, { "x-forwarded-for": "203.0.113.8" })).status).toBe(200);
  });
});

describe("a removed member's share links", () => {
  it("stop working with the membership (removed or leaving); other members' links stay", async () => {
    const owner = await makeUser(app.sql);
    const gone = await makeUser(app.sql);
    const leaver = await makeUser(app.sql);
    const p = await makeProject(app.sql, owner.id, [
      { userId: gone.id, role: "member" },
      { userId: leaver.id, role: "admin" },
    ]);
    await ingest(app, p.apiKey, { message: "Shop timeout" });
    const [{ id: gid }] = await app.sql`select id from error_groups where project_id = ${p.projectId}`;
    const linkOf = async (cookie: string) => {
      const r = await call(app, "POST", `/api/team/projects/${p.projectId}/share-links`, { cookie, body: { group_id: gid, role: "editor" } });
      expect(r.status).toBe(201);
      return r.body as { id: string; token: string };
    };
    const [ownerCookie, goneCookie, leaverCookie] = [await login(app, owner.email), await login(app, gone.email), await login(app, leaver.email)];
    const [ownerLink, goneLink, leaverLink] = [await linkOf(ownerCookie), await linkOf(goneCookie), await linkOf(leaverCookie)];
    for (const l of [ownerLink, goneLink, leaverLink]) expect((await share(l.token)).status).toBe(200);

    expect((await call(app, "DELETE", `/api/team/projects/${p.projectId}/members/${gone.id}`, { cookie: ownerCookie })).status).toBe(200);
    expect((await call(app, "DELETE", `/api/team/projects/${p.projectId}/members/${leaver.id}`, { cookie: leaverCookie })).status).toBe(200);

    expect((await share(goneLink.token)).status).toBe(404);
    expect((await setStatus(leaverLink.token, { status: "resolved" })).status).toBe(404);
    expect((await share(ownerLink.token)).status).toBe(200);
    const list = await call(app, "GET", `/api/team/projects/${p.projectId}/share-links`, { cookie: ownerCookie });
    const active = Object.fromEntries(list.body.data.map((l: { id: string; active: boolean }) => [l.id, l.active]));
    expect(active).toEqual({ [ownerLink.id]: true, [goneLink.id]: false, [leaverLink.id]: false });
  });
});
