import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { countersApplied } from "../support/counters.js";

let app: TestApp;
let owner: { id: string; email: string; cookie: string };

beforeAll(async () => {
  app = await startTestApp();
  owner = { ...(await makeUser(app.sql, "studio-lead@projects.test")), cookie: "" };
  owner.cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

describe("projects", () => {
  it("creates a project owned by the caller, with a first key shown once that ingests", async () => {
    const r = await call(app, "POST", "/api/team/projects", { cookie: owner.cookie, body: { name: "  Obby Tycoon " } });
    expect(r.status).toBe(201);
    expect(r.body.project).toMatchObject({ name: "Obby Tycoon", role: "owner" });
    expect(r.body.api_key).toMatch(/^rbx_[A-Za-z0-9_-]{32}$/);
    const [stored] = await app.sql`select key_hash, prefix from api_keys where id = ${r.body.key_id}`;
    expect(Buffer.from(stored.key_hash).toString()).not.toContain(r.body.api_key);
    expect(r.body.api_key.startsWith(stored.prefix)).toBe(true);
    await ingest(app, r.body.api_key, { message: "first error" });
    const one = await call(app, "GET", `/api/team/projects/${r.body.project.id}`, { cookie: owner.cookie });
    expect(one.body.project).toMatchObject({ id: r.body.project.id, name: "Obby Tycoon", role: "owner" });
  });

  it("validates the name", async () => {
    for (const body of [{}, { name: "" }, { name: "   " }, { name: "x".repeat(201) }, { name: 5 }]) {
      const r = await call(app, "POST", "/api/team/projects", { cookie: owner.cookie, body });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", details: [{ path: "name" }] });
    }
  });

  it("renames and answers 405 for methods a route does not have", async () => {
    const { projectId } = await makeProject(app.sql, owner.id);
    const r = await call(app, "PATCH", `/api/team/projects/${projectId}`, { cookie: owner.cookie, body: { name: "Renamed" } });
    expect(r.body.project.name).toBe("Renamed");
    const put = await call(app, "PUT", `/api/team/projects/${projectId}`, { cookie: owner.cookie, body: {} });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("GET, PATCH, DELETE");
  });

  it("deletes a project with all its rows, including those of the tables without foreign keys", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const other = await makeProject(app.sql, owner.id, [], "Keeps its data");
    const events = [
      { message: "boom", user_id: 7, trace_id: "{6F9619FF-8B86-D011-B42D-00CF4FC964FF}" },
      { message: "bang", user_id: 8, level: "warn", game_version: "12" },
    ];
    await ingest(app, apiKey, { errors: events });
    await ingest(app, other.apiKey, { errors: events });
    await countersApplied(app.sql);
    const r = await call(app, "DELETE", `/api/team/projects/${projectId}`, { cookie: owner.cookie });
    expect(r.status).toBe(200);
    for (const table of ["projects", "api_keys", "project_members", "error_groups", "events", "group_users", "group_environments", "group_versions", "project_users", "traces", "rollup_minute", "rollup_hour", "share_links"]) {
      const col = table === "projects" ? "id" : "project_id";
      const [{ n }] = await app.sql`select count(*)::int as n from ${app.sql(table)} where ${app.sql(col)} = ${projectId}`;
      expect(n, table).toBe(0);
      if (!["project_members", "share_links"].includes(table)) {
        const [{ m }] = await app.sql`select count(*)::int as m from ${app.sql(table)} where ${app.sql(col)} = ${other.projectId}`;
        expect(m, `${table} of the other project`).toBeGreaterThan(0);
      }
    }
    // its key stops working at once
    const after = await call(app, "POST", "/api/ingest", { body: { message: "late" }, headers: { "x-api-key": apiKey } });
    expect(after.status).toBe(401);
    expect((await call(app, "GET", `/api/team/projects/${projectId}`, { cookie: owner.cookie })).status).toBe(404);
  });
});

describe("API keys", () => {
  it("lists (prefix, created, last used; never the key), creates more for rotation, revokes at once", async () => {
    const { projectId, apiKey, keyId } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { message: "uses the key" });
    const created = await call(app, "POST", `/api/team/projects/${projectId}/keys`, { cookie: owner.cookie, body: { name: "rotation" } });
    expect(created.status).toBe(201);
    expect(created.body.api_key).toMatch(/^rbx_/);
    const unnamed = await call(app, "POST", `/api/team/projects/${projectId}/keys`, { cookie: owner.cookie });
    expect(unnamed.status).toBe(201);
    expect(unnamed.body.key.name).toBeNull();
    const list = await call(app, "GET", `/api/team/projects/${projectId}/keys`, { cookie: owner.cookie });
    expect(list.body.data).toHaveLength(3);
    const first = list.body.data.find((k: { id: string }) => k.id === keyId);
    expect(first).toMatchObject({ prefix: apiKey.slice(0, 10), active: true, revoked_at: null });
    expect(first.last_used_at).toEqual(expect.any(String));
    expect(JSON.stringify(list.body)).not.toContain(apiKey);
    expect(JSON.stringify(list.body)).not.toContain("key_hash");

    const revoke = await call(app, "DELETE", `/api/team/projects/${projectId}/keys/${keyId}`, { cookie: owner.cookie });
    expect(revoke.status).toBe(200);
    const old = await call(app, "POST", "/api/ingest", { body: { message: "x" }, headers: { "x-api-key": apiKey } });
    expect(old.status).toBe(401);
    await ingest(app, created.body.api_key, { message: "the new key works" });
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/keys/${keyId}`, { cookie: owner.cookie })).status).toBe(404);
  });

  it("cannot revoke another project's key through this project", async () => {
    const a = await makeProject(app.sql, owner.id);
    const b = await makeProject(app.sql, owner.id);
    const r = await call(app, "DELETE", `/api/team/projects/${a.projectId}/keys/${b.keyId}`, { cookie: owner.cookie });
    expect(r.status).toBe(404);
    await ingest(app, b.apiKey, { message: "still fine" });
  });
});

describe("members", () => {
  it("adds an existing user by email (case-insensitive), lists, changes role, removes", async () => {
    const { projectId } = await makeProject(app.sql, owner.id);
    const mate = await makeUser(app.sql, "mate@projects.test");
    const add = await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: "MATE@projects.test", role: "admin" } });
    expect(add.status).toBe(201);
    expect(add.body.member).toMatchObject({ user_id: mate.id, email: "mate@projects.test", role: "admin" });
    expect(add.body.temporary_password).toBeUndefined();
    const again = await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: mate.email } });
    expect(again.status).toBe(409);
    const list = await call(app, "GET", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie });
    expect(list.body.data.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      [owner.email, "owner"],
      ["mate@projects.test", "admin"],
    ]);
    const demote = await call(app, "PATCH", `/api/team/projects/${projectId}/members/${mate.id}`, { cookie: owner.cookie, body: { role: "member" } });
    expect(demote.body.member.role).toBe("member");
    const bad = await call(app, "PATCH", `/api/team/projects/${projectId}/members/${mate.id}`, { cookie: owner.cookie, body: { role: "god" } });
    expect(bad.status).toBe(400);
    const remove = await call(app, "DELETE", `/api/team/projects/${projectId}/members/${mate.id}`, { cookie: owner.cookie });
    expect(remove.status).toBe(200);
    const mateCookie = await login(app, mate.email);
    expect((await call(app, "GET", `/api/team/projects/${projectId}`, { cookie: mateCookie })).status).toBe(404);
  });

  it("creates an account for an unknown email with a temporary password shown once", async () => {
    const { projectId } = await makeProject(app.sql, owner.id);
    const add = await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: "contractor@projects.test" } });
    expect(add.status).toBe(201);
    expect(add.body.member.role).toBe("member");
    expect(add.body.temporary_password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    const cookie = await login(app, "contractor@projects.test", add.body.temporary_password);
    // the temporary password must be replaced before the project opens
    expect((await call(app, "GET", `/api/team/projects/${projectId}`, { cookie })).status).toBe(403);
    const changed = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: add.body.temporary_password, new_password: "the contractor's own" } });
    expect(changed.status).toBe(200);
    expect((await call(app, "GET", `/api/team/projects/${projectId}`, { cookie })).status).toBe(200);
  });

  it("keeps at least one owner", async () => {
    const { projectId } = await makeProject(app.sql, owner.id);
    const leave = await call(app, "DELETE", `/api/team/projects/${projectId}/members/${owner.id}`, { cookie: owner.cookie });
    expect(leave.status).toBe(409);
    expect(leave.body.error).toBe("conflict");
    const demote = await call(app, "PATCH", `/api/team/projects/${projectId}/members/${owner.id}`, { cookie: owner.cookie, body: { role: "admin" } });
    expect(demote.status).toBe(409);
    // with a second owner, the first may step down
    const second = await makeUser(app.sql);
    await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: second.email, role: "owner" } });
    const now = await call(app, "PATCH", `/api/team/projects/${projectId}/members/${owner.id}`, { cookie: owner.cookie, body: { role: "admin" } });
    expect(now.status).toBe(200);
  });

  it("lets a member leave a project", async () => {
    const m = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id, [{ userId: m.id, role: "member" }]);
    const cookie = await login(app, m.email);
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/members/${m.id}`, { cookie })).status).toBe(200);
    expect((await call(app, "GET", `/api/team/projects/${projectId}`, { cookie })).status).toBe(404);
  });
});

describe("group status and delete", () => {
  it("resolves (stamps resolved_at), ignores and reopens (clears it)", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { message: "status me" });
    const [{ id }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
    const url = `/api/team/projects/${projectId}/groups/${id}`;
    const resolved = await call(app, "PATCH", url, { cookie: owner.cookie, body: { status: "resolved" } });
    expect(resolved.body.group).toMatchObject({ id, status: "resolved", resolved_at: expect.any(String) });
    const again = await call(app, "PATCH", url, { cookie: owner.cookie, body: { status: "resolved" } });
    expect(again.body.group.resolved_at).toBe(resolved.body.group.resolved_at);
    const ignored = await call(app, "PATCH", url, { cookie: owner.cookie, body: { status: "ignored" } });
    expect(ignored.body.group).toMatchObject({ status: "ignored", resolved_at: null });
    const open = await call(app, "PATCH", url, { cookie: owner.cookie, body: { status: "open" } });
    expect(open.body.group).toMatchObject({ status: "open", resolved_at: null });
    const bad = await call(app, "PATCH", url, { cookie: owner.cookie, body: { status: "closed" } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("status");
  });

  it("bulk-updates the project's groups and skips ids of other projects", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const other = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: [{ message: "one" }, { message: "two" }, { message: "three" }] });
    await ingest(app, other.apiKey, { message: "foreign" });
    const ids = (await app.sql`select id from error_groups where project_id = ${projectId} order by id`).map((r) => r.id);
    const [{ id: foreign }] = await app.sql`select id from error_groups where project_id = ${other.projectId}`;
    const r = await call(app, "POST", `/api/team/projects/${projectId}/groups/status`, {
      cookie: owner.cookie,
      body: { ids: [...ids.slice(0, 2), foreign], status: "ignored" },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: 2, ids: ids.slice(0, 2).sort(), status: "ignored" });
    const [{ status }] = await app.sql`select status from error_groups where id = ${foreign}`;
    expect(status).toBe("open");
    for (const body of [{ ids: [], status: "open" }, { ids: ["x"], status: "open" }, { ids, status: "nope" }, { ids: Array(101).fill(ids[0]), status: "open" }]) {
      expect((await call(app, "POST", `/api/team/projects/${projectId}/groups/status`, { cookie: owner.cookie, body })).status).toBe(400);
    }
  });

  it("deletes a group with its events, users and rollups; traces keep their other groups", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const shared = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
    const solo = "2b4e28ba-2fa1-11d2-883f-0016d3cca427";
    await ingest(app, apiKey, {
      errors: [
        { message: "doomed", user_id: 1, trace_id: shared, game_version: "3" },
        { message: "doomed", user_id: 2, trace_id: solo },
        { message: "survivor", user_id: 3, trace_id: shared },
      ],
    });
    const [doomed] = await app.sql`select id from error_groups where project_id = ${projectId} and message = 'doomed'`;
    const [survivor] = await app.sql`select id from error_groups where project_id = ${projectId} and message = 'survivor'`;
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie: owner.cookie, body: { group_id: doomed.id, role: "viewer" } });
    const r = await call(app, "DELETE", `/api/team/projects/${projectId}/groups/${doomed.id}`, { cookie: owner.cookie });
    expect(r.status).toBe(200);
    for (const table of ["error_groups", "events", "group_users", "group_environments", "group_versions", "rollup_minute", "rollup_hour", "share_links"]) {
      const col = table === "error_groups" ? "id" : "group_id";
      const [{ n }] = await app.sql`select count(*)::int as n from ${app.sql(table)} where project_id = ${projectId} and ${app.sql(col)} = ${doomed.id}`;
      expect(n, table).toBe(0);
    }
    const traces = await app.sql`select trace_id, event_count, group_ids from traces where project_id = ${projectId} order by trace_id`;
    expect(traces).toEqual([{ trace_id: shared, event_count: 1, group_ids: [survivor.id] }]);
    const [{ n }] = await app.sql`select count(*)::int as n from events where project_id = ${projectId} and group_id = ${survivor.id}`;
    expect(n).toBe(1);
    expect((await call(app, "GET", `/api/share/${link.body.token}`)).status).toBe(404);
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/groups/${doomed.id}`, { cookie: owner.cookie })).status).toBe(404);
    // the same error again starts a new group
    await ingest(app, apiKey, { message: "doomed" });
    const [again] = await app.sql`select id, count from error_groups where project_id = ${projectId} and message = 'doomed'`;
    expect(again.id).not.toBe(doomed.id);
    expect(again.count).toBe(1);
  });
});
