import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { COINS_GEMS_MAP } from "../support/economy-maps.js";

/**
 * Editing alert rules (Team API PATCH with the create schema, and the Alerts page's edit form over
 * HTTP), a rule's derived state from its channels, the environments the page offers, and the
 * delivery log's trigger names.
 */
let app: TestApp;
let owner: { id: string; email: string; cookie: string };

beforeAll(async () => {
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});
afterAll(() => app?.close());

async function setup() {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Rules ${randomUUID().slice(0, 8)}`);
  const ch = async (name: string) => {
    const r = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie: owner.cookie, body: { name, kind: "webhook", url: "http://127.0.0.1:9/hook" } });
    expect(r.status).toBe(201);
    return r.body.channel.id as string;
  };
  const a = await ch("A");
  const b = await ch("B");
  const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, {
    cookie: owner.cookie,
    body: { name: "Prod errors", trigger: "new_group", levels: ["error"], environments: ["production"], channel_ids: [a] },
  });
  expect(rule.status).toBe(201);
  return { projectId, apiKey, a, b, ruleId: rule.body.rule.id as string, path: `/api/team/projects/${projectId}/rules/${rule.body.rule.id}` };
}

const row = async (id: string) => (await app.sql`select * from alert_rules where id = ${id}`)[0];
const getRules = async (projectId: string) => (await call(app, "GET", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie })).body.data as any[];

describe("PATCH a rule", () => {
  it("takes the same fields as create, whole or in part, and the result is validated whole", async () => {
    const { path, b } = await setup();
    const whole = await call(app, "PATCH", path, {
      cookie: owner.cookie,
      body: { name: "Spikes in beta", trigger: "frequency", threshold_count: 50, window_minutes: 5, levels: [], environments: ["beta", "production"], message_contains: "DataStore", channel_ids: [b], cooldown_minutes: 10, server_only: true, min_players: 3 },
    });
    expect(whole.status, JSON.stringify(whole.body)).toBe(200);
    expect(whole.body.rule).toMatchObject({ name: "Spikes in beta", trigger: "frequency", threshold_count: 50, window_minutes: 5, environments: ["beta", "production"], message_contains: "DataStore", channel_ids: [b], cooldown_minutes: 10, server_only: true, min_players: 3, state: "active" });
    const part = await call(app, "PATCH", path, { cookie: owner.cookie, body: { trigger: "regression" } });
    expect(part.status).toBe(200);
    // thresholds mean something only for a spike: they go with the trigger
    expect(part.body.rule).toMatchObject({ trigger: "regression", threshold_count: null, window_minutes: null, name: "Spikes in beta", environments: ["beta", "production"] });
  });

  it("answers bad input with a 400 naming the field, and writes nothing", async () => {
    const { path, ruleId, projectId } = await setup();
    const other = await makeProject(app.sql, owner.id, [], "Other");
    const foreign = await call(app, "POST", `/api/team/projects/${other.projectId}/channels`, { cookie: owner.cookie, body: { name: "X", kind: "webhook", url: "http://127.0.0.1:9/x" } });
    const before = await row(ruleId);
    const bad: [unknown, string][] = [
      [{ name: "" }, "name"],
      [{ trigger: "sometimes" }, "trigger"],
      [{ trigger: "frequency" }, "threshold_count"],
      [{ threshold_count: 0, trigger: "frequency", window_minutes: 5 }, "threshold_count"],
      [{ channel_ids: [] }, "channel_ids"],
      [{ channel_ids: [foreign.body.channel.id] }, "channel_ids"],
      [{ environments: "production" }, "environments"],
      [{ levels: ["fatal"] }, "levels"],
      [{ cooldown_minutes: -1 }, "cooldown_minutes"],
      [{ colour: "red" }, "colour"],
      [{ trigger: "supply_growth" }, "growth_pct"],
      [{ trigger: "economy_anomaly", currency: "robux" }, "currency"],
      [{ trigger: "server_memory" }, "memory_mb"],
    ];
    for (const [body, field] of bad) {
      const r = await call(app, "PATCH", path, { cookie: owner.cookie, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(JSON.stringify(r.body), JSON.stringify(body)).toContain(field);
    }
    const notJson = await call(app, "PATCH", path, { cookie: owner.cookie, body: "{not json" });
    expect(notJson.status).toBe(400);
    expect(await row(ruleId)).toEqual(before);
    const missing = await call(app, "PATCH", `/api/team/projects/${projectId}/rules/${randomUUID()}`, { cookie: owner.cookie, body: { name: "x" } });
    expect(missing.status).toBe(404);
  });

  it("edits economy and health rules too", async () => {
    const { path, projectId } = await setup();
    await putEconomyMap(app.sql, projectId, COINS_GEMS_MAP, null);
    const eco = await call(app, "PATCH", path, { cookie: owner.cookie, body: { trigger: "economy_anomaly", currency: "GEMS", min_amount: "1000" } });
    expect(eco.status, JSON.stringify(eco.body)).toBe(200);
    expect(eco.body.rule).toMatchObject({ trigger: "economy_anomaly", currency: "gems", min_amount: "1000", levels: [], environments: [] });
    const health = await call(app, "PATCH", path, { cookie: owner.cookie, body: { trigger: "server_memory", memory_mb: 3000, environments: ["production"] } });
    expect(health.status, JSON.stringify(health.body)).toBe(200);
    expect(health.body.rule).toMatchObject({ trigger: "server_memory", memory_mb: 3000, window_minutes: 5, currency: null, min_amount: null, environments: ["production"] });
  });
});

describe("a rule's state", () => {
  it("reads no_active_channel while every channel it sends to is disabled or deleted", async () => {
    const { projectId, a, b, path } = await setup();
    const state = async () => (await getRules(projectId))[0].state;
    expect(await state()).toBe("active");
    await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${a}`, { cookie: owner.cookie, body: { enabled: false } });
    expect(await state()).toBe("no_active_channel");
    // the row itself is still enabled: the state is derived
    expect((await getRules(projectId))[0].enabled).toBe(true);
    const both = await call(app, "PATCH", path, { cookie: owner.cookie, body: { channel_ids: [a, b] } });
    expect(both.body.rule.state).toBe("active");
    await call(app, "DELETE", `/api/team/projects/${projectId}/channels/${b}`, { cookie: owner.cookie });
    expect(await state()).toBe("no_active_channel");
    await call(app, "PATCH", path, { cookie: owner.cookie, body: { enabled: false } });
    expect(await state()).toBe("disabled");
    await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${a}`, { cookie: owner.cookie, body: { enabled: true } });
    expect(await state()).toBe("disabled");
    await call(app, "PATCH", path, { cookie: owner.cookie, body: { enabled: true } });
    expect(await state()).toBe("active");
  });
});

/** A form post to the Alerts page as a browser without JavaScript sends it (a document POST). */
const pagePost = (projectId: string, fields: [string, string][], headers: Record<string, string> = {}) =>
  app.request(`/projects/${projectId}/alerts`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: owner.cookie, origin: new URL(app.url).origin, ...headers },
    body: new URLSearchParams(fields).toString(),
  });

describe("the Alerts page", () => {
  it("edits a rule through its form: ticked and typed environments, channels, and a refused edit writes nothing", async () => {
    const { projectId, apiKey, ruleId, a, b } = await setup();
    await ingest(app, apiKey, { errors: [{ message: "seen in staging", environment: "staging" }, { message: "seen in prod", environment: "production" }] });
    const page = await app.request(`/projects/${projectId}/alerts?edit=${ruleId}`, { headers: { cookie: owner.cookie } });
    const html = await page.text();
    expect(page.status).toBe(200);
    // the environments the data has seen are offered as ticks, the rule's own ticked
    expect(html).toContain('<input type="checkbox" name="environments" value="staging"/>');
    expect(html).toContain('<input type="checkbox" name="environments" checked="" value="production"/>');
    expect(html).toContain("Edit the rule");
    for (const label of ["Rule name", "Trigger", "Message contains", "Other environments", "Cooldown (minutes)"]) expect(html).toContain(label);

    const form: [string, string][] = [
      ["intent", "rule-edit"],
      ["id", ruleId],
      ["name", "Staging and beta"],
      ["trigger", "new_group"],
      ["levels", "error"],
      ["levels", "warn"],
      ["environments", "staging"],
      ["environments_other", "beta, staging"],
      ["message_contains", ""],
      ["cooldown_minutes", "15"],
      ["min_players", "0"],
      ["channel_ids", a],
      ["channel_ids", b],
    ];
    const ok = await pagePost(projectId, form);
    expect(ok.status).toBe(200);
    expect((await ok.text()).replaceAll("<!-- -->", "")).toContain("Rule &quot;Staging and beta&quot; saved.");
    expect(await row(ruleId)).toMatchObject({ name: "Staging and beta", levels: ["error", "warn"], environments: ["staging", "beta"], cooldown_minutes: 15, channel_ids: [a, b] });

    const before = await row(ruleId);
    const refused = await pagePost(projectId, form.map(([k, v]) => [k, k === "cooldown_minutes" ? "-5" : v] as [string, string]));
    expect(refused.status).toBe(400);
    const refusedPage = (await refused.text()).replaceAll("<!-- -->", "");
    expect(refusedPage).toContain("cooldown_minutes");
    // the refused rule's form stays open
    expect(refusedPage).toContain("Edit the rule");
    expect(await row(ruleId)).toEqual(before);

    // from another site: refused before the action runs
    const csrf = await pagePost(projectId, form.map(([k, v]) => [k, k === "name" ? "Cross-site" : v] as [string, string]), { origin: "http://evil.example" });
    expect(csrf.status).toBe(403);
    expect(await row(ruleId)).toEqual(before);
  });

  it("shows an enabled rule without an enabled channel as such", async () => {
    const { projectId, a } = await setup();
    await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${a}`, { cookie: owner.cookie, body: { enabled: false } });
    const html = await (await app.request(`/projects/${projectId}/alerts`, { headers: { cookie: owner.cookie } })).text();
    expect(html).toContain("enabled — no active channel");
  });
});

describe("the delivery log", () => {
  it("names each trigger for people and keeps the value for programs", async () => {
    const { projectId, ruleId, a } = await setup();
    const triggers = ["new_group", "regression", "frequency", "economy_anomaly", "supply_growth", "error_rate", "error_free_sessions", "server_memory", "server_heartbeat", "out_of_memory", "servers_drop", "test"];
    for (const t of triggers) {
      await app.sql`insert into alert_deliveries (project_id, rule_id, channel_id, trigger, status, attempts) values (${projectId}, ${ruleId}, ${a}, ${t}, 'sent', 1)`;
    }
    const r = await call(app, "GET", `/api/team/projects/${projectId}/deliveries`, { cookie: owner.cookie });
    const names = Object.fromEntries((r.body.data as any[]).map((d) => [d.trigger, d.trigger_name]));
    expect(names).toEqual({
      new_group: "New issue",
      regression: "Regression",
      frequency: "Spike",
      economy_anomaly: "Economy anomaly",
      supply_growth: "Money supply growth",
      error_rate: "Error rate",
      error_free_sessions: "Error-free sessions",
      server_memory: "Server memory",
      server_heartbeat: "Server heartbeat",
      out_of_memory: "Out-of-memory closes",
      servers_drop: "Live servers drop",
      test: "Test alert",
    });
    const html = await (await app.request(`/projects/${projectId}/deliveries`, { headers: { cookie: owner.cookie } })).text();
    expect(html).not.toMatch(/>new_group</);
    expect(html).toContain(">New issue<");
    // the Alerts tab is the highlighted one
    const tabs = /<nav class="tabs">(.*?)<\/nav>/.exec(html)![1];
    expect(tabs.match(/class="active"/g)).toHaveLength(1);
    expect(tabs).toMatch(/<a [^>]*class="active" href="\/projects\/[^"]+\/alerts">Alerts</);
  });
});
