import { createHmac, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { FakeSlack } from "../support/fake-slack.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { QUIET_MS, sleep, waitFor } from "../support/wait.js";

/**
 * Alerts end to end: real server with pg-boss running, a local Discord and Slack, events through
 * POST /api/ingest, rules and channels through the Team API. Each test has its own project.
 */
let app: TestApp;
let discord: FakeDiscord;
let slack: FakeSlack;
let owner: { id: string; email: string; cookie: string };


const errors = (n: number, e: Record<string, unknown>) => ({ errors: Array.from({ length: n }, () => ({ ...e })) });

async function setup(rule: Record<string, unknown> | null) {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Alerts ${randomUUID().slice(0, 8)}`);
  const url = discord.webhookUrl();
  const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, {
    cookie: owner.cookie,
    body: { name: "Discord #alerts", kind: "discord", url },
  });
  expect(ch.status).toBe(201);
  let ruleId: string | undefined;
  if (rule) {
    const r = await call(app, "POST", `/api/team/projects/${projectId}/rules`, {
      cookie: owner.cookie,
      body: { name: "rule", channel_ids: [ch.body.channel.id], ...rule },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    ruleId = r.body.rule.id;
  }
  return { projectId, apiKey, url, channelId: ch.body.channel.id as string, ruleId };
}

async function createRule(projectId: string, channelId: string, rule: Record<string, unknown>) {
  const r = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie, body: { name: "rule", channel_ids: [channelId], ...rule } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.rule;
}

const groupId = async (projectId: string, message: string) =>
  (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message}`)[0].id;
const fingerprint = async (projectId: string, message: string) =>
  (await app.sql<{ fingerprint: string }[]>`select fingerprint from error_groups where project_id = ${projectId} and message = ${message}`)[0].fingerprint;

const dispatch = (body: unknown, key: string | null = app.services.config.notificationSecret) =>
  call(app, "POST", "/api/notifications/dispatch", { body, headers: key === null ? {} : { "x-internal-key": key } });

const deliveries = async (projectId: string) =>
  (await call(app, "GET", `/api/team/projects/${projectId}/deliveries`, { cookie: owner.cookie })).body.data as any[];

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  slack = await new FakeSlack().start();
  // one account sends many test alerts here; the per-user limit has its own file (alert-test-limit.test.ts)
  app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true", ALERT_TEST_RATE_LIMIT: "1000" });
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});

afterAll(async () => {
  await app?.close();
  await discord?.close();
  await slack?.close();
});

describe("new_group rule", () => {
  it("a new error produces exactly one Discord message within 3 s; 1,000 more occurrences inside the cooldown produce none", async () => {
    const { projectId, apiKey, url } = await setup({ trigger: "new_group" });
    // long enough to need truncation: the fake answers 400 to an embed over Discord's limits
    const message = `Workspace.Shop:42: attempt to index nil with 'Price' @everyone ${"x".repeat(8000)}`;
    const stack = Array.from({ length: 1000 }, (_, i) => `Workspace.Shop.Module${i}, line ${i}`).join("\n");
    const t0 = Date.now();
    await ingest(app, apiKey, { errors: [{ message, stack_trace: stack, environment: "production" }] });
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url), 3000);
    expect(msg.receivedAt - t0).toBeLessThan(3000);
    const embed = msg.body.embeds[0];
    expect(embed.title.length).toBeLessThanOrEqual(256);
    expect(embed.title).toContain("New issue in ");
    expect(embed.description.length).toBeLessThanOrEqual(4096);
    expect(embed.description).toContain("attempt to index nil");
    expect(embed.description).toContain("Workspace.Shop.Module0, line 0");
    expect(msg.body.allowed_mentions).toEqual({ parse: [] });

    // 1,000 more occurrences: 10 requests with count 100 (the same long text keeps the fingerprint;
    // fingerprinting an 8 KB message costs ~0.2 s an event, so few events carry the occurrences)
    for (let i = 0; i < 10; i++) await ingest(app, apiKey, errors(1, { message, stack_trace: stack, count: 100 }));
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    const log = await deliveries(projectId);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ status: "sent", response_code: 204, trigger: "new_group", rule_name: "rule", channel_name: "Discord #alerts" });
  });

  it("a group that existed before the rule does not count as new", async () => {
    const { projectId, apiKey, url, channelId } = await setup(null);
    await ingest(app, apiKey, { errors: [{ message: "old error" }] });
    await createRule(projectId, channelId, { trigger: "new_group" });
    await ingest(app, apiKey, { errors: [{ message: "old error" }] });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
  });

  it("filters: a level or environment the rule does not name stays silent, a matching one alerts", async () => {
    const { apiKey, url } = await setup({ trigger: "new_group", levels: ["error"], environments: ["production"], message_contains: "DataStore" });
    await ingest(app, apiKey, {
      errors: [
        { message: "DataStore warn", level: "warn" },
        { message: "DataStore in studio", environment: "studio" },
        { message: "something else entirely" },
        { message: "DataStore request dropped" },
      ],
    });
    await waitFor(() => discord.for(url).length > 0, 3000);
    await sleep(QUIET_MS);
    const got = discord.for(url);
    expect(got).toHaveLength(1);
    expect(got[0].body.embeds[0].title).toContain("DataStore request dropped");
  });
});

describe("a burst of new groups", () => {
  it("is not a flood: four alerts one by one, then one summary naming the rest", async () => {
    const { apiKey, url } = await setup({ trigger: "new_group" });
    await ingest(app, apiKey, { errors: Array.from({ length: 12 }, (_, i) => ({ message: `Deploy broke thing ${i}`, fingerprint: `burst-${i}` })) });
    await waitFor(() => discord.for(url).length >= 5, 3000);
    await sleep(QUIET_MS);
    const got = discord.for(url);
    expect(got).toHaveLength(5);
    const summary = got.find((m) => m.body.embeds[0].description.includes("8 more errors matched this rule"));
    expect(summary).toBeDefined();
  });
});

describe("a rule's minute budget", () => {
  it("caps a rule at 10 messages a minute across dispatches", async () => {
    const { apiKey, url } = await setup({ trigger: "new_group" });
    // the budget is a fixed minute window: start well inside one
    const s = new Date().getUTCSeconds();
    if (s > 45) await sleep((61 - s) * 1000);
    for (let burst = 0; burst < 3; burst++) {
      await ingest(app, apiKey, { errors: Array.from({ length: 12 }, (_, i) => ({ message: `Wave ${burst} error ${i}`, fingerprint: `wave-${burst}-${i}` })) });
      await sleep(1500);
    }
    await sleep(1000);
    expect(discord.for(url)).toHaveLength(10);
  });
});

describe("regression rule", () => {
  it("an error that comes back after being resolved produces one message", async () => {
    const { projectId, apiKey, url } = await setup({ trigger: "regression" });
    await ingest(app, apiKey, { errors: [{ message: "Regressing error" }] });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    const gid = await groupId(projectId, "Regressing error");
    const r = await call(app, "PATCH", `/api/team/projects/${projectId}/groups/${gid}`, { cookie: owner.cookie, body: { status: "resolved" } });
    expect(r.status).toBe(200);
    await ingest(app, apiKey, errors(5, { message: "Regressing error" }));
    await waitFor(() => discord.for(url).length > 0, 3000);
    await ingest(app, apiKey, errors(5, { message: "Regressing error" }));
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    expect(discord.for(url)[0].body.embeds[0].title).toContain("Regression");
  });
});

describe("regression inside the cooldown", () => {
  it("is not alerted, and not alerted late either once the cooldown has passed", async () => {
    const { projectId, apiKey, url } = await setup({ trigger: "regression" });
    const msg = "Flapping error";
    await ingest(app, apiKey, { errors: [{ message: msg }] });
    const gid = await groupId(projectId, msg);
    const resolve = () => call(app, "PATCH", `/api/team/projects/${projectId}/groups/${gid}`, { cookie: owner.cookie, body: { status: "resolved" } });
    await resolve();
    await ingest(app, apiKey, { errors: [{ message: msg }] });
    await waitFor(() => discord.for(url).length === 1, 3000);
    await resolve();
    await ingest(app, apiKey, { errors: [{ message: msg }] }); // second regression, inside the 30 min cooldown
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    // the cooldown passes; a later occurrence of the still-open group is not a new regression
    await app.sql`update alert_state set last_sent = now() - interval '2 hours' where project_id = ${projectId}`;
    const fp = await fingerprint(projectId, msg);
    await ingest(app, apiKey, { errors: [{ message: msg }] });
    expect((await dispatch({ project_id: projectId, fingerprints: [fp] })).body).toEqual({ sent: 0, failed: 0 });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
  });
});

describe("frequency rule", () => {
  it("fires once when the threshold is crossed, then stays quiet inside the cooldown", async () => {
    const { apiKey, url } = await setup({ trigger: "frequency", threshold_count: 50, window_minutes: 10 });
    await ingest(app, apiKey, { errors: [{ message: "Spiky error", count: 49 }] });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    await ingest(app, apiKey, { errors: [{ message: "Spiky error" }] });
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url), 3000);
    expect(msg.body.embeds[0].description).toContain("threshold 50");
    await ingest(app, apiKey, errors(100, { message: "Spiky error" }));
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
  });
});

describe("the ingest trigger", () => {
  const jobs = async (projectId: string) =>
    (await app.sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = 'alerts' and data->>'project_id' = ${projectId}`)[0].n;
  const storm = async (apiKey: string, message: string) => {
    const one = { errors: [{ message }] };
    await Promise.all(Array.from({ length: 10 }, async () => {
      for (let i = 0; i < 20; i++) await ingest(app, apiKey, one);
    }));
  };

  it("coalesces a storm of 200 requests into a handful of jobs per project", async () => {
    const { projectId, apiKey } = await setup({ trigger: "frequency", threshold_count: 100000, window_minutes: 10 });
    const started = performance.now();
    await storm(apiKey, "Storm error");
    const elapsed = performance.now() - started;
    await sleep(500);
    const n = await jobs(projectId);
    expect(n).toBeGreaterThan(0);
    // at most one job per project per 200 ms flush window (a loaded machine stretches the storm, not
    // the coalescing), and never one per request
    expect(n).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 2);
    expect(n).toBeLessThan(100);
  });

  it("enqueues nothing for a project without rules, and only new or regressed groups without a frequency rule", async () => {
    const none = await setup(null);
    await storm(none.apiKey, "Unwatched storm");
    const changes = await setup({ trigger: "new_group" });
    await ingest(app, changes.apiKey, { errors: [{ message: "Seen once" }] });
    await sleep(500);
    const afterFirst = await jobs(changes.projectId);
    expect(afterFirst).toBe(1);
    await storm(changes.apiKey, "Seen once");
    await sleep(500);
    expect(await jobs(none.projectId)).toBe(0);
    expect(await jobs(changes.projectId)).toBe(afterFirst);
  });
});

describe("ignored groups", () => {
  it("never alert, whatever the rule", async () => {
    const { projectId, apiKey, url, channelId } = await setup(null);
    await ingest(app, apiKey, { errors: [{ message: "Noisy but ignored" }] });
    const gid = await groupId(projectId, "Noisy but ignored");
    await call(app, "PATCH", `/api/team/projects/${projectId}/groups/${gid}`, { cookie: owner.cookie, body: { status: "ignored" } });
    await createRule(projectId, channelId, { trigger: "frequency", threshold_count: 1, window_minutes: 5 });
    await ingest(app, apiKey, errors(50, { message: "Noisy but ignored" }));
    const fp = await fingerprint(projectId, "Noisy but ignored");
    expect((await dispatch({ project_id: projectId, fingerprints: [fp] })).body).toEqual({ sent: 0, failed: 0 });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
  });
});

describe("POST /api/notifications/dispatch", () => {
  // events first, rule after: the ingest trigger found no rules, so only this call evaluates
  async function frequencyProject() {
    const p = await setup(null);
    await ingest(app, p.apiKey, { errors: [{ message: "Dispatch me", count: 3 }] });
    await sleep(400);
    await createRule(p.projectId, p.channelId, { trigger: "frequency", threshold_count: 3, window_minutes: 5 });
    return { ...p, fp: await fingerprint(p.projectId, "Dispatch me") };
  }

  it("a Discord 429 is retried after retry_after and counted as sent", async () => {
    const { projectId, url, fp } = await frequencyProject();
    discord.rateLimitNext(1.2);
    const before = discord.requests.length;
    const r = await dispatch({ project_id: projectId, fingerprints: [fp] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ sent: 1, failed: 0 });
    const tries = discord.requests.slice(before).filter((q) => q.webhook === new URL(url).pathname);
    expect(tries.map((q) => q.status)).toEqual([429, 204]);
    expect(tries[1].at - tries[0].at).toBeGreaterThanOrEqual(1150);
    expect((await deliveries(projectId))[0]).toMatchObject({ status: "sent", response_code: 204, attempts: 2 });
    // inside the cooldown a second dispatch sends nothing
    expect((await dispatch({ project_id: projectId, fingerprints: [fp] })).body).toEqual({ sent: 0, failed: 0 });
  });

  it("a deleted webhook is counted as failed and logged", async () => {
    const { projectId, url, fp } = await frequencyProject();
    discord.deleteWebhook(url);
    expect((await dispatch({ project_id: projectId, fingerprints: [fp] })).body).toEqual({ sent: 0, failed: 1 });
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "failed", response_code: 404, attempts: 1, trigger: "frequency" });
    expect(d.error).toContain("Unknown Webhook");
  });

  it("an empty fingerprints array is a valid no-op: {sent: 0, failed: 0}, nothing delivered", async () => {
    const { projectId, fp } = await frequencyProject();
    const r = await dispatch({ project_id: projectId, fingerprints: [] });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ sent: 0, failed: 0 });
    expect(await deliveries(projectId)).toEqual([]);
    // the same project does alert for its fingerprint, so the no-op is not an empty rule set
    expect((await dispatch({ project_id: projectId, fingerprints: [fp] })).body).toEqual({ sent: 1, failed: 0 });
  });

  it("401 without the right x-internal-key, 400 on a bad body", async () => {
    const good = { project_id: randomUUID(), fingerprints: ["abc"] };
    expect((await dispatch(good, null)).status).toBe(401);
    const wrong = await dispatch(good, "not-the-secret-at-all");
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("unauthorized");
    for (const bad of [
      {},
      { project_id: "nope", fingerprints: ["a"] },
      { ...good, fingerprints: [""] },
      { ...good, fingerprints: ["a\u0000b"] },
      { ...good, fingerprints: Array(1001).fill("a") },
      "{oops",
    ]) {
      const r = await dispatch(bad);
      expect(r.status, JSON.stringify(bad).slice(0, 60)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
    }
    expect((await dispatch(good)).body).toEqual({ sent: 0, failed: 0 });
  });
});

describe("POST /api/notifications/test and the Team API", () => {
  it("sends a synthetic alert for an owner; 404 for a member or another project's user; 502 for a failing channel", async () => {
    const member = await makeUser(app.sql);
    const outsider = await makeUser(app.sql);
    const { projectId, channelId, url } = await setup(null);
    await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: member.email, role: "member" } });
    const ok = await call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: channelId } });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect(discord.for(url)[0].body.embeds[0].title).toContain("Test alert");
    for (const u of [member, outsider]) {
      const r = await call(app, "POST", "/api/notifications/test", { cookie: await login(app, u.email), body: { channel_id: channelId } });
      expect(r.status).toBe(404);
      expect(r.body.error).toBe("not_found");
    }
    expect((await call(app, "POST", "/api/notifications/test", { body: { channel_id: channelId } })).status).toBe(401);
    discord.deleteWebhook(url);
    const bad = await call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: channelId } });
    expect(bad.status).toBe(502);
    expect(bad.body.message).toContain("Unknown Webhook");
    const log = await deliveries(projectId);
    expect(log.map((d) => [d.trigger, d.status])).toEqual([["test", "failed"], ["test", "sent"]]);
  });

  it("channel URLs are masked after saving; other projects' ids are 404; bad rules are 400", async () => {
    const a = await setup(null);
    const b = await setup(null);
    const token = new URL(a.url).pathname.split("/").pop()!;
    const list = await call(app, "GET", `/api/team/projects/${a.projectId}/channels`, { cookie: owner.cookie });
    expect(list.status).toBe(200);
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(list.body.data[0].url).toMatch(/\/api\/webhooks\/\d+\/••••••$/);
    const other = await makeUser(app.sql);
    const otherCookie = await login(app, other.email);
    expect((await call(app, "PATCH", `/api/team/projects/${a.projectId}/channels/${a.channelId}`, { cookie: otherCookie, body: { enabled: false } })).status).toBe(404);
    // b's channel through a's project path
    expect((await call(app, "PATCH", `/api/team/projects/${a.projectId}/channels/${b.channelId}`, { cookie: owner.cookie, body: { enabled: false } })).status).toBe(404);
    const badRule = await call(app, "POST", `/api/team/projects/${a.projectId}/rules`, {
      cookie: owner.cookie,
      body: { name: "r", trigger: "frequency", channel_ids: [a.channelId] },
    });
    expect(badRule.status).toBe(400);
    const foreign = await call(app, "POST", `/api/team/projects/${a.projectId}/rules`, {
      cookie: owner.cookie,
      body: { name: "r", trigger: "new_group", channel_ids: [b.channelId] },
    });
    expect(foreign.status).toBe(400);
    const rule = await createRule(a.projectId, a.channelId, { trigger: "new_group" });
    expect(rule.cooldown_minutes).toBe(30);
    const patched = await call(app, "PATCH", `/api/team/projects/${a.projectId}/rules/${rule.id}`, { cookie: owner.cookie, body: { enabled: false } });
    expect(patched.body.rule.enabled).toBe(false);
    expect((await call(app, "DELETE", `/api/team/projects/${a.projectId}/channels/${a.channelId}`, { cookie: owner.cookie })).status).toBe(200);
    const rules = await call(app, "GET", `/api/team/projects/${a.projectId}/rules`, { cookie: owner.cookie });
    expect(rules.body.data[0].channel_ids).toEqual([]);
    const badUrl = await call(app, "POST", `/api/team/projects/${a.projectId}/channels`, { cookie: owner.cookie, body: { name: "x", kind: "discord", url: "https://example.com/hook" } });
    expect(badUrl.status).toBe(400);
  });

  it("Slack gets text + blocks; a generic webhook is signed with HMAC-SHA256 over timestamp.body", async () => {
    const { projectId } = await setup(null);
    const hook = slack.hookUrl();
    const s = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie: owner.cookie, body: { name: "Slack", kind: "slack", url: hook } });
    expect((await call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: s.body.channel.id } })).body).toEqual({ success: true });
    const m = slack.messages.find((x) => x.path === new URL(hook).pathname)!;
    expect(typeof m.body.text).toBe("string");
    expect(Array.isArray(m.body.blocks)).toBe(true);
    slack.setState(hook, "channel_is_archived");
    const archived = await call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: s.body.channel.id } });
    expect(archived.status).toBe(502);
    expect(archived.body.message).toContain("channel_is_archived");

    const receiver = await startReceiver();
    const { got } = receiver;
    const secret = "a-shared-secret-of-some-length";
    const w = await call(app, "POST", `/api/team/projects/${projectId}/channels`, {
      cookie: owner.cookie,
      body: { name: "Hook", kind: "webhook", url: receiver.url, secret },
    });
    expect(w.body.channel.has_secret).toBe(true);
    expect(w.body.secret).toBeUndefined();
    expect((await call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: w.body.channel.id } })).body).toEqual({ success: true });
    receiver.close();
    const { headers, body } = got[0];
    const ts = String(headers["x-timestamp"]);
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(60);
    expect(headers["x-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex")}`);
    expect(JSON.parse(body)).toMatchObject({ type: "test", project: { id: projectId } });
  });

  it("private destinations are refused unless WEBHOOK_ALLOW_PRIVATE is set", async () => {
    const strict = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "false", ALERT_TEST_RATE_LIMIT: "1000" }, app.databaseUrl);
    try {
      const { projectId } = await setup(null);
      // http is refused outright without WEBHOOK_ALLOW_PRIVATE; a literal non-global address when the
      // channel is saved; a name that resolves to one at send time
      const cookie = owner.cookie;
      for (const host of ["127.0.0.1:1", "[::127.0.0.1]", "[::ffff:7f00:1]", "[fec0::1]", "[fd00::1]", "169.254.169.254", "100.64.0.1"]) {
        const bad = await call(strict, "POST", `/api/team/projects/${projectId}/channels`, {
          cookie,
          body: { name: "literal", kind: "discord", url: `https://${host}/api/webhooks/1/abc` },
        });
        expect(bad.status, host).toBe(400);
        expect(bad.body).toMatchObject({ error: "invalid_payload", details: [{ path: "url" }] });
        expect(bad.body.message, host).toContain("WEBHOOK_ALLOW_PRIVATE=true");
      }
      // a local receiver over plain http: the refusal says how an operator allows it
      const http = await call(strict, "POST", `/api/team/projects/${projectId}/channels`, {
        cookie,
        body: { name: "local", kind: "webhook", url: "http://127.0.0.1:8080/hook" },
      });
      expect(http.status).toBe(400);
      expect(http.body.message).toMatch(/^url must be an https URL\. .*WEBHOOK_ALLOW_PRIVATE=true/);
      const create = await call(strict, "POST", `/api/team/projects/${projectId}/channels`, {
        cookie,
        body: { name: "loop", kind: "discord", url: `https://localhost:1/api/webhooks/1/abc` },
      });
      expect(create.status).toBe(201);
      const r = await call(strict, "POST", "/api/notifications/test", { cookie, body: { channel_id: create.body.channel.id } });
      expect(r.status).toBe(502);
      expect(r.body.message).toMatch(/private or loopback/);
    } finally {
      await strict.close();
    }
  });
});

describe("Team API access for channels, rules and deliveries", () => {
  it("members read, owners/admins change, other users get 404, no session 401, cross-site 403", async () => {
    const member = await makeUser(app.sql);
    const admin = await makeUser(app.sql);
    const outsider = await makeUser(app.sql);
    const { projectId, channelId, ruleId } = await setup({ trigger: "new_group" });
    for (const [u, role] of [[member, "member"], [admin, "admin"]] as const) {
      await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: owner.cookie, body: { email: u.email, role } });
    }
    const cookies = { member: await login(app, member.email), admin: await login(app, admin.email), outsider: await login(app, outsider.email) };
    const P = `/api/team/projects/${projectId}`;
    const reads = [`${P}/channels`, `${P}/rules`, `${P}/deliveries`];
    const writes: [string, string, unknown][] = [
      ["POST", `${P}/channels`, { name: "x", kind: "discord", url: discord.webhookUrl() }],
      ["PATCH", `${P}/channels/${channelId}`, { name: "renamed" }],
      ["POST", `${P}/rules`, { name: "r", trigger: "regression", channel_ids: [channelId] }],
      ["PATCH", `${P}/rules/${ruleId}`, { cooldown_minutes: 5 }],
    ];
    for (const path of reads) {
      expect((await call(app, "GET", path, { cookie: cookies.member })).status, path).toBe(200);
      expect((await call(app, "GET", path, { cookie: cookies.outsider })).status, path).toBe(404);
      expect((await call(app, "GET", path)).status, path).toBe(401);
    }
    for (const [method, path, body] of writes) {
      expect((await call(app, method, path, { cookie: cookies.member, body })).status, `${method} ${path}`).toBe(403);
      expect((await call(app, method, path, { cookie: cookies.outsider, body })).status, `${method} ${path}`).toBe(404);
      expect((await call(app, method, path, { cookie: cookies.admin, body, headers: { origin: "https://evil.example" } })).status).toBe(403);
      expect((await call(app, method, path, { cookie: cookies.admin, body: JSON.stringify(body), headers: { "content-type": "text/plain" } })).status).toBe(415);
      expect((await call(app, method, path, { cookie: cookies.admin, body })).status, `${method} ${path}`).toBeLessThan(300);
    }
    expect((await call(app, "DELETE", `${P}/rules/${ruleId}`, { cookie: cookies.member })).status).toBe(403);
    expect((await call(app, "DELETE", `${P}/rules/${ruleId}`, { cookie: cookies.admin })).status).toBe(200);
    expect((await call(app, "DELETE", `${P}/rules/${ruleId}`, { cookie: cookies.admin })).status).toBe(404);
    expect((await call(app, "DELETE", `${P}/channels/${channelId}`, { cookie: cookies.admin })).status).toBe(200);
  });
});
