import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, testConfig, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, PASSWORD, projectWithRoles, signedInRoles, type RoleUsers } from "../support/team.js";
import { runCli } from "../support/cli.js";
import { pruneAudit, recordAudit } from "../../db/audit.js";
import { csvCell } from "../../app/team/audit.server.js";
import { INSTANCE_ACTIONS, PROJECT_ACTIONS } from "../../app/team/audit-actions.js";

/**
 * The audit log over HTTP: every audited change writes exactly one row naming the actor, the action
 * and the target; no row (nor the CSV export) holds any secret the change handled; the filters,
 * paging, CSV quoting and formula guard; who may read which log; the log's own retention.
 */
let app: TestApp;
let users: RoleUsers;
let projectId: string;
let apiKey: string;
let root: { email: string; cookie: string };
const ROOT_PASSWORD = "first account's own passphrase";
/** every secret an audited change handled, looked for in every row and in the CSV */
const secrets: string[] = [ROOT_PASSWORD, PASSWORD];
const P = () => `/api/team/projects/${projectId}`;

type Row = { id: number; project_id: string | null; actor_id: string | null; actor_email: string | null; action: string; target: string | null; details: any };
const lastId = async () => (await app.sql<{ n: number }[]>`select coalesce(max(id), 0)::int as n from audit_log`)[0].n;
const since = (id: number) => app.sql<Row[]>`select * from audit_log where id > ${id} order by id`;

/** Runs `change` and expects exactly one new audit row, of `action`, by `actor`, on `target` (when given). */
async function one(action: string, actor: { id: string } | null, change: () => Promise<{ status: number; body: any }>, target?: string | null) {
  const mark = await lastId();
  const r = await change();
  expect(r.status, `${action}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
  const rows = await since(mark);
  expect(rows.map((x) => x.action), action).toEqual([action]);
  expect(rows[0].actor_id, action).toBe(actor?.id ?? null);
  if (target !== undefined) expect(rows[0].target, action).toBe(target);
  return { row: rows[0], body: r.body };
}

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
  // the first account, through the setup page: an instance admin
  const setup = await app.request("/setup", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    body: new URLSearchParams({ email: "root@audit.test", password: ROOT_PASSWORD, confirm: ROOT_PASSWORD }).toString(),
    redirect: "manual",
  });
  expect(setup.status).toBe(302);
  root = { email: "root@audit.test", cookie: await login(app, "root@audit.test", ROOT_PASSWORD) };
  users = await signedInRoles(app);
  ({ projectId, apiKey } = await projectWithRoles(app.sql, users));
  secrets.push(apiKey);
}, 60_000);
afterAll(() => app?.close());

describe("what is recorded", () => {
  it("the setup page's account is an instance admin, recorded in the instance's log", async () => {
    const [u] = await app.sql`select id, instance_admin from users where email = 'root@audit.test'`;
    expect(u.instance_admin).toBe(true);
    const rows = await app.sql<Row[]>`select * from audit_log where action = 'account.created' and target = 'root@audit.test'`;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ project_id: null, actor_id: u.id, details: { via: "setup", instance_admin: true } });
    // other accounts are not
    const [m] = await app.sql`select instance_admin from users where id = ${users.member.id}`;
    expect(m.instance_admin).toBe(false);
  });

  it("a project's creation and its first key", async () => {
    const rows = await app.sql<Row[]>`select * from audit_log where project_id = ${projectId} order by id`;
    expect(rows.map((r) => [r.action, r.actor_id])).toEqual([
      ["project.created", users.owner.id],
      ["api_key.created", users.owner.id],
    ]);
    expect(rows[1].details).toEqual({ name: "default", prefix: apiKey.slice(0, 10) });
  });

  it("API keys: created, revoked (by id, prefix and name)", async () => {
    const { row, body } = await one("api_key.created", users.admin, () => call(app, "POST", `${P()}/keys`, { cookie: users.admin.cookie, body: { name: "rotation" } }));
    secrets.push(body.api_key);
    expect(row).toMatchObject({ project_id: projectId, actor_email: users.admin.email, target: body.key.id, details: { name: "rotation", prefix: body.api_key.slice(0, 10) } });
    const revoked = await one("api_key.revoked", users.owner, () => call(app, "DELETE", `${P()}/keys/${body.key.id}`, { cookie: users.owner.cookie }), body.key.id);
    expect(revoked.row.details).toEqual({ name: "rotation", prefix: body.api_key.slice(0, 10) });
  });

  it("the command line: a key revoked with key:revoke is recorded like one revoked in the dashboard", async () => {
    const made = await call(app, "POST", `${P()}/keys`, { cookie: users.admin.cookie, body: { name: "ci runner" } });
    secrets.push(made.body.api_key);
    const mark = await lastId();
    const revoked = await runCli(app.databaseUrl, "key:revoke", "--key-id", made.body.key.id);
    expect(revoked).toEqual({ code: 0, out: { revoked: true } });
    const rows = await since(mark);
    expect(rows).toEqual([
      expect.objectContaining({
        project_id: projectId,
        actor_id: null,
        actor_email: null,
        action: "api_key.revoked",
        target: made.body.key.id,
        details: { name: "ci runner", prefix: made.body.api_key.slice(0, 10), via: "cli" },
      }),
    ]);
    // a key already revoked, or unknown, is a usage error and writes nothing
    expect((await runCli(app.databaseUrl, "key:revoke", "--key-id", made.body.key.id)).code).toBe(2);
    expect(await since(rows[0].id)).toEqual([]);
  }, 60_000);

  it("DSN keys: created, rate limit changed, renamed, revoked", async () => {
    const { body } = await one("dsn_key.created", users.admin, () =>
      call(app, "POST", `${P()}/dsn-keys`, { cookie: users.admin.cookie, body: { name: "web", rate_limit_per_minute: 100 } }));
    secrets.push(body.public_key, body.dsn);
    const id = body.id;
    const limit = await one("dsn_key.limit_changed", users.admin, () => call(app, "PATCH", `${P()}/dsn-keys/${id}`, { cookie: users.admin.cookie, body: { rate_limit_per_minute: 50 } }), id);
    expect(limit.row.details).toEqual({ name: "web", rate_limit_per_minute: { from: 100, to: 50 } });
    const renamed = await one("dsn_key.renamed", users.admin, () => call(app, "PATCH", `${P()}/dsn-keys/${id}`, { cookie: users.admin.cookie, body: { name: "web client" } }), id);
    expect(renamed.row.details).toEqual({ name: "web client", renamed_from: "web" });
    await one("dsn_key.revoked", users.owner, () => call(app, "DELETE", `${P()}/dsn-keys/${id}`, { cookie: users.owner.cookie }), id);
  });

  it("members: added (a new account with a temporary password is an instance row too), role changed, removed", async () => {
    const mark = await lastId();
    const add = await call(app, "POST", `${P()}/members`, { cookie: users.admin.cookie, body: { email: "newbie@audit.test", role: "member" } });
    expect(add.status).toBe(201);
    expect(typeof add.body.temporary_password).toBe("string");
    secrets.push(add.body.temporary_password);
    const rows = await since(mark);
    expect(rows.map((r) => [r.project_id, r.action, r.target, r.actor_id])).toEqual([
      [null, "account.created", "newbie@audit.test", users.admin.id],
      [projectId, "member.added", "newbie@audit.test", users.admin.id],
    ]);
    expect(rows[0].details).toEqual({ via: "member_added", project_id: projectId, temporary: true });
    const userId = add.body.member.user_id;
    const role = await one("member.role_changed", users.owner, () => call(app, "PATCH", `${P()}/members/${userId}`, { cookie: users.owner.cookie, body: { role: "admin" } }), "newbie@audit.test");
    expect(role.row.details).toEqual({ user_id: userId, from: "member", to: "admin" });
    // the same role again changes nothing and records nothing
    const mark2 = await lastId();
    expect((await call(app, "PATCH", `${P()}/members/${userId}`, { cookie: users.owner.cookie, body: { role: "admin" } })).status).toBe(200);
    expect(await since(mark2)).toEqual([]);
    const removed = await one("member.removed", users.owner, () => call(app, "DELETE", `${P()}/members/${userId}`, { cookie: users.owner.cookie }), "newbie@audit.test");
    expect(removed.row.details).toEqual({ user_id: userId, role: "admin" });
  });

  it("alert channels and rules: created, changed, disabled, enabled, deleted (a channel by kind and name, never its URL or secret)", async () => {
    const discordUrl = "https://discord.com/api/webhooks/123456789012345678/DiscordWebhookTokenAbcdefghijklmnop";
    const webhookSecret = "webhook-signing-secret-0123456789";
    secrets.push(discordUrl, "DiscordWebhookTokenAbcdefghijklmnop", webhookSecret);
    const ch = await one("alert_channel.created", users.admin, () =>
      call(app, "POST", `${P()}/channels`, { cookie: users.admin.cookie, body: { name: "Ops Discord", kind: "discord", url: discordUrl } }));
    const channelId = ch.body.channel.id;
    expect(ch.row.details).toEqual({ name: "Ops Discord", kind: "discord", enabled: true });
    const hook = await one("alert_channel.created", users.admin, () =>
      call(app, "POST", `${P()}/channels`, { cookie: users.admin.cookie, body: { name: "Pager", kind: "webhook", url: "https://hooks.example.test/in?token=QueryTokenSecret123", secret: webhookSecret } }));
    secrets.push("QueryTokenSecret123");
    await one("alert_channel.disabled", users.admin, () => call(app, "PATCH", `${P()}/channels/${channelId}`, { cookie: users.admin.cookie, body: { enabled: false } }), channelId);
    await one("alert_channel.enabled", users.admin, () => call(app, "PATCH", `${P()}/channels/${channelId}`, { cookie: users.admin.cookie, body: { enabled: true } }), channelId);
    const newUrl = "https://discord.com/api/webhooks/123456789012345678/SecondDiscordTokenXyz";
    secrets.push(newUrl, "SecondDiscordTokenXyz");
    const changed = await one("alert_channel.changed", users.admin, () =>
      call(app, "PATCH", `${P()}/channels/${channelId}`, { cookie: users.admin.cookie, body: { url: newUrl, name: "Ops" } }), channelId);
    expect(changed.row.details).toEqual({ name: "Ops", kind: "discord", renamed_from: "Ops Discord", address_changed: true });
    const resigned = await one("alert_channel.changed", users.admin, () =>
      call(app, "PATCH", `${P()}/channels/${hook.body.channel.id}`, { cookie: users.admin.cookie, body: { secret: "another-signing-secret-987654" } }));
    secrets.push("another-signing-secret-987654");
    expect(resigned.row.details).toEqual({ name: "Pager", kind: "webhook", signing_changed: true });

    const rule = await one("alert_rule.created", users.admin, () =>
      call(app, "POST", `${P()}/rules`, { cookie: users.admin.cookie, body: { name: "New issues", trigger: "new_group", channel_ids: [channelId] } }));
    const ruleId = rule.body.rule.id;
    expect(rule.row.details).toEqual({ name: "New issues", trigger: "new_group", enabled: true });
    await one("alert_rule.disabled", users.admin, () => call(app, "PATCH", `${P()}/rules/${ruleId}`, { cookie: users.admin.cookie, body: { enabled: false } }), ruleId);
    await one("alert_rule.enabled", users.admin, () => call(app, "PATCH", `${P()}/rules/${ruleId}`, { cookie: users.admin.cookie, body: { enabled: true } }), ruleId);
    const edit = await one("alert_rule.changed", users.admin, () => call(app, "PATCH", `${P()}/rules/${ruleId}`, { cookie: users.admin.cookie, body: { cooldown_minutes: 60, name: "New issues (hourly)" } }), ruleId);
    expect(edit.row.details).toEqual({ name: "New issues (hourly)", trigger: "new_group", fields: ["name", "cooldown_minutes"] });
    await one("alert_rule.deleted", users.owner, () => call(app, "DELETE", `${P()}/rules/${ruleId}`, { cookie: users.owner.cookie }), ruleId);
    const del = await one("alert_channel.deleted", users.owner, () => call(app, "DELETE", `${P()}/channels/${channelId}`, { cookie: users.owner.cookie }), channelId);
    expect(del.row.details).toEqual({ name: "Ops", kind: "discord" });
  });

  it("the currency map, thresholds and the Open Cloud key (where it points, never the key)", async () => {
    const map = { currencies: [{ key: "gems", name: "Gems", paths: ["Gems"] }], names: [], data_code: null, match: [] };
    const saved = await one("economy_map.saved", users.admin, () => call(app, "PUT", `${P()}/economy-map`, { cookie: users.admin.cookie, body: map }), null);
    expect(saved.row.details.currencies).toEqual(["gems"]);
    const set = await one("economy_threshold.set", users.admin, () => call(app, "PUT", `${P()}/economy-thresholds/gems`, { cookie: users.admin.cookie, body: { factor: 4 } }), "gems");
    expect(set.row.details).toMatchObject({ factor: 4, off: false });
    await one("economy_threshold.reset", users.admin, () => call(app, "DELETE", `${P()}/economy-thresholds/gems`, { cookie: users.admin.cookie }), "gems");
    await one("economy_map.reset", users.owner, () => call(app, "DELETE", `${P()}/economy-map`, { cookie: users.owner.cookie }), null);

    const openCloudKey = "OpenCloudApiKeySecretValue0123456789abcdef";
    secrets.push(openCloudKey);
    const key = await one("open_cloud_key.saved", users.admin, () =>
      call(app, "PUT", "/api/economy/key", { cookie: users.admin.cookie, body: { project_id: projectId, api_key: openCloudKey, universe_id: "4242", datastore_name: "PlayerData" } }));
    expect(key.row).toMatchObject({ project_id: projectId, details: { universe_id: "4242", datastore_name: "PlayerData", scope: "global", key_prefix: null } });
    await one("open_cloud_key.deleted", users.owner, () => call(app, "DELETE", `/api/economy/key?project_id=${projectId}`, { cookie: users.owner.cookie }));
  });

  it("share links, grouping rules, issue deletion and the project's name", async () => {
    await ingest(app, apiKey, { message: "Workspace.Gun:12: attempt to index nil", user_id: 1 });
    const [{ id: groupId }] = await app.sql`select id from error_groups where project_id = ${projectId}`;
    // any member may share: the member is the actor
    const link = await one("share_link.created", users.member, () =>
      call(app, "POST", `${P()}/share-links`, { cookie: users.member.cookie, body: { group_id: groupId, role: "viewer" } }));
    secrets.push(link.body.token, link.body.url);
    expect(link.row).toMatchObject({ target: link.body.id, details: { group_id: groupId, role: "viewer", expires_at: null } });
    await one("share_link.revoked", users.admin, () => call(app, "DELETE", `${P()}/share-links/${link.body.id}`, { cookie: users.admin.cookie }), link.body.id);

    const a = await one("grouping_rule.created", users.admin, () =>
      call(app, "POST", `${P()}/grouping-rules`, { cookie: users.admin.cookie, body: { name: "Shop", match: { message: "Shop closed" }, action: "group" } }));
    const b = await one("grouping_rule.created", users.admin, () =>
      call(app, "POST", `${P()}/grouping-rules`, { cookie: users.admin.cookie, body: { match: { level: "info" }, action: "ignore" } }));
    await one("grouping_rule.changed", users.admin, () =>
      call(app, "PATCH", `${P()}/grouping-rules/${a.body.rule.id}`, { cookie: users.admin.cookie, body: { name: "Shop closed" } }), a.body.rule.id);
    const order = [b.body.rule.id, a.body.rule.id];
    const re = await one("grouping_rule.reordered", users.admin, () => call(app, "PUT", `${P()}/grouping-rules`, { cookie: users.admin.cookie, body: { order } }), null);
    expect(re.row.details).toEqual({ order });
    await one("grouping_rule.deleted", users.owner, () => call(app, "DELETE", `${P()}/grouping-rules/${b.body.rule.id}`, { cookie: users.owner.cookie }), b.body.rule.id);

    await one("issue.deleted", users.admin, () => call(app, "DELETE", `${P()}/groups/${groupId}`, { cookie: users.admin.cookie }), groupId);
    const ren = await one("project.renamed", users.admin, () => call(app, "PATCH", P(), { cookie: users.admin.cookie, body: { name: "Team Game 2" } }), "Team Game 2");
    expect(ren.row.details).toEqual({ from: "Team Game", to: "Team Game 2" });
  });

  it("a password change is an instance row naming the account, never the password", async () => {
    const next = "a brand new passphrase for audit";
    secrets.push(next);
    const r = await one("account.password_changed", users.outsider, () =>
      call(app, "POST", "/api/auth/password", { cookie: users.outsider.cookie, body: { current_password: PASSWORD, new_password: next } }), users.outsider.email);
    expect(r.row.project_id).toBeNull();
  });

  it("the command line: granting instance admin and resetting a password", async () => {
    const grant = await runCli(app.databaseUrl, "user:admin", "--email", users.admin.email);
    expect(grant).toEqual({ code: 0, out: { user_id: users.admin.id, instance_admin: true } });
    const reset = await runCli(app.databaseUrl, "user:password", "--email", "newbie@audit.test");
    expect(reset.code).toBe(0);
    secrets.push(reset.out.temporary_password);
    const revoke = await runCli(app.databaseUrl, "user:admin", "--email", users.admin.email, "--revoke");
    expect(revoke.out.instance_admin).toBe(false);
    const unknown = await runCli(app.databaseUrl, "user:admin", "--email", "nobody@audit.test");
    expect(unknown.code).toBe(2);
    const rows = await app.sql<Row[]>`select * from audit_log where action in ('instance_admin.granted', 'instance_admin.revoked', 'account.password_reset') order by id`;
    expect(rows.map((r) => [r.action, r.target, r.actor_id, r.project_id])).toEqual([
      ["instance_admin.granted", users.admin.email, null, null],
      ["account.password_reset", "newbie@audit.test", null, null],
      ["instance_admin.revoked", users.admin.email, null, null],
    ]);
  }, 60_000);

  it("every action recorded is one the docs list", async () => {
    const known = new Set([...Object.keys(PROJECT_ACTIONS), ...Object.keys(INSTANCE_ACTIONS)]);
    const recorded = await app.sql<{ action: string }[]>`select distinct action from audit_log`;
    for (const { action } of recorded) expect(known.has(action), action).toBe(true);
  });

  it("no row and no CSV holds any secret the audited changes handled", async () => {
    expect(secrets.length).toBeGreaterThan(15);
    const rows = await app.sql<{ t: string }[]>`select row_to_json(a)::text as t from audit_log a`;
    const all = rows.map((r) => r.t).join("\n");
    const projectCsv = await (await app.request(`${P()}/audit?format=csv`, { headers: { cookie: users.owner.cookie } })).text();
    const instanceCsv = await (await app.request("/api/team/instance/audit?format=csv", { headers: { cookie: root.cookie } })).text();
    expect(projectCsv.split("\r\n").length).toBeGreaterThan(30);
    for (const s of secrets) {
      expect(typeof s).toBe("string");
      for (const [where, text] of [["rows", all], ["project CSV", projectCsv], ["instance CSV", instanceCsv]]) {
        expect(text.includes(s), `${where} holds ${s}`).toBe(false);
      }
    }
  });

  it("details members named like secrets are dropped when a caller passes one", async () => {
    const mark = await lastId();
    await recordAudit(app.sql, { projectId, actorId: null, action: "alert_channel.changed", target: "x", details: { name: "n", url: "https://a", nested: { secret: "s", token: "t", ok: 1 }, password: "p" } });
    const [row] = await since(mark);
    expect(row.details).toEqual({ name: "n", nested: { ok: 1 } });
    await app.sql`delete from audit_log where id = ${row.id}`;
  });

  it("deleting a project takes its log with it and leaves one instance row", async () => {
    const { projectId: doomed } = await makeProject(app.sql, users.owner.id, [], "Doomed Game");
    expect((await app.sql`select count(*)::int as n from audit_log where project_id = ${doomed}`)[0].n).toBe(2);
    const r = await one("project.deleted", users.owner, () => call(app, "DELETE", `/api/team/projects/${doomed}`, { cookie: users.owner.cookie }), "Doomed Game");
    expect(r.row).toMatchObject({ project_id: null, details: { project_id: doomed } });
    expect((await app.sql`select count(*)::int as n from audit_log where project_id = ${doomed}`)[0].n).toBe(0);
  });
});

describe("reading", () => {
  it("answers pages newest first with the actor, and pages by `before`", async () => {
    const first = await call(app, "GET", `${P()}/audit?limit=3`, { cookie: users.admin.cookie });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(3);
    expect(first.body.data[0]).toMatchObject({ action: "project.renamed", target: "Team Game 2", actor: { id: users.admin.id, email: users.admin.email } });
    expect(first.body.data[0].at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const ids = first.body.data.map((d: any) => Number(d.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const second = await call(app, "GET", `${P()}/audit?limit=3&before=${first.body.next_before}`, { cookie: users.admin.cookie });
    expect(Number(second.body.data[0].id)).toBeLessThan(ids[2]);
    // walking every page sees every row once
    const seen: string[] = [];
    for (let before = ""; ; ) {
      const p = await call(app, "GET", `${P()}/audit?limit=7${before ? `&before=${before}` : ""}`, { cookie: users.owner.cookie });
      seen.push(...p.body.data.map((d: any) => d.id));
      if (!p.body.next_before) break;
      before = p.body.next_before;
    }
    const [{ n }] = await app.sql`select count(*)::int as n from audit_log where project_id = ${projectId}`;
    expect(new Set(seen).size).toBe(n);
    expect(seen).toHaveLength(n);
  });

  it("filters by action, action family, actor (id or email) and time", async () => {
    const get = async (q: string) => {
      const r = await call(app, "GET", `${P()}/audit?limit=200&${q}`, { cookie: users.owner.cookie });
      expect(r.status, q).toBe(200);
      return r.body.data as any[];
    };
    expect((await get("action=alert_rule.disabled")).map((d) => d.action)).toEqual(["alert_rule.disabled"]);
    const family = await get("action=member");
    expect(new Set(family.map((d) => d.action))).toEqual(new Set(["member.added", "member.role_changed", "member.removed"]));
    const byMember = await get(`actor=${encodeURIComponent(users.member.email.toUpperCase())}`);
    expect(byMember.map((d) => d.action)).toEqual(["share_link.created"]);
    expect((await get(`actor=${users.member.id}`)).map((d) => d.action)).toEqual(["share_link.created"]);
    const all = await get("");
    const pivot = all[Math.floor(all.length / 2)];
    await app.sql`update audit_log set at = '2026-01-15T00:00:00Z' where project_id = ${projectId} and id <= ${Number(pivot.id)}`;
    const old = await get("to=2026-01-16");
    expect(old.map((d) => d.id)).toEqual(all.filter((d) => Number(d.id) <= Number(pivot.id)).map((d) => d.id));
    const recent = await get("from=2026-01-16T00:00:00Z");
    expect(recent.length + old.length).toBe(all.length);
    expect(await get("from=2026-01-15&to=2026-01-15T00:00:00.001Z")).toHaveLength(old.length);
    await app.sql`update audit_log set at = now() where project_id = ${projectId} and at = '2026-01-15T00:00:00Z'`;
  });

  it("refuses bad filters with a 400 naming the parameter", async () => {
    for (const [q, path] of [
      ["action=drop%20table", "action"],
      ["actor=somebody", "actor"],
      ["from=yesterday", "from"],
      ["to=2026-13-45", "to"],
      ["from=2026-02-01&to=2026-01-01", "from"],
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["before=x", "before"],
      ["format=xml", "format"],
      ["action=%00", "action"],
    ]) {
      const r = await call(app, "GET", `${P()}/audit?${q}`, { cookie: users.owner.cookie });
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toBe("invalid_query");
      expect(r.body.details[0].path, q).toBe(path);
    }
  });

  it("exports CSV with RFC 4180 quoting and no formula a spreadsheet would run", async () => {
    const evil = '=HYPERLINK("http://evil.test","a, b")';
    expect((await call(app, "PATCH", P(), { cookie: users.owner.cookie, body: { name: evil } })).status).toBe(200);
    const res = await app.request(`${P()}/audit?format=csv&action=project.renamed`, { headers: { cookie: users.owner.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toContain("attachment");
    const lines = (await res.text()).split("\r\n");
    expect(lines[0]).toBe("id,at,actor_id,actor_email,action,target,details");
    expect(lines).toHaveLength(4); // header, two renames, the final empty string
    expect(lines[1]).toContain(`,project.renamed,"'=HYPERLINK(""http://evil.test"",""a, b"")",`);
    expect(lines[1]).toContain('""from"":""Team Game 2""');
    expect(lines[1]).toContain('""to"":""=HYPERLINK(\\""http://evil.test\\"",\\""a, b\\"")""');
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-2")).toBe("'-2");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tx")).toBe("'\tx");
    expect(csvCell("a\nb")).toBe('"a\nb"');
    expect(csvCell("plain")).toBe("plain");
    expect(csvCell(null)).toBe("");
    // a bad filter is a 400 in CSV form too
    expect((await call(app, "GET", `${P()}/audit?format=csv&from=nope`, { cookie: users.owner.cookie })).status).toBe(400);
  });

  it("the project log: owners and admins read it; members 403, other projects 404, signed out 401", async () => {
    for (const path of [`${P()}/audit`, `${P()}/audit?format=csv`]) {
      expect((await call(app, "GET", path, { cookie: users.owner.cookie })).status, path).toBe(200);
      expect((await call(app, "GET", path, { cookie: users.admin.cookie })).status, path).toBe(200);
      const member = await call(app, "GET", path, { cookie: users.member.cookie });
      expect(member.status, path).toBe(403);
      expect(member.body.error).toBe("forbidden");
      expect((await call(app, "GET", path, { cookie: users.outsider.cookie })).status, path).toBe(404);
      expect((await call(app, "GET", path, { cookie: root.cookie })).status, path).toBe(404);
      expect((await call(app, "GET", path)).status, path).toBe(401);
    }
    // the page: the same rule
    const page = (cookie?: string) => app.request(`/projects/${projectId}/audit`, { headers: cookie ? { cookie } : {}, redirect: "manual" });
    const ok = await page(users.admin.cookie);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Project renamed");
    expect((await page(users.member.cookie)).status).toBe(403);
    expect((await page(users.outsider.cookie)).status).toBe(404);
    expect((await page()).status).toBe(302);
  });

  it("the instance log: instance admins only; it holds accounts, passwords, instance admins and deleted projects", async () => {
    const r = await call(app, "GET", "/api/team/instance/audit?limit=200", { cookie: root.cookie });
    expect(r.status).toBe(200);
    const actions = new Set<string>(r.body.data.map((d: any) => d.action));
    for (const a of ["account.created", "account.password_changed", "account.password_reset", "instance_admin.granted", "instance_admin.revoked", "project.deleted"]) {
      expect(actions.has(a), a).toBe(true);
    }
    for (const a of actions) expect(a in INSTANCE_ACTIONS, String(a)).toBe(true);
    for (const path of ["/api/team/instance/audit", "/api/team/instance/audit?format=csv"]) {
      const owner = await call(app, "GET", path, { cookie: users.owner.cookie });
      expect(owner.status, path).toBe(403);
      expect(owner.body.error).toBe("forbidden");
      expect((await call(app, "GET", path)).status, path).toBe(401);
    }
    const page = (cookie?: string) => app.request("/instance/audit", { headers: cookie ? { cookie } : {}, redirect: "manual" });
    const ok = await page(root.cookie);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Instance audit log");
    expect((await page(users.owner.cookie)).status).toBe(403);
    // the frame links to it for instance admins only
    expect(await (await app.request("/projects", { headers: { cookie: root.cookie } })).text()).toContain('href="/instance/audit"');
    expect(await (await app.request("/projects", { headers: { cookie: users.owner.cookie } })).text()).not.toContain('href="/instance/audit"');
  });
});

describe("retention", () => {
  it("keeps rows for AUDIT_RETENTION_DAYS (365 by default) and prunes older ones", async () => {
    expect(testConfig(app.databaseUrl).auditRetentionDays).toBe(365);
    expect(testConfig(app.databaseUrl, { AUDIT_RETENTION_DAYS: "30" }).auditRetentionDays).toBe(30);
    expect(() => testConfig(app.databaseUrl, { AUDIT_RETENTION_DAYS: "0" })).toThrow(/AUDIT_RETENTION_DAYS/);
    const mark = await lastId();
    for (const days of [400, 366, 364, 10]) {
      await recordAudit(app.sql, { projectId, actorId: users.owner.id, action: "project.renamed", target: `aged ${days}`, details: {} });
      await app.sql`update audit_log set at = now() - make_interval(days => ${days}) where id = (select max(id) from audit_log)`;
    }
    expect(await pruneAudit(app.sql, 365, 1)).toBe(2);
    expect((await since(mark)).map((r) => r.target)).toEqual(["aged 364", "aged 10"]);
    expect(await pruneAudit(app.sql, 30)).toBe(1);
    expect((await since(mark)).map((r) => r.target)).toEqual(["aged 10"]);
  });
});
