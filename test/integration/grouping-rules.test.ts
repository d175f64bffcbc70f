import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { call, ingest, projectWithRoles, signedInRoles, type RoleUsers } from "../support/team.js";
import { RE2JS } from "re2js";
import { compileRule } from "../../app/ingest/rules.server.js";

/**
 * Grouping rules through real HTTP and PostgreSQL: each match kind and action at ingest (native and
 * Sentry), first match wins and reordering, ignored events neither stored nor counted but counted per
 * rule, preview against stored events, apply (merge with exact counts, or ignore), 400s naming the
 * field with nothing written, roles, the 100-rule bound, and a pathological regex.
 */

let app: TestApp;
let users: RoleUsers;

beforeAll(async () => {
  app = await startTestApp();
  users = await signedInRoles(app);
});
afterAll(() => app?.close());

const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

type Group = { id: string; message: string; title: string; count: number; status: string };
async function groups(apiKey: string): Promise<Group[]> {
  const r = await getJson(app, "/api/v1/errors?grouped=true&limit=100", apiKey);
  expect(r.status).toBe(200);
  return r.body.data;
}

const rulesUrl = (projectId: string) => `/api/team/projects/${projectId}/grouping-rules`;
const createRule = (projectId: string, body: unknown, cookie = users.owner.cookie) => call(app, "POST", rulesUrl(projectId), { cookie, body });
async function rule(projectId: string, body: unknown) {
  const r = await createRule(projectId, body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.rule as { id: string; position: number };
}
const listRules = async (projectId: string, cookie = users.owner.cookie) => (await call(app, "GET", rulesUrl(projectId), { cookie })).body.data as { id: string; position: number; hits: number; hits_today: number; last_hit_at: string | null; name: string | null }[];

async function tableCounts(projectId: string) {
  const [r] = await app.sql<{ events: number; groups: number; rules: number; hits: number }[]>`
    select (select count(*)::int from events where project_id = ${projectId}) as events,
      (select count(*)::int from error_groups where project_id = ${projectId}) as groups,
      (select count(*)::int from grouping_rules where project_id = ${projectId}) as rules,
      (select coalesce(sum(hits), 0)::int from grouping_rule_hits where project_id = ${projectId}) as hits`;
  return r;
}

const STACK = (path: string) => `${path}:12 function onHit\nServerScriptService.Main:3`;

describe("matches at ingest (group action)", () => {
  it("groups by exact message, regex, script path prefix, level and tag; a named rule titles its issue", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    await rule(projectId, { name: "Exact", match: { message: "Shop closed" }, action: "group" });
    await rule(projectId, { name: "Http failures", match: { message_regex: "^HttpError: (?i)timeout" }, action: "group" });
    await rule(projectId, { name: "Combat", match: { path: "ServerScriptService.Combat" }, action: "group" });
    await rule(projectId, { match: { level: "info" }, action: "group" });
    await rule(projectId, { name: "Beta", match: { tag: "beta" }, action: "group" });

    const r = await ingest(app, apiKey, {
      errors: [
        { message: "Shop closed" },
        { message: "Shop closed!" }, // not exact: default grouping
        { message: "HttpError: Timeout after 5s req 8f1" },
        { message: "HttpError: TIMEOUT after 9s req 77a" },
        { message: "Other: HttpError: timeout" }, // anchored: no
        { message: "attempt to index nil with 'Hp'", stack_trace: STACK("ServerScriptService.Combat.Hitbox") },
        { message: "attempt to call a nil value", stack_trace: STACK("ServerScriptService.Combat") },
        { message: "attempt to call a nil value", stack_trace: STACK("ServerScriptService.CombatUtil") }, // not under the path
        { message: "Player joined lobby 1", level: "info" },
        { message: "Player joined lobby 2", level: "info" },
        { message: "Beta crash A", tags: ["beta", "x"] },
        { message: "Beta crash B", tags: ["beta"] },
      ],
    });
    expect(r).toEqual({ success: true, count: 12, occurrences: 12, throttled: 0 });
    const gs = await groups(apiKey);
    const byTitle = (t: string) => gs.filter((g) => g.title === t);
    expect(byTitle("Exact").map((g) => g.count)).toEqual([1]);
    expect(byTitle("Http failures").map((g) => g.count)).toEqual([2]);
    expect(byTitle("Combat").map((g) => g.count)).toEqual([2]);
    expect(byTitle("Beta").map((g) => g.count)).toEqual([2]);
    // an unnamed rule's issue is titled by its first event's message, as any issue
    const info = gs.filter((g) => g.message.startsWith("Player joined lobby"));
    expect(info.map((g) => g.count)).toEqual([2]);
    // what no rule matched is grouped as before: one issue each
    expect(gs.filter((g) => ["Shop closed!", "Other: HttpError: timeout"].includes(g.message)).map((g) => g.count)).toEqual([1, 1]);
    expect(gs.filter((g) => g.message === "attempt to call a nil value" && g.title !== "Combat").map((g) => g.count)).toEqual([1]);
    expect(gs.reduce((n, g) => n + g.count, 0)).toBe(12);
  });

  it("all given match fields must hold; the rule's fingerprint replaces the client's", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    await rule(projectId, { name: "Warn in shop", match: { level: "warn", message_regex: "Shop" }, action: "group" });
    await ingest(app, apiKey, {
      errors: [
        { message: "Shop A", level: "warn", fingerprint: ["mine-1"] },
        { message: "Shop B", level: "warn", fingerprint: ["mine-2"] },
        { message: "Shop C", level: "error" },
      ],
    });
    const gs = await groups(apiKey);
    expect(gs.find((g) => g.title === "Warn in shop")!.count).toBe(2);
    expect(gs.find((g) => g.message === "Shop C")!.count).toBe(1);
    expect(gs).toHaveLength(2);
  });
});

describe("ignore", () => {
  it("stores and counts nothing on issues, answers how many were ignored, and counts hits per rule", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    const ig = await rule(projectId, { name: "Noise", match: { message_regex: "^Infinite yield possible" }, action: "ignore" });
    const r = await ingest(app, apiKey, {
      errors: [
        { message: "Infinite yield possible on 'Workspace:WaitForChild(\"Map\")'", count: 5 },
        { message: "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"X\")'" },
        { message: "Real error" },
      ],
    });
    expect(r).toEqual({ success: true, count: 3, occurrences: 1, throttled: 0, ignored: 2 });
    const only = await ingest(app, apiKey, { errors: [{ message: "Infinite yield possible on 'A'" }] });
    expect(only).toEqual({ success: true, count: 1, occurrences: 0, throttled: 0, ignored: 1 });

    const gs = await groups(apiKey);
    expect(gs.map((g) => [g.message, g.count])).toEqual([["Real error", 1]]);
    const t = await tableCounts(projectId);
    expect(t.events).toBe(1);
    expect(t.groups).toBe(1);
    const stats = await getJson(app, "/api/v1/stats?timeframe=24h", apiKey);
    expect(stats.body.total_errors).toBe(1);
    const [listed] = await listRules(projectId, users.member.cookie);
    expect(listed.id).toBe(ig.id);
    expect(listed.hits).toBe(3);
    expect(listed.hits_today).toBe(3);
    expect(listed.last_hit_at).not.toBeNull();
  });

  it("applies to Sentry events too (same accept step)", async () => {
    const { projectId } = await projectWithRoles(app.sql, users);
    await rule(projectId, { match: { message_regex: "ignored by rule" }, action: "ignore" });
    await rule(projectId, { name: "Sentry group", match: { message_regex: "grouped by rule" }, action: "group" });
    const key = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie: users.owner.cookie, body: {} });
    const dsnId = String(key.body.dsn).split("/").pop();
    const apiKey = (await call(app, "POST", `/api/team/projects/${projectId}/keys`, { cookie: users.owner.cookie, body: {} })).body.api_key as string;
    const send = async (value: string) => {
      const body = { exception: { values: [{ type: "Error", value }] } };
      const res = await app.request(`/api/${dsnId}/store/?sentry_key=${key.body.public_key}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
      expect(res.status).toBe(200);
      // the Sentry answer keeps its shape
      expect(Object.keys(await res.json()).every((k) => k === "id")).toBe(true);
    };
    await send("Workspace.A:1: ignored by rule 1");
    await send("Workspace.B:2: grouped by rule 1");
    await send("Workspace.C:3: grouped by rule 2");
    await countersApplied(app.sql);
    const gs = await groups(apiKey);
    expect(gs.map((g) => [g.title, g.count])).toEqual([["Sentry group", 2]]);
    expect((await tableCounts(projectId)).events).toBe(2);
    expect((await listRules(projectId))[0].hits).toBe(1);
  });
});

describe("order", () => {
  it("the first matching rule by position wins; PATCH position and PUT order move rules", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    const grp = await rule(projectId, { name: "All doors", match: { message_regex: "Door" }, action: "group" });
    const ign = await rule(projectId, { match: { message_regex: "Door 7" }, action: "ignore" });
    expect([grp.position, ign.position]).toEqual([0, 1]);
    expect(await ingest(app, apiKey, { errors: [{ message: "Door 7 stuck" }] })).not.toHaveProperty("ignored");

    // the ignore rule first
    const moved = await call(app, "PATCH", `${rulesUrl(projectId)}/${ign.id}`, { cookie: users.admin.cookie, body: { position: 0 } });
    expect(moved.status).toBe(200);
    expect((await listRules(projectId)).map((r) => [r.id, r.position])).toEqual([[ign.id, 0], [grp.id, 1]]);
    expect(await ingest(app, apiKey, { errors: [{ message: "Door 7 stuck" }, { message: "Door 8 stuck" }] })).toMatchObject({ ignored: 1, occurrences: 1 });

    // and back with PUT order
    const put = await call(app, "PUT", rulesUrl(projectId), { cookie: users.owner.cookie, body: { order: [grp.id, ign.id] } });
    expect(put.status).toBe(200);
    expect(put.body.data.map((r: { id: string }) => r.id)).toEqual([grp.id, ign.id]);
    expect(await ingest(app, apiKey, { errors: [{ message: "Door 7 stuck" }] })).not.toHaveProperty("ignored");
    const gs = await groups(apiKey);
    expect(gs.map((g) => [g.title, g.count])).toEqual([["All doors", 3]]);

    // an order that does not name every rule once is a 400, nothing moved
    const bad = await call(app, "PUT", rulesUrl(projectId), { cookie: users.owner.cookie, body: { order: [ign.id] } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("order");
    expect((await listRules(projectId)).map((r) => r.id)).toEqual([grp.id, ign.id]);

    // a new rule at position 0 moves the others down; deleting closes the gap
    const first = await rule(projectId, { match: { tag: "t" }, action: "ignore", position: 0 });
    expect((await listRules(projectId)).map((r) => [r.id, r.position])).toEqual([[first.id, 0], [grp.id, 1], [ign.id, 2]]);
    expect((await call(app, "DELETE", `${rulesUrl(projectId)}/${grp.id}`, { cookie: users.owner.cookie })).status).toBe(200);
    expect((await listRules(projectId)).map((r) => [r.id, r.position])).toEqual([[first.id, 0], [ign.id, 1]]);
  });
});

describe("preview and apply", () => {
  const messages = (n: number, text: string, users: number) => Array.from({ length: n }, (_, i) => ({ message: text, user_id: users + i }));

  it("preview counts matches per issue; apply merges the covered issues into the oldest, aliased, with exact counts", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    // three issues the default grouping keeps apart, plus an unrelated one
    await ingest(app, apiKey, { errors: messages(3, "Quest 'Dragon' failed: missing reward", 100) });
    await ingest(app, apiKey, { errors: [{ message: "Quest 'Dragon' failed: missing item", count: 4 }] });
    await ingest(app, apiKey, { errors: messages(2, "Quest 'Dragon' failed: missing npc", 200) });
    await ingest(app, apiKey, { errors: [{ message: "Unrelated" }] });
    const before = await groups(apiKey);
    expect(before).toHaveLength(4);
    const oldest = before.find((g) => g.message.endsWith("reward"))!;
    const body = { name: "Quest failures", match: { message_regex: "^Quest '.*' failed" }, action: "group" };

    const before_t = await tableCounts(projectId);
    const p = await call(app, "POST", `${rulesUrl(projectId)}/preview`, { cookie: users.member.cookie, body });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ scanned: 7, matched: 6, action: "group", would_merge: 2, would_ignore: 0 });
    expect(p.body.issues.map((i: { events: number }) => i.events)).toEqual([3, 2, 1]);
    expect(p.body.issues.map((i: { id: string }) => i.id)).toContain(oldest.id);
    // a preview saves nothing
    expect(await tableCounts(projectId)).toEqual(before_t);

    const saved = await rule(projectId, body);
    // a member may not apply
    expect((await call(app, "POST", `${rulesUrl(projectId)}/${saved.id}/apply`, { cookie: users.member.cookie, body: {} })).status).toBe(403);
    const a = await call(app, "POST", `${rulesUrl(projectId)}/${saved.id}/apply`, { cookie: users.admin.cookie, body: {} });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body.issue).toMatchObject({ id: oldest.id, title: "Quest failures", count: 9 });
    expect(a.body.merged).toHaveLength(2);
    expect(a.body.skipped).toEqual([]);

    const after = await groups(apiKey);
    expect(after.map((g) => [g.title, g.count]).sort()).toEqual([["Quest failures", 9], ["Unrelated", 1]]);
    const detail = await getJson(app, `/api/v1/errors/${oldest.id}`, apiKey);
    expect(detail.body.group.user_count).toBe(5);
    // the rule's next events reach the same issue through the alias
    await ingest(app, apiKey, { errors: [{ message: "Quest 'Cave' failed: boss escaped" }] });
    const later = await groups(apiKey);
    expect(later.find((g) => g.id === oldest.id)!.count).toBe(10);
    expect(later).toHaveLength(2);
    // the GET of the rule names its issue
    expect((await call(app, "GET", `${rulesUrl(projectId)}/${saved.id}`, { cookie: users.member.cookie })).body.rule.issue_id).toBe(oldest.id);
    // the merged issue lists its three parts
    const merged = await call(app, "GET", `/api/team/projects/${projectId}/groups/${oldest.id}/merged`, { cookie: users.owner.cookie });
    expect(merged.status).toBe(200);
    expect(merged.body.members).toHaveLength(3);
    // a share link names the issue by the rule too
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie: users.owner.cookie, body: { group_id: oldest.id, role: "viewer" } });
    expect(link.status).toBe(201);
    const shared = await call(app, "GET", `/api/share/${link.body.token}`);
    expect(shared.body.group.title).toBe("Quest failures");
  });

  it("apply merges into the rule's own issue when it already exists", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    await ingest(app, apiKey, { errors: [{ message: "Pet 'Rex' not found", count: 2 }, { message: "Pet 'Ada' not found", count: 3 }] });
    const saved = await rule(projectId, { name: "Pets", match: { message_regex: "^Pet '.*' not found$" }, action: "group" });
    await ingest(app, apiKey, { errors: [{ message: "Pet 'Zed' not found" }] });
    const ruleIssue = (await groups(apiKey)).find((g) => g.title === "Pets")!;
    expect(ruleIssue.count).toBe(1);
    const a = await call(app, "POST", `${rulesUrl(projectId)}/${saved.id}/apply`, { cookie: users.owner.cookie, body: {} });
    expect(a.status).toBe(200);
    expect(a.body.issue).toMatchObject({ id: ruleIssue.id, count: 6 });
    expect(a.body.merged).toHaveLength(2);
    expect((await groups(apiKey)).map((g) => [g.title, g.count])).toEqual([["Pets", 6]]);
  });

  it("an ignore rule's preview and apply: the covered issues become ignored", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    await ingest(app, apiKey, { errors: [{ message: "Spam 1 'a'" }, { message: "Spam 2 'b'" }, { message: "Keep" }] });
    const body = { match: { message_regex: "^Spam" }, action: "ignore" };
    const p = await call(app, "POST", `${rulesUrl(projectId)}/preview`, { cookie: users.owner.cookie, body });
    expect(p.body).toMatchObject({ matched: 2, would_merge: 0 });
    const covered = p.body.issues.length as number;
    expect(p.body.would_ignore).toBe(covered);
    const saved = await rule(projectId, body);
    const a = await call(app, "POST", `${rulesUrl(projectId)}/${saved.id}/apply`, { cookie: users.owner.cookie, body: {} });
    expect(a.status).toBe(200);
    expect(a.body.ignored).toHaveLength(covered);
    const gs = await groups(apiKey);
    expect(gs.filter((g) => g.status === "ignored").map((g) => g.message).sort()).toEqual(gs.filter((g) => g.message.startsWith("Spam")).map((g) => g.message).sort());
    expect(gs.find((g) => g.message === "Keep")!.status).toBe("open");
  });
});

describe("bad input", () => {
  it("400s name the field; nothing is written", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    const ok = await rule(projectId, { match: { message: "x" }, action: "group" });
    const before = await tableCounts(projectId);
    const cases: [unknown, string][] = [
      [{ match: { message_regex: "(?<=a)b" }, action: "group" }, "match.message_regex"],
      [{ match: { message_regex: "a(b" }, action: "group" }, "match.message_regex"],
      [{ match: { message_regex: "(a)\\1" }, action: "ignore" }, "match.message_regex"],
      [{ match: { message_regex: "a".repeat(1001) }, action: "group" }, "match.message_regex"],
      [{ match: {}, action: "group" }, "match"],
      [{ match: { level: "fatal" }, action: "group" }, "match.level"],
      [{ match: { message: "x" }, action: "merge" }, "action"],
      [{ match: { message: "x", colour: "red" }, action: "group" }, "match"],
      [{ action: "group" }, "match"],
      [{ match: { tag: "" }, action: "group" }, "match.tag"],
      [{ name: "n".repeat(201), match: { tag: "a" }, action: "group" }, "name"],
    ];
    for (const [body, path] of cases) {
      const r = await createRule(projectId, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details.map((d: { path: string }) => d.path), JSON.stringify(r.body)).toContain(path);
    }
    // the engine's reason is in the answer
    const re = await createRule(projectId, { match: { message_regex: "a(b" }, action: "group" });
    expect(re.body.details[0].message).toContain("missing closing )");
    const preview = await call(app, "POST", `${rulesUrl(projectId)}/preview`, { cookie: users.owner.cookie, body: { match: { message_regex: "(?<=a)b" }, action: "group" } });
    expect(preview.status).toBe(400);
    expect(preview.body.details[0].path).toBe("match.message_regex");
    const patch = await call(app, "PATCH", `${rulesUrl(projectId)}/${ok.id}`, { cookie: users.owner.cookie, body: { match: { message_regex: "x{2,1}" } } });
    expect(patch.status).toBe(400);
    expect(patch.body.details[0].path).toBe("match.message_regex");
    const badPos = await call(app, "PATCH", `${rulesUrl(projectId)}/${ok.id}`, { cookie: users.owner.cookie, body: { position: -1 } });
    expect(badPos.status).toBe(400);
    expect(badPos.body.details[0].path).toBe("position");
    expect(await tableCounts(projectId)).toEqual(before);
    expect((await listRules(projectId))[0].name).toBeNull();
    // the rule is unchanged: it still matches
    await ingest(app, apiKey, { errors: [{ message: "x" }] });
    expect((await groups(apiKey)).map((g) => g.count)).toEqual([1]);
  });

  it("404 for an unknown rule; roles: members read and preview, owners and admins write, outsiders see nothing", async () => {
    const { projectId } = await projectWithRoles(app.sql, users);
    const r = await rule(projectId, { match: { level: "warn" }, action: "ignore" });
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const [m, path] of [
      ["GET", `${rulesUrl(projectId)}/${unknown}`],
      ["PATCH", `${rulesUrl(projectId)}/${unknown}`],
      ["DELETE", `${rulesUrl(projectId)}/${unknown}`],
      ["POST", `${rulesUrl(projectId)}/${unknown}/apply`],
      ["GET", `${rulesUrl(projectId)}/not-a-uuid`],
    ] as const) {
      const res = await call(app, m, path, { cookie: users.owner.cookie, body: m === "GET" || m === "DELETE" ? undefined : { name: "n" } });
      expect(res.status, `${m} ${path}`).toBe(404);
      expect(res.body.error).toBe("not_found");
    }
    expect((await call(app, "GET", rulesUrl(projectId), { cookie: users.member.cookie })).status).toBe(200);
    expect((await call(app, "GET", `${rulesUrl(projectId)}/${r.id}`, { cookie: users.member.cookie })).status).toBe(200);
    expect((await createRule(projectId, { match: { tag: "a" }, action: "group" }, users.member.cookie)).status).toBe(403);
    expect((await call(app, "PATCH", `${rulesUrl(projectId)}/${r.id}`, { cookie: users.member.cookie, body: { name: "x" } })).status).toBe(403);
    expect((await call(app, "DELETE", `${rulesUrl(projectId)}/${r.id}`, { cookie: users.member.cookie })).status).toBe(403);
    expect((await call(app, "PUT", rulesUrl(projectId), { cookie: users.member.cookie, body: { order: [r.id] } })).status).toBe(403);
    expect((await createRule(projectId, { match: { tag: "a" }, action: "group" }, users.admin.cookie)).status).toBe(201);
    expect((await call(app, "GET", rulesUrl(projectId), { cookie: users.outsider.cookie })).status).toBe(404);
    expect((await call(app, "GET", rulesUrl(projectId))).status).toBe(401);
    expect((await tableCounts(projectId)).rules).toBe(2);
  });

  it("a project holds at most 100 rules: the 101st is a 409 and nothing is written", async () => {
    const { projectId } = await projectWithRoles(app.sql, users);
    const made = await Promise.all(Array.from({ length: 100 }, (_, i) => createRule(projectId, { match: { tag: `t${i}` }, action: "ignore" })));
    expect(made.map((r) => r.status)).toEqual(Array(100).fill(201));
    const positions = (await listRules(projectId)).map((r) => r.position);
    expect(positions).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const over = await createRule(projectId, { match: { tag: "one more" }, action: "ignore" });
    expect(over.status).toBe(409);
    expect(over.body.error).toBe("conflict");
    expect(over.body.message).toContain("100");
    expect((await tableCounts(projectId)).rules).toBe(100);
  });
});

describe("no rule makes ingest slow", () => {
  it("a pathological regex is accepted, runs on the linear-time engine, and ingest stays correct on long texts", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    const saved = await rule(projectId, { name: "Nested", match: { message_regex: "(a+)+$" }, action: "group" });
    // the rule is compiled by RE2JS (an automaton, no backtracking), whatever the pattern
    const compiled = compileRule({ id: saved.id, action: "group", name: null, match: { message_regex: "(a+)+$" } });
    expect(compiled).toBeDefined();
    expect(RE2JS.compile("(a+)+$").test("a".repeat(8000) + "b")).toBe(false);
    // 100 rules of it on the longest stored text, in one batch
    for (let i = 0; i < 99; i++) await createRule(projectId, { match: { message_regex: `(a+)+${"x".repeat(1 + (i % 5))}$` }, action: "ignore", position: 0 });
    const r = await ingest(app, apiKey, {
      errors: [
        { message: "a".repeat(8191) + "b" }, // no rule matches: default grouping
        { message: "a".repeat(8192) + "!".repeat(100) }, // cut to 8 KiB: only the `a`s are left, so the rule matches
        { message: "aaaa" },
      ],
    });
    // the 99 later rules, put first, end in x's: none matches; the `(a+)+$` rule takes the all-a texts
    expect(r).toEqual({ success: true, count: 3, occurrences: 3, throttled: 0 });
    const gs = await groups(apiKey);
    expect(gs.find((g) => g.title === "Nested")!.count).toBe(2);
    expect(gs).toHaveLength(2);
  });
});
