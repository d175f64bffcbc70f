import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, getJson, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser, signedInRoles, type RoleUsers } from "../support/team.js";
import { reopenExpiredSnoozes } from "../../db/groups.js";

/**
 * Assignment, comments and the activity timeline, over HTTP on a real database: each role, bad input
 * (a 4xx that writes nothing), what ingest leaves alone, and what share pages never show.
 */
let app: TestApp;
let users: RoleUsers;
let projectId: string;
let apiKey: string;
let otherProject: string;
let otherKey: string;

const P = () => `/api/team/projects/${projectId}`;
const groupOf = async (message: string) =>
  (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message} and not merged_own`)[0].id;
const activityCount = async () => Number((await app.sql`select count(*)::int as n from issue_activity where project_id = ${projectId}`)[0].n);
const assigneeOf = async (id: string) => (await app.sql<{ assignee_id: string | null }[]>`select assignee_id from error_groups where project_id = ${projectId} and id = ${id}`)[0].assignee_id;
const timeline = async (id: string, cookie = users.member.cookie) => {
  const r = await call(app, "GET", `${P()}/groups/${id}/activity`, { cookie });
  expect(r.status).toBe(200);
  return r.body.data as any[];
};
const page = async (path: string, cookie: string) => {
  const r = await app.request(path, { headers: { cookie } });
  // without React's text separators, so a sentence reads as one string
  return { status: r.status, html: (await r.text()).replaceAll("<!-- -->", "") };
};
const form = (path: string, cookie: string, fields: Record<string, string>) =>
  app.request(path, { method: "POST", redirect: "manual", headers: { cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });

beforeAll(async () => {
  app = await startTestApp();
  users = await signedInRoles(app);
  ({ projectId, apiKey } = await makeProject(app.sql, users.owner.id, [
    { userId: users.admin.id, role: "admin" },
    { userId: users.member.id, role: "member" },
  ]));
  ({ projectId: otherProject, apiKey: otherKey } = await makeProject(app.sql, users.outsider.id, [], "Other Game"));
});
afterAll(() => app?.close());

describe("assignment", () => {
  it("any member assigns an issue to a member or nobody; each change is on the timeline, and ingest writes no activity", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Assign me: nil index", game_version: "1.4.0" }] });
    expect(await activityCount()).toBe(0);
    const g = await groupOf("Assign me: nil index");
    const r = await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.member.cookie, body: { assignee_id: users.admin.id } });
    expect(r.status).toBe(200);
    expect(r.body.group.assignee_id).toBe(users.admin.id);
    // status and assignee in one body
    const both = await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.admin.cookie, body: { assignee_id: users.owner.id, status: "resolved" } });
    expect(both.body.group).toMatchObject({ assignee_id: users.owner.id, status: "resolved" });
    const none = await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.owner.cookie, body: { assignee_id: null } });
    expect(none.body.group.assignee_id).toBeNull();
    const t = await timeline(g);
    const assigned = t.filter((x) => x.type === "assigned");
    expect(assigned.map((x) => [x.actor.email, x.to?.email ?? null, x.from?.email ?? null])).toEqual([
      [users.member.email, users.admin.email, null],
      [users.admin.email, users.owner.email, users.admin.email],
      [users.owner.email, null, users.owner.email],
    ]);
    const resolved = t.find((x) => x.type === "status");
    expect(resolved).toMatchObject({ from: "open", to: "resolved", version: "1.4.0", actor: { email: users.admin.email } });
    expect(t[0]).toMatchObject({ type: "created", version: "1.4.0" });
  });

  it("refuses an assignee who is not a member (400, nothing written), a malformed one, and an empty body", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Refused assignee" }] });
    const g = await groupOf("Refused assignee");
    const before = await activityCount();
    for (const assignee_id of [users.outsider.id, "00000000-0000-4000-8000-000000000000"]) {
      const r = await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.member.cookie, body: { assignee_id, status: "ignored" } });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details).toEqual([{ path: "assignee_id", message: "must be a member of this project" }]);
    }
    for (const body of [{ assignee_id: "me" }, { assignee_id: 12 }, {}, { snooze: { minutes: 5 } }]) {
      const r = await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.member.cookie, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect(await assigneeOf(g)).toBeNull();
    expect((await app.sql`select status from error_groups where id = ${g}`)[0].status).toBe("open");
    expect(await activityCount()).toBe(before);
  });

  it("bulk assign changes the visible issues among the ids and skips the rest; a non-member assignee changes none", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Bulk A" }, { message: "Bulk B" }] });
    const [a, b] = [await groupOf("Bulk A"), await groupOf("Bulk B")];
    const missing = "00000000-0000-4000-8000-0000000000aa";
    const r = await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body: { ids: [a, b, missing], assignee_id: users.member.id } });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: 2, ids: [a, b].sort(), assignee_id: users.member.id });
    // already assigned that way: nothing to change, nothing recorded
    const again = await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body: { ids: [a], assignee_id: users.member.id } });
    expect(again.body.updated).toBe(0);
    const bad = await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body: { ids: [a, b], assignee_id: users.outsider.id } });
    expect(bad.status).toBe(400);
    expect(await assigneeOf(a)).toBe(users.member.id);
    for (const body of [{ ids: [a] }, { ids: [], assignee_id: null }, { ids: ["x"], assignee_id: null }]) {
      expect((await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body })).status, JSON.stringify(body)).toBe(400);
    }
  });

  it("filters: assigned to me, unassigned, a member, on the issues page, the Team bulk filter and /api/v1/errors", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Filter mine" }, { message: "Filter theirs" }, { message: "Filter nobody" }] });
    const [mine, theirs] = [await groupOf("Filter mine"), await groupOf("Filter theirs")];
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.admin.cookie, body: { ids: [mine], assignee_id: users.admin.id } });
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.admin.cookie, body: { ids: [theirs], assignee_id: users.owner.id } });
    const titles = (html: string) => ["Filter mine", "Filter theirs", "Filter nobody"].filter((m) => html.includes(m));
    const base = `/projects/${projectId}/issues?search=Filter`;
    expect(titles((await page(`${base}&assigned=me`, users.admin.cookie)).html)).toEqual(["Filter mine"]);
    expect(titles((await page(`${base}&assigned=none`, users.admin.cookie)).html)).toEqual(["Filter nobody"]);
    expect(titles((await page(`${base}&assigned=${users.owner.id}`, users.admin.cookie)).html)).toEqual(["Filter theirs"]);
    expect(titles((await page(base, users.admin.cookie)).html)).toHaveLength(3);

    const dry = (filter: Record<string, unknown>, cookie = users.admin.cookie) =>
      call(app, "POST", `${P()}/groups/bulk`, { cookie, body: { filter: { search: "Filter", ...filter }, status: "resolved", dry_run: true } });
    expect((await dry({ assignee: "me" })).body.matched).toBe(1);
    expect((await dry({ assignee: "me" }, users.member.cookie)).body.matched).toBe(0);
    expect((await dry({ assignee: "none" })).body.matched).toBe(1);
    expect((await dry({ assignee: users.owner.id })).body.matched).toBe(1);
    expect((await dry({ assignee: "someone" })).status).toBe(400);

    const v1 = (q: string) => getJson(app, `/api/v1/errors?grouped=true&search=Filter&${q}`, apiKey);
    expect((await v1("assignee=none")).body.total).toBe(1);
    expect((await v1(`assignee=${users.admin.id}`)).body.data.map((g: any) => g.id)).toEqual([mine]);
    expect((await v1(`assignee=${users.admin.id}`)).body.data[0].assignee_id).toBe(users.admin.id);
    const me = await v1("assignee=me");
    expect(me.status).toBe(400);
    expect(me.body.error).toBe("invalid_query");
    expect((await getJson(app, `/api/v1/errors?assignee=none`, apiKey)).status).toBe(400);
  });

  it("a merged-away issue has no assignee of its own (409); a merge keeps the primary's, or takes the largest assigned issue's", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Merge primary", count: 9 }, { message: "Merge small", count: 1 }, { message: "Merge big", count: 5 }] });
    const [primary, small, big] = [await groupOf("Merge primary"), await groupOf("Merge small"), await groupOf("Merge big")];
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.owner.cookie, body: { ids: [small], assignee_id: users.member.id } });
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.owner.cookie, body: { ids: [big], assignee_id: users.admin.id } });
    const m = await call(app, "POST", `${P()}/groups/merge`, { cookie: users.member.cookie, body: { ids: [primary, small, big], target_id: primary } });
    expect(m.status).toBe(200);
    expect(await assigneeOf(primary)).toBe(users.admin.id);
    const away = await call(app, "PATCH", `${P()}/groups/${small}`, { cookie: users.member.cookie, body: { assignee_id: users.owner.id } });
    expect(away.status).toBe(409);
    const t = await timeline(primary);
    expect(t.find((x) => x.type === "merged" && x.group_id === primary)).toMatchObject({ ids: expect.arrayContaining([small, big]), actor: { email: users.member.email } });
    expect(t.find((x) => x.type === "assigned" && x.via === "merge")).toMatchObject({ to: { id: users.admin.id } });
    // the merged issues' own entries show on the primary's timeline too
    expect(t.some((x) => x.type === "merged" && x.group_id === small && x.into === primary)).toBe(true);
    // an unmerged issue shows its own assignee again
    const u = await call(app, "POST", `${P()}/groups/${primary}/unmerge`, { cookie: users.member.cookie, body: { ids: [small] } });
    expect(u.status).toBe(200);
    expect(await assigneeOf(small)).toBe(users.member.id);
    expect((await timeline(small)).some((x) => x.type === "unmerged" && x.from === primary)).toBe(true);
  });

  it("removing a member unassigns their issues, on each issue's timeline, and drops their notices", async () => {
    const leaver = await makeUser(app.sql);
    await call(app, "POST", `${P()}/members`, { cookie: users.owner.cookie, body: { email: leaver.email, role: "member" } });
    await ingest(app, apiKey, { errors: [{ message: "Leaver's issue" }] });
    const g = await groupOf("Leaver's issue");
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.admin.cookie, body: { ids: [g], assignee_id: leaver.id } });
    expect(Number((await app.sql`select count(*)::int as n from assignment_notices where user_id = ${leaver.id}`)[0].n)).toBe(1);
    const r = await call(app, "DELETE", `${P()}/members/${leaver.id}`, { cookie: users.admin.cookie });
    expect(r.status).toBe(200);
    expect(await assigneeOf(g)).toBeNull();
    expect(Number((await app.sql`select count(*)::int as n from assignment_notices where user_id = ${leaver.id}`)[0].n)).toBe(0);
    const last = (await timeline(g)).filter((x) => x.type === "assigned").at(-1);
    expect(last).toMatchObject({ via: "member_removed", to: null, from: { id: leaver.id }, actor: { id: users.admin.id } });
    // and the foreign key: nobody outside the project can hold an issue, whatever the path
    await expect(app.sql`update error_groups set assignee_id = ${leaver.id} where id = ${g}`).rejects.toThrow(/foreign key/);
  });
});

describe("Assigned to you", () => {
  it("notifies the assignee (not someone assigning themselves), counts unread in the nav, and reads them when opened", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Notify me A" }, { message: "Notify me B" }] });
    const [a, b] = [await groupOf("Notify me A"), await groupOf("Notify me B")];
    // what earlier tests assigned to this member is read first
    await call(app, "POST", "/api/team/notifications", { cookie: users.member.cookie, body: {} });
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body: { ids: [a], assignee_id: users.member.id } });
    const self = await call(app, "GET", "/api/team/notifications", { cookie: users.member.cookie });
    expect(self.body.unread).toBe(0);
    await call(app, "POST", `${P()}/groups/assign`, { cookie: users.admin.cookie, body: { ids: [b], assignee_id: users.member.id } });
    await call(app, "PATCH", `${P()}/groups/${a}`, { cookie: users.owner.cookie, body: { assignee_id: null } });
    await call(app, "PATCH", `${P()}/groups/${a}`, { cookie: users.owner.cookie, body: { assignee_id: users.member.id } });
    const n = await call(app, "GET", "/api/team/notifications", { cookie: users.member.cookie });
    expect(n.body.unread).toBe(2);
    expect(n.body.data.filter((x: any) => !x.read_at).map((x: any) => [x.title, x.actor_email])).toEqual([["Notify me A", users.owner.email], ["Notify me B", users.admin.email]]);
    const nav = await page(`/projects/${projectId}/issues`, users.member.cookie);
    expect(nav.html).toMatch(/data-testid="unread-count"[^>]*>2</);
    // opening one issue reads its notice
    await page(`/projects/${projectId}/issues/${b}`, users.member.cookie);
    expect((await call(app, "GET", "/api/team/notifications", { cookie: users.member.cookie })).body.unread).toBe(1);
    // opening the list reads the rest (shown as new this once)
    const list = await page("/notifications", users.member.cookie);
    expect(list.status).toBe(200);
    expect(list.html).toContain("Notify me A");
    expect((await call(app, "GET", "/api/team/notifications", { cookie: users.member.cookie })).body.unread).toBe(0);
    // another user's notices are theirs alone
    expect((await call(app, "GET", "/api/team/notifications", { cookie: users.outsider.cookie })).body).toEqual({ data: [], unread: 0 });
    expect((await call(app, "GET", "/api/team/notifications")).status).toBe(401);
    const mark = await call(app, "POST", "/api/team/notifications", { cookie: users.member.cookie, body: {} });
    expect(mark.body).toEqual({ marked_read: 0 });
  });
});

describe("comments", () => {
  let g: string;
  beforeAll(async () => {
    await ingest(app, apiKey, { errors: [{ message: "Comment on me" }] });
    g = await groupOf("Comment on me");
  });
  const C = () => `${P()}/groups/${g}/comments`;

  it("members comment; the text is kept as typed (trimmed) and bounded", async () => {
    const r = await call(app, "POST", C(), { cookie: users.member.cookie, body: { body: "  Looks like the shop module. See https://docs.example.test/shop.  " } });
    expect(r.status).toBe(201);
    expect(r.body.comment).toMatchObject({ body: "Looks like the shop module. See https://docs.example.test/shop.", author_email: users.member.email, edited_at: null });
    const before = Number((await app.sql`select count(*)::int as n from issue_comments`)[0].n);
    for (const body of [{ body: "   " }, { body: "x".repeat(5001) }, { body: 5 }, {}, { body: "nul \u0000 here" }]) {
      const bad = await call(app, "POST", C(), { cookie: users.member.cookie, body });
      expect(bad.status, JSON.stringify(body).slice(0, 40)).toBe(400);
      expect(bad.body.error).toBe("invalid_payload");
    }
    expect((await call(app, "POST", C(), { cookie: users.member.cookie, body: { body: "x".repeat(5000) } })).status).toBe(201);
    expect(Number((await app.sql`select count(*)::int as n from issue_comments`)[0].n)).toBe(before + 1);
    const list = await call(app, "GET", C(), { cookie: users.admin.cookie });
    expect(list.body.data.length).toBeGreaterThanOrEqual(2);
  });

  it("the page shows comments as text: links for http(s) URLs only, no HTML", async () => {
    const hostile = `<script>alert(1)</script><img src=x onerror=alert(2)> [x](javascript:alert(3)) javascript:alert(4) **bold** https://ok.example.test/a?b=1&c=2.`;
    expect((await call(app, "POST", C(), { cookie: users.member.cookie, body: { body: hostile } })).status).toBe(201);
    const { html } = await page(`/projects/${projectId}/issues/${g}`, users.owner.cookie);
    const body = html.slice(html.indexOf('data-testid="timeline"'));
    expect(body).not.toContain("<script>alert(1)");
    expect(body).not.toContain("<img src=x");
    expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(body).not.toMatch(/href="javascript:/i);
    expect(body).toContain("**bold**");
    expect(body).toContain('href="https://ok.example.test/a?b=1&amp;c=2"');
    expect(body).toContain('rel="noopener noreferrer nofollow ugc"');
  });

  it("only the author edits; the author, an owner or an admin deletes; a member cannot delete another's", async () => {
    const c = (await call(app, "POST", C(), { cookie: users.member.cookie, body: { body: "first take" } })).body.comment;
    const url = `${C()}/${c.id}`;
    for (const who of [users.owner, users.admin]) {
      const r = await call(app, "PATCH", url, { cookie: who.cookie, body: { body: "rewritten" } });
      expect(r.status).toBe(403);
    }
    const edit = await call(app, "PATCH", url, { cookie: users.member.cookie, body: { body: "second take" } });
    expect(edit.status).toBe(200);
    expect(edit.body.comment).toMatchObject({ body: "second take", edited_at: expect.any(String) });
    expect((await call(app, "PATCH", url, { cookie: users.member.cookie, body: { body: "" } })).status).toBe(400);

    const adminsComment = (await call(app, "POST", C(), { cookie: users.admin.cookie, body: { body: "admin says" } })).body.comment;
    expect((await call(app, "DELETE", `${C()}/${adminsComment.id}`, { cookie: users.member.cookie })).status).toBe(403);
    expect((await call(app, "DELETE", `${C()}/${adminsComment.id}`, { cookie: users.admin.cookie })).status).toBe(200);
    expect((await call(app, "DELETE", url, { cookie: users.owner.cookie })).status).toBe(200);
    expect((await call(app, "DELETE", url, { cookie: users.owner.cookie })).status).toBe(404);
    expect((await call(app, "PATCH", `${C()}/not-an-id`, { cookie: users.member.cookie, body: { body: "x" } })).status).toBe(404);
    // a comment is reached only through its own issue
    await ingest(app, apiKey, { errors: [{ message: "Another issue" }] });
    const other = await groupOf("Another issue");
    const mine = (await call(app, "POST", C(), { cookie: users.member.cookie, body: { body: "stay here" } })).body.comment;
    expect((await call(app, "DELETE", `${P()}/groups/${other}/comments/${mine.id}`, { cookie: users.member.cookie })).status).toBe(404);
    expect((await call(app, "GET", `${P()}/groups/00000000-0000-4000-8000-000000000001/comments`, { cookie: users.member.cookie })).status).toBe(404);
  });

  it("page forms comment, edit and delete through the same rules", async () => {
    const path = `/projects/${projectId}/issues/${g}`;
    const r = await form(path, users.admin.cookie, { intent: "comment", body: "from the page" });
    expect(r.status).toBe(200);
    const [c] = await app.sql<{ id: string }[]>`select id from issue_comments where body = 'from the page'`;
    expect((await form(path, users.member.cookie, { intent: "comment-edit", comment_id: c.id, body: "hijacked" })).status).toBe(403);
    expect((await form(path, users.admin.cookie, { intent: "comment-edit", comment_id: c.id, body: "edited on the page" })).status).toBe(200);
    expect((await form(path, users.admin.cookie, { intent: "assign", assignee_id: users.member.id })).status).toBe(200);
    expect(await assigneeOf(g)).toBe(users.member.id);
    expect((await form(path, users.member.cookie, { intent: "comment-delete", comment_id: c.id })).status).toBe(403);
    expect((await form(path, users.owner.cookie, { intent: "comment-delete", comment_id: c.id })).status).toBe(200);
    expect(await app.sql`select 1 from issue_comments where id = ${c.id}`).toHaveLength(0);
    // from another site: refused before the action runs
    const evil = await app.request(path, { method: "POST", headers: { cookie: users.admin.cookie, origin: "http://evil.example", "content-type": "application/x-www-form-urlencoded" }, body: "intent=comment&body=csrf" });
    expect(evil.status).toBe(403);
    expect(await app.sql`select 1 from issue_comments where body = 'csrf'`).toHaveLength(0);
  });
});

describe("the timeline", () => {
  it("tells status changes with who and the version, regressions, share links with who, snoozes that end", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Timeline issue", game_version: "2.0.0" }] });
    const g = await groupOf("Timeline issue");
    await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.member.cookie, body: { status: "resolved" } });
    await ingest(app, apiKey, { errors: [{ message: "Timeline issue", game_version: "2.0.1" }] });
    const link = await call(app, "POST", `${P()}/share-links`, { cookie: users.member.cookie, body: { group_id: g, role: "viewer" } });
    await call(app, "DELETE", `${P()}/share-links/${link.body.id}`, { cookie: users.admin.cookie });
    await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.owner.cookie, body: { status: "ignored", snooze: { minutes: 5 } } });
    await app.sql`update error_groups set snooze_until = now() - interval '1 second' where id = ${g}`;
    await reopenExpiredSnoozes(app.sql);
    const t = await timeline(g, users.admin.cookie);
    const says = t.map((x) => [x.type, x.actor?.email ?? null, x.to ?? x.version ?? x.role ?? null, x.via ?? null]);
    expect(says).toEqual([
      ["created", null, "2.0.0", null],
      ["status", users.member.email, "resolved", null],
      ["regressed", null, "2.0.1", null],
      ["share_created", users.member.email, "viewer", null],
      ["share_revoked", users.admin.email, "viewer", null],
      ["status", users.owner.email, "ignored", null],
      ["status", null, "open", "snooze_ended"],
    ]);
    expect(t[1].version).toBe("2.0.0");
    expect(t[5].snooze.until).toEqual(expect.any(String));
    const { html } = await page(`/projects/${projectId}/issues/${g}`, users.member.cookie);
    expect(html).toContain("resolved this issue");
    expect(html).toContain("The snooze ended:");
  });

  it("answers 404 for a group of another project, and to a user outside the project", async () => {
    await ingest(app, otherKey, { errors: [{ message: "their issue" }] });
    const [{ id: theirs }] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${otherProject}`;
    expect((await call(app, "GET", `${P()}/groups/${theirs}/activity`, { cookie: users.member.cookie })).status).toBe(404);
    expect((await call(app, "POST", `${P()}/groups/${theirs}/comments`, { cookie: users.member.cookie, body: { body: "x" } })).status).toBe(404);
    expect((await call(app, "POST", `${P()}/groups/assign`, { cookie: users.member.cookie, body: { ids: [theirs], assignee_id: null } })).body.updated).toBe(0);
  });
});

describe("deleting", () => {
  it("an issue takes its comments, activity and notices with it; a project with assigned issues deletes cleanly", async () => {
    const { projectId: doomed, apiKey: key } = await makeProject(app.sql, users.owner.id, [{ userId: users.member.id, role: "member" }], "Doomed");
    const D = `/api/team/projects/${doomed}`;
    await ingest(app, key, { errors: [{ message: "Doomed one" }, { message: "Doomed two" }] });
    const ids = (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${doomed} order by message`).map((r) => r.id);
    for (const id of ids) {
      await call(app, "PATCH", `${D}/groups/${id}`, { cookie: users.owner.cookie, body: { assignee_id: users.member.id, status: "resolved" } });
      await call(app, "POST", `${D}/groups/${id}/comments`, { cookie: users.member.cookie, body: { body: "doomed" } });
    }
    const rows = async () => {
      const [r] = await app.sql`select
        (select count(*)::int from issue_comments where project_id = ${doomed}) as comments,
        (select count(*)::int from issue_activity where project_id = ${doomed}) as activity,
        (select count(*)::int from assignment_notices where project_id = ${doomed}) as notices`;
      return r;
    };
    expect(await rows()).toEqual({ comments: 2, activity: 4, notices: 2 });
    expect((await call(app, "DELETE", `${D}/groups/${ids[0]}`, { cookie: users.owner.cookie })).status).toBe(200);
    expect(await rows()).toEqual({ comments: 1, activity: 2, notices: 1 });
    expect((await call(app, "DELETE", D, { cookie: users.owner.cookie })).status).toBe(200);
    expect(await rows()).toEqual({ comments: 0, activity: 0, notices: 0 });
  });
});

describe("share pages", () => {
  it("show no assignee, comment or timeline entry", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Shared issue" }] });
    const g = await groupOf("Shared issue");
    await call(app, "PATCH", `${P()}/groups/${g}`, { cookie: users.owner.cookie, body: { assignee_id: users.admin.id, status: "resolved" } });
    await call(app, "POST", `${P()}/groups/${g}/comments`, { cookie: users.member.cookie, body: { body: "SECRET-TEAM-TALK about this" } });
    const link = await call(app, "POST", `${P()}/share-links`, { cookie: users.owner.cookie, body: { group_id: g, role: "editor" } });
    const token = link.body.token;
    const api = await call(app, "GET", `/api/share/${token}`);
    expect(api.status).toBe(200);
    const text = JSON.stringify(api.body);
    for (const leak of ["SECRET-TEAM-TALK", users.admin.email, users.admin.id, "assignee", "activity", "comment"]) expect(text).not.toContain(leak);
    const html = await (await app.request(`/share/${token}`)).text();
    for (const leak of ["SECRET-TEAM-TALK", users.admin.email, 'data-testid="timeline"', "Assignee"]) expect(html).not.toContain(leak);
    // an editor link's status change is on the timeline, told as the link's (no user behind it)
    const set = await call(app, "POST", `/api/share/${token}`, { body: { status: "open" } });
    expect(set.status).toBe(200);
    expect(JSON.stringify(set.body)).not.toContain("assignee");
    expect((await timeline(g)).filter((x) => x.type === "status").at(-1)).toMatchObject({ to: "open", via: "share_link", actor: null });
  });
});
