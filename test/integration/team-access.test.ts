import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * The authorization matrix of every project-scoped Team API route: without a session 401; a user
 * of another project 404 (the project does not exist for them); a member 403 on owner/admin
 * actions; an admin 403 on owner-only actions. Nothing is changed by a refused request.
 */
let app: TestApp;
let projectId: string;
let keyId: string;
let groupId: string;
let linkId: string;
let channelId: string;
let ruleId: string;
let commentId: string;
const users: Record<"owner" | "admin" | "member" | "outsider", { id: string; email: string; cookie: string }> = {} as never;

type Need = "any" | "manager" | "owner";
type Route = { method: string; path: () => string; body?: () => unknown; need: Need };

const P = () => `/api/team/projects/${projectId}`;
const routes: Route[] = [
  { method: "GET", path: P, need: "any" },
  { method: "PATCH", path: P, body: () => ({ name: "Changed" }), need: "manager" },
  { method: "DELETE", path: P, need: "owner" },
  { method: "GET", path: () => `${P()}/keys`, need: "manager" },
  { method: "POST", path: () => `${P()}/keys`, body: () => ({ name: "rotation" }), need: "manager" },
  { method: "DELETE", path: () => `${P()}/keys/${keyId}`, need: "manager" },
  { method: "GET", path: () => `${P()}/members`, need: "any" },
  { method: "POST", path: () => `${P()}/members`, body: () => ({ email: "new-teammate@example.test", role: "member" }), need: "manager" },
  { method: "PATCH", path: () => `${P()}/members/${users.admin.id}`, body: () => ({ role: "member" }), need: "manager" },
  { method: "DELETE", path: () => `${P()}/members/${users.admin.id}`, need: "manager" },
  { method: "PATCH", path: () => `${P()}/groups/${groupId}`, body: () => ({ status: "ignored" }), need: "any" },
  { method: "POST", path: () => `${P()}/groups/status`, body: () => ({ ids: [groupId], status: "ignored" }), need: "any" },
  { method: "DELETE", path: () => `${P()}/groups/${groupId}`, need: "manager" },
  { method: "GET", path: () => `${P()}/share-links`, need: "any" },
  { method: "POST", path: () => `${P()}/share-links`, body: () => ({ group_id: groupId, role: "viewer" }), need: "any" },
  // a member may revoke only links they made; this one is the owner's
  { method: "DELETE", path: () => `${P()}/share-links/${linkId}`, need: "manager" },
  { method: "GET", path: () => `${P()}/two-factor`, need: "any" },
  { method: "PUT", path: () => `${P()}/two-factor`, body: () => ({ two_factor_required: "owners_admins" }), need: "manager" },
  // alert channels (email among the kinds) and rules (edited with the create schema)
  { method: "GET", path: () => `${P()}/channels`, need: "any" },
  { method: "POST", path: () => `${P()}/channels`, body: () => ({ name: "Email", kind: "email", recipients: ["oncall@example.test"] }), need: "manager" },
  { method: "PATCH", path: () => `${P()}/channels/${channelId}`, body: () => ({ enabled: false }), need: "manager" },
  { method: "GET", path: () => `${P()}/rules`, need: "any" },
  { method: "POST", path: () => `${P()}/rules`, body: () => ({ name: "Another", trigger: "regression", channel_ids: [channelId] }), need: "manager" },
  { method: "PATCH", path: () => `${P()}/rules/${ruleId}`, body: () => ({ name: "Edited", trigger: "frequency", threshold_count: 5, window_minutes: 5, environments: ["production"], channel_ids: [channelId] }), need: "manager" },
  { method: "GET", path: () => `${P()}/deliveries`, need: "any" },
  { method: "PATCH", path: () => `${P()}/groups/${groupId}`, body: () => ({ assignee_id: users.member.id }), need: "any" },
  { method: "POST", path: () => `${P()}/groups/assign`, body: () => ({ ids: [groupId], assignee_id: users.member.id }), need: "any" },
  { method: "GET", path: () => `${P()}/groups/${groupId}/activity`, need: "any" },
  { method: "GET", path: () => `${P()}/groups/${groupId}/comments`, need: "any" },
  { method: "POST", path: () => `${P()}/groups/${groupId}/comments`, body: () => ({ body: "a note" }), need: "any" },
  // this comment is the owner's: only its author edits it (so admins and members get 403, as on owner-only routes)
  { method: "PATCH", path: () => `${P()}/groups/${groupId}/comments/${commentId}`, body: () => ({ body: "edited" }), need: "owner" },
  // its author, an owner or an admin deletes it
  { method: "DELETE", path: () => `${P()}/groups/${groupId}/comments/${commentId}`, need: "manager" },
  { method: "GET", path: () => `${P()}/audit`, need: "manager" },
  { method: "GET", path: () => `${P()}/audit?format=csv`, need: "manager" },
];
const label = (r: Route) => `${r.method} ${r.path().replace(/[0-9a-f-]{36}/g, ":id")}`;

async function snapshot() {
  const [project] = await app.sql`select name, two_factor_required from projects where id = ${projectId}`;
  const keys = await app.sql`select id, revoked_at from api_keys where project_id = ${projectId} order by id`;
  const members = await app.sql`select user_id, role from project_members where project_id = ${projectId} order by user_id`;
  const groups = await app.sql`select id, status, assignee_id from error_groups where project_id = ${projectId} order by id`;
  const comments = await app.sql`select id, body from issue_comments where project_id = ${projectId} order by id`;
  const links = await app.sql`select id, revoked_at from share_links where project_id = ${projectId} order by id`;
  const events = await app.sql`select count(*)::int as n from events where project_id = ${projectId}`;
  const channels = await app.sql`select id, name, enabled, recipients from alert_channels where project_id = ${projectId} order by id`;
  const rules = await app.sql`select id, name, trigger, environments, updated_at from alert_rules where project_id = ${projectId} order by id`;
  return JSON.stringify({ project, keys, members, groups, links, events, channels, rules, comments });
}

beforeAll(async () => {
  app = await startTestApp();
  for (const who of ["owner", "admin", "member", "outsider"] as const) {
    const u = await makeUser(app.sql, `${who}@access.test`);
    users[who] = { ...u, cookie: "" };
  }
  let apiKey: string;
  ({ projectId, keyId, apiKey } = await makeProject(app.sql, users.owner.id, [
    { userId: users.admin.id, role: "admin" },
    { userId: users.member.id, role: "member" },
  ]));
  await makeProject(app.sql, users.outsider.id, [], "Other Game");
  for (const who of Object.keys(users) as (keyof typeof users)[]) users[who].cookie = await login(app, users[who].email);
  await ingest(app, apiKey, { message: "Workspace.Gun:12: attempt to index nil", user_id: 1 });
  [{ id: groupId }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
  const link = await call(app, "POST", `${P()}/share-links`, { cookie: users.owner.cookie, body: { group_id: groupId, role: "viewer" } });
  expect(link.status).toBe(201);
  linkId = link.body.id;
  const channel = await call(app, "POST", `${P()}/channels`, { cookie: users.owner.cookie, body: { name: "Discord", kind: "discord", url: "https://discord.com/api/webhooks/1/token" } });
  expect(channel.status).toBe(201);
  channelId = channel.body.channel.id;
  const rule = await call(app, "POST", `${P()}/rules`, { cookie: users.owner.cookie, body: { name: "New", trigger: "new_group", channel_ids: [channelId] } });
  expect(rule.status).toBe(201);
  ruleId = rule.body.rule.id;
  const comment = await call(app, "POST", `${P()}/groups/${groupId}/comments`, { cookie: users.owner.cookie, body: { body: "owner's note" } });
  expect(comment.status).toBe(201);
  commentId = comment.body.comment.id;
});
afterAll(() => app?.close());

describe("every project-scoped Team API route", () => {
  it("answers 401 without a session, or with a made-up cookie", async () => {
    const before = await snapshot();
    for (const r of routes) {
      for (const cookie of [undefined, "rm_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]) {
        const res = await call(app, r.method, r.path(), { cookie, body: r.body?.() });
        expect(res.status, label(r)).toBe(401);
        expect(res.body.error, label(r)).toBe("unauthorized");
      }
    }
    expect(await snapshot()).toBe(before);
  });

  it("answers 404 to a signed-in user of another project, exactly as for a project that does not exist", async () => {
    const before = await snapshot();
    for (const r of routes) {
      const res = await call(app, r.method, r.path(), { cookie: users.outsider.cookie, body: r.body?.() });
      expect(res.status, label(r)).toBe(404);
      expect(res.body.error, label(r)).toBe("not_found");
      const missing = await call(app, r.method, r.path().replace(projectId, "00000000-0000-4000-8000-000000000000"), {
        cookie: users.outsider.cookie,
        body: r.body?.(),
      });
      expect(missing.body, label(r)).toEqual(res.body);
    }
    expect(await snapshot()).toBe(before);
  });

  it("answers 403 to a member on owner/admin actions, and changes nothing", async () => {
    const before = await snapshot();
    for (const r of routes.filter((r) => r.need !== "any")) {
      const res = await call(app, r.method, r.path(), { cookie: users.member.cookie, body: r.body?.() });
      expect(res.status, label(r)).toBe(403);
      expect(res.body.error, label(r)).toBe("forbidden");
    }
    expect(await snapshot()).toBe(before);
  });

  it("answers 403 to an admin on owner-only actions", async () => {
    const before = await snapshot();
    for (const r of routes.filter((r) => r.need === "owner")) {
      const res = await call(app, r.method, r.path(), { cookie: users.admin.cookie, body: r.body?.() });
      expect(res.status, label(r)).toBe(403);
    }
    // an admin cannot make or unmake owners either
    const grant = await call(app, "PATCH", `${P()}/members/${users.member.id}`, { cookie: users.admin.cookie, body: { role: "owner" } });
    expect(grant.status).toBe(403);
    const demote = await call(app, "PATCH", `${P()}/members/${users.owner.id}`, { cookie: users.admin.cookie, body: { role: "member" } });
    expect(demote.status).toBe(403);
    const remove = await call(app, "DELETE", `${P()}/members/${users.owner.id}`, { cookie: users.admin.cookie });
    expect(remove.status).toBe(403);
    expect(await snapshot()).toBe(before);
  });

  it("lets a member read and triage", async () => {
    for (const r of routes.filter((r) => r.need === "any" && r.method === "GET")) {
      const res = await call(app, r.method, r.path(), { cookie: users.member.cookie });
      expect(res.status, label(r)).toBe(200);
    }
    const status = await call(app, "PATCH", `${P()}/groups/${groupId}`, { cookie: users.member.cookie, body: { status: "resolved" } });
    expect(status.status).toBe(200);
    expect(status.body.group.status).toBe("resolved");
  });

  it("the instance's audit log: 401 signed out, 403 to anyone not an instance admin, whatever their project role", async () => {
    for (const path of ["/api/team/instance/audit", "/api/team/instance/audit?format=csv"]) {
      expect((await call(app, "GET", path)).status, path).toBe(401);
      for (const who of Object.keys(users) as (keyof typeof users)[]) {
        const res = await call(app, "GET", path, { cookie: users[who].cookie });
        expect(res.status, `${who} ${path}`).toBe(403);
        expect(res.body.error).toBe("forbidden");
      }
    }
    await app.sql`update users set instance_admin = true where id = ${users.member.id}`;
    try {
      expect((await call(app, "GET", "/api/team/instance/audit", { cookie: users.member.cookie })).status).toBe(200);
    } finally {
      await app.sql`update users set instance_admin = false where id = ${users.member.id}`;
    }
  });

  it("answers 404 for ids that are not UUIDs", async () => {
    const r = await call(app, "GET", "/api/team/projects/not-a-uuid", { cookie: users.owner.cookie });
    expect(r.status).toBe(404);
    const g = await call(app, "PATCH", `${P()}/groups/nope`, { cookie: users.owner.cookie, body: { status: "open" } });
    expect(g.status).toBe(404);
  });

  it("lists only the user's own projects", async () => {
    const mine = await call(app, "GET", "/api/team/projects", { cookie: users.member.cookie });
    expect(mine.body.data.map((p: { id: string }) => p.id)).toEqual([projectId]);
    expect(mine.body.data[0].role).toBe("member");
    const theirs = await call(app, "GET", "/api/team/projects", { cookie: users.outsider.cookie });
    expect(theirs.body.data.map((p: { name: string }) => p.name)).toEqual(["Other Game"]);
    expect((await call(app, "GET", "/api/team/projects")).status).toBe(401);
    expect((await call(app, "POST", "/api/team/projects", { body: { name: "x" } })).status).toBe(401);
    expect((await call(app, "GET", "/api/auth/me")).status).toBe(401);
    expect((await call(app, "POST", "/api/auth/logout")).status).toBe(401);
  });

  it("keeps sign-in identities to their own account", async () => {
    const [mine] = await app.sql`
      insert into user_identities (user_id, provider, issuer, subject) values (${users.member.id}, 'roblox', 'https://apis.roblox.com/oauth/', 'access-1') returning id`;
    expect((await call(app, "GET", "/api/auth/identities")).status).toBe(401);
    expect((await call(app, "DELETE", `/api/auth/identities/${mine.id}`)).status).toBe(401);
    const listed = await call(app, "GET", "/api/auth/identities", { cookie: users.member.cookie });
    expect(listed.body.identities.map((i: { id: string }) => i.id)).toEqual([mine.id]);
    expect((await call(app, "GET", "/api/auth/identities", { cookie: users.owner.cookie })).body.identities).toEqual([]);
    // another user's identity does not exist for them, whatever their role in a shared project
    expect((await call(app, "DELETE", `/api/auth/identities/${mine.id}`, { cookie: users.owner.cookie })).status).toBe(404);
    expect((await call(app, "DELETE", `/api/auth/identities/${mine.id}`, { cookie: users.member.cookie, headers: { origin: "http://evil.example" } })).status).toBe(403);
    expect((await app.sql`select 1 from user_identities where id = ${mine.id}`).length).toBe(1);
    expect((await call(app, "DELETE", `/api/auth/identities/${mine.id}`, { cookie: users.member.cookie })).status).toBe(200);
    expect((await app.sql`select 1 from user_identities where id = ${mine.id}`).length).toBe(0);
  });
});
