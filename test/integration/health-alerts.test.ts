import { createHmac, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchHealthAlerts } from "../../app/alerts/health.server.js";
import { connect, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { FakeSlack } from "../support/fake-slack.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { MIN, sample, server, session } from "../support/health.js";
import type { Sql } from "../../db/client.js";
import { countersApplied } from "../support/counters.js";

/**
 * Health alerts end to end: health data through POST /api/health and events through /api/ingest,
 * rules and channels through the Team API, a local Discord, Slack and webhook receiver. Each test
 * has its own project and evaluates at chosen minutes (`now`), as the minute job would: minute m of
 * the script is the last minute an evaluation at `at(m)` reads (figures end a minute behind now).
 */
const PUBLIC_URL = "https://monitor.example.com";

let app: TestApp;
let discord: FakeDiscord;
let slack: FakeSlack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let owner: { id: string; email: string; cookie: string };
let other: Sql;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  slack = await new FakeSlack().start();
  receiver = await startReceiver();
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "true", PUBLIC_URL });
  other = connect(app.databaseUrl);
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});

afterAll(async () => {
  await other?.end();
  await app?.close();
  await discord?.close();
  await slack?.close();
  receiver?.close();
});

const team = (method: string, path: string, body?: unknown) => call(app, method, path, { cookie: owner.cookie, body });
const deps = () => ({ sql: app.sql, config: app.services.config });

/** Minute 0 of a test's script: 90 minutes ago, on a whole minute (every sample is in the past). */
const base = () => Math.floor((Date.now() - 90 * MIN) / MIN) * MIN;

async function project() {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Health alerts ${randomUUID().slice(0, 8)}`);
  const discordUrl = discord.webhookUrl();
  const slackUrl = slack.hookUrl();
  const ids: string[] = [];
  for (const body of [
    { name: "Discord", kind: "discord", url: discordUrl },
    { name: "Slack", kind: "slack", url: slackUrl },
    { name: "Hook", kind: "webhook", url: receiver.url, secret: "s3cret-s3cret-s3cret" },
  ]) {
    const r = await team("POST", `/api/team/projects/${projectId}/channels`, body);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    ids.push(r.body.channel.id);
  }
  const hooks = () => receiver.got.filter((g) => JSON.parse(g.body).project?.id === projectId);
  return { projectId, apiKey, channelIds: ids, discordUrl, slackUrl, hooks, discordMessages: () => discord.for(discordUrl), slackMessages: () => slack.messages.filter((m) => m.path === new URL(slackUrl).pathname) };
}

async function rule(projectId: string, channelIds: string[], r: Record<string, unknown>) {
  const res = await team("POST", `/api/team/projects/${projectId}/rules`, { name: `health ${r.trigger}`, channel_ids: channelIds, ...r });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.rule;
}

async function report(apiKey: string, body: unknown) {
  const r = await call(app, "POST", "/api/health", { headers: { "x-api-key": apiKey }, body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** One server's samples: minute -> [players, memory, heartbeat] (missing minutes: no sample). */
async function serverSamples(apiKey: string, jobId: string, version: string, B: number, minutes: Record<number, [number, number, number]>) {
  const entries = Object.entries(minutes).map(([m, v]) => sample(B + Number(m) * MIN, ...v));
  for (let i = 0; i < entries.length; i += 100) {
    await report(apiKey, { server: server(jobId, version, B - MIN), sessions: [], samples: entries.slice(i, i + 100) });
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const each = (ms: number[], v: [number, number, number]) => Object.fromEntries(ms.map((m) => [m, v])) as Record<number, [number, number, number]>;

/** An evaluation whose last minute read is minute `m` of the script. */
const at = (B: number, m: number) => new Date(B + (m + 2) * MIN + 1000);
const evaluate = (projectId: string, B: number, m: number) => dispatchHealthAlerts(deps(), projectId, { now: at(B, m) });

const rendered = (s: string) => s.replace(/\\(.)/g, "$1");
const titles = (msgs: { body: any }[]) => msgs.map((m) => rendered(m.body.embeds[0].title));

describe("health rules through the Team API", () => {
  it("creates each trigger with its defaults, keeps only its own fields, and edits them", async () => {
    const { projectId, channelIds } = await project();
    const ch = [channelIds[0]];
    expect(await rule(projectId, ch, { trigger: "error_rate", errors_per_1000: 5, levels: ["error"], memory_mb: 9 })).toMatchObject({
      errors_per_1000: 5, window_minutes: 60, min_player_minutes: 100, memory_mb: null, levels: [], threshold_count: null,
    });
    expect(await rule(projectId, ch, { trigger: "error_free_sessions", error_free_pct: 97.5 })).toMatchObject({ error_free_pct: 97.5, min_sessions: 50, window_minutes: null });
    expect(await rule(projectId, ch, { trigger: "server_memory", memory_mb: 2500, window_minutes: 10, environments: ["production"] })).toMatchObject({
      memory_mb: 2500, window_minutes: 10, environments: ["production"],
    });
    expect(await rule(projectId, ch, { trigger: "server_heartbeat", heartbeat_ms: 33 })).toMatchObject({ heartbeat_ms: 33, window_minutes: 5 });
    expect(await rule(projectId, ch, { trigger: "out_of_memory" })).toMatchObject({ threshold_count: 1, window_minutes: 60 });
    const drop = await rule(projectId, ch, { trigger: "servers_drop", drop_pct: 40 });
    expect(drop).toMatchObject({ drop_pct: 40, min_servers: 3 });
    const patched = await team("PATCH", `/api/team/projects/${projectId}/rules/${drop.id}`, { drop_pct: 55, min_servers: 10 });
    expect(patched.status).toBe(200);
    expect(patched.body.rule).toMatchObject({ drop_pct: 55, min_servers: 10 });
    // an error rule keeps no health field
    expect(await rule(projectId, ch, { trigger: "new_group", memory_mb: 5, drop_pct: 5 })).toMatchObject({ memory_mb: null, drop_pct: null });
  });

  it("answers 400 naming each bad field and writes nothing", async () => {
    const { projectId, channelIds } = await project();
    const base = `/api/team/projects/${projectId}/rules`;
    const bad = async (body: Record<string, unknown>, paths: string[], method = "POST", path = base) => {
      const r = await team(method, path, method === "POST" ? { name: "bad", channel_ids: [channelIds[0]], ...body } : body);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      for (const p of paths) expect(r.body.details.map((d: any) => d.path)).toContain(p);
    };
    await bad({ trigger: "error_rate" }, ["errors_per_1000"]);
    await bad({ trigger: "error_rate", errors_per_1000: 0, window_minutes: 0, min_player_minutes: -1 }, ["errors_per_1000", "window_minutes", "min_player_minutes"]);
    await bad({ trigger: "error_free_sessions", error_free_pct: 150, min_sessions: 0 }, ["error_free_pct", "min_sessions"]);
    await bad({ trigger: "error_free_sessions" }, ["error_free_pct"]);
    await bad({ trigger: "server_memory", memory_mb: "lots" }, ["memory_mb"]);
    await bad({ trigger: "server_memory" }, ["memory_mb"]);
    await bad({ trigger: "server_heartbeat", heartbeat_ms: -5, window_minutes: 5000 }, ["heartbeat_ms", "window_minutes"]);
    await bad({ trigger: "out_of_memory", threshold_count: 0 }, ["threshold_count"]);
    await bad({ trigger: "servers_drop", drop_pct: 101, min_servers: 1.5 }, ["drop_pct", "min_servers"]);
    await bad({ trigger: "servers_drop" }, ["drop_pct"]);
    await bad({ trigger: "server_lag" }, ["trigger"]);
    expect((await team("GET", base)).body.data).toHaveLength(0);

    const r = await rule(projectId, [channelIds[0]], { trigger: "server_memory", memory_mb: 1000 });
    await bad({ memory_mb: null }, ["memory_mb"], "PATCH", `${base}/${r.id}`);
    await bad({ trigger: "servers_drop" }, ["drop_pct"], "PATCH", `${base}/${r.id}`);
    const [row] = (await team("GET", base)).body.data;
    expect(row).toMatchObject({ trigger: "server_memory", memory_mb: 1000, drop_pct: null });
  });
});

describe("editing a health rule", () => {
  it("a new condition or disabling ends its open alerts without a message; a new name keeps them", async () => {
    const p = await project();
    const B = base();
    const r = await rule(p.projectId, p.channelIds, { trigger: "server_memory", memory_mb: 1000, window_minutes: 3 });
    await serverSamples(p.apiKey, "S-edit", "42", B, { ...each(range(0, 2), [10, 500, 16]), ...each(range(3, 12), [10, 1500, 16]) });
    const patch = async (body: Record<string, unknown>) => {
      const res = await team("PATCH", `/api/team/projects/${p.projectId}/rules/${r.id}`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    const open = async () =>
      (await app.sql<{ subject: string }[]>`select subject from health_alert_state where rule_id = ${r.id} and recovered_at is null`).map((s) => s.subject);

    expect((await evaluate(p.projectId, B, 5)).sent).toBe(3);
    expect(await open()).toEqual(["server:S-edit"]);
    // a new name (or channels, or cooldown) leaves the alert open: nothing is sent again
    await patch({ name: "Memory, renamed" });
    expect(await open()).toEqual(["server:S-edit"]);
    expect((await evaluate(p.projectId, B, 6)).sent).toBe(0);
    // a new threshold the server still crosses: the old alert ends silently and the new one fires
    await patch({ memory_mb: 1200 });
    expect(await open()).toEqual([]);
    expect((await evaluate(p.projectId, B, 7)).sent).toBe(3);
    // a threshold it no longer crosses: ended without a "recovered" message (the condition it was fired on is gone)
    await patch({ memory_mb: 2000 });
    expect((await evaluate(p.projectId, B, 8)).sent).toBe(0);
    // disabling ends open alerts too; enabled again, what is still bad fires again
    await patch({ memory_mb: 1000 });
    expect((await evaluate(p.projectId, B, 9)).sent).toBe(3);
    await patch({ enabled: false });
    expect(await open()).toEqual([]);
    await patch({ enabled: true });
    expect((await evaluate(p.projectId, B, 10)).sent).toBe(3);

    const d = titles(p.discordMessages());
    expect(d).toHaveLength(4);
    for (const t of d) expect(t).toContain("Server memory alert");
    expect(d.some((t) => /recovered/i.test(t))).toBe(false);
  });
});

describe("health alerts fire once and recover once", () => {
  it("server_memory: a server above X MB for N minutes, on Discord, Slack and a signed webhook, logged as deliveries", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, p.channelIds, { trigger: "server_memory", memory_mb: 1000, window_minutes: 3 });
    await serverSamples(p.apiKey, "S-leak", "42", B, { ...each(range(0, 2), [10, 500, 16]), ...each(range(3, 7), [10, 1500, 16]), ...each(range(8, 10), [10, 600, 16]) });
    await serverSamples(p.apiKey, "S-fine", "42", B, each(range(0, 10), [10, 800, 16]));

    for (const m of [2, 3, 4]) expect((await evaluate(p.projectId, B, m)).sent).toBe(0);
    expect((await evaluate(p.projectId, B, 5)).sent).toBe(3);
    for (const m of [6, 7]) expect((await evaluate(p.projectId, B, m)).sent).toBe(0);
    expect((await evaluate(p.projectId, B, 8)).sent).toBe(3);
    for (const m of [9, 10]) expect((await evaluate(p.projectId, B, m)).sent).toBe(0);

    const d = titles(p.discordMessages());
    expect(d).toHaveLength(2);
    expect(d[0]).toContain("Server memory alert");
    expect(d[0]).toContain("server S-leak (version 42)");
    expect(d[0]).toContain("memory 1,500 MB (threshold 1,000 MB for 3 min)");
    expect(d[1]).toContain("Server memory recovered");
    expect(d[1]).toContain("server S-leak (version 42) is back after 3 min");
    expect(p.discordMessages()[0].body.embeds[0].url).toBe(`${PUBLIC_URL}/projects/${p.projectId}/servers`);
    expect(p.discordMessages()[0].body.allowed_mentions).toEqual({ parse: [] });

    const s = p.slackMessages();
    expect(s).toHaveLength(2);
    expect(s[0].body.text).toContain("S-leak");
    expect(s[1].body.blocks[1].text.text).toContain("Alerting for 3 min");

    const h = p.hooks().map((g) => ({ ...g, json: JSON.parse(g.body) }));
    expect(h.map((g) => g.json.event)).toEqual(["health_alert_fired", "health_alert_recovered"]);
    expect(h[0].json).toMatchObject({ trigger: "server_memory", subject: "server:S-leak", version: "42", job_id: "S-leak", health: { value: 1500, threshold: 1000 } });
    expect(h[1].json).toMatchObject({ bad_for_seconds: 180, health: { value: 600 }, fired: { value: 1500 } });
    const sig = createHmac("sha256", "s3cret-s3cret-s3cret").update(`${h[0].headers["x-timestamp"]}.${h[0].body}`).digest("hex");
    expect(h[0].headers["x-signature"]).toBe(`sha256=${sig}`);

    const log = (await team("GET", `/api/team/projects/${p.projectId}/deliveries`)).body.data as any[];
    expect(log).toHaveLength(6);
    expect(new Set(log.map((x) => x.subject))).toEqual(new Set(["fired:server:S-leak", "recovered:server:S-leak"]));
    expect(log.every((x) => x.status === "sent" && x.trigger === "server_memory")).toBe(true);
  });

  it("server_memory: a server that closes while above recovers with its close reason", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "server_memory", memory_mb: 1000, window_minutes: 2 });
    await serverSamples(p.apiKey, "S-oom", "42", B, each(range(0, 4), [10, 3000, 16]));
    expect((await evaluate(p.projectId, B, 2)).sent).toBe(1);
    await report(p.apiKey, { server: server("S-oom", "42", B - MIN, { at: B + 5 * MIN, reason: "OutOfMemory" }), sessions: [], samples: [] });
    expect((await evaluate(p.projectId, B, 3)).sent).toBe(1);
    expect((await evaluate(p.projectId, B, 4)).sent).toBe(0);
    expect(rendered(p.discordMessages()[1].body.embeds[0].title)).toContain("the server closed (OutOfMemory)");
  });

  it("server_heartbeat: a version's p90 above Y ms for N minutes", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "server_heartbeat", heartbeat_ms: 33, window_minutes: 2 });
    // 10 servers: 8 always at 16 ms; 2 at 50 ms in minutes 3..6, so the p90 (9th of 10) is 50 there
    for (let i = 0; i < 8; i++) await serverSamples(p.apiKey, `H${i}`, "42", B, each(range(0, 9), [10, 500, 16]));
    for (let i = 8; i < 10; i++) await serverSamples(p.apiKey, `H${i}`, "42", B, { ...each([0, 1, 2, 7, 8, 9], [10, 500, 16]), ...each(range(3, 6), [10, 500, 50]) });
    const sent = [];
    for (const m of range(2, 9)) sent.push((await evaluate(p.projectId, B, m)).sent);
    expect(sent).toEqual([0, 0, 1, 0, 0, 1, 0, 0]);
    const d = titles(p.discordMessages());
    expect(d[0]).toContain("version 42: p90 heartbeat 50 ms (threshold 33 ms for 2 min)");
    expect(d[1]).toContain("version 42 is back after 3 min: p90 heartbeat 16 ms");
    expect(p.discordMessages()[0].body.embeds[0].url).toBe(`${PUBLIC_URL}/projects/${p.projectId}/releases`);
  });

  it("error_rate: errors per 1,000 player-minutes, where a traffic spike with a steady rate does not fire", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "error_rate", errors_per_1000: 5, window_minutes: 10, min_player_minutes: 100 });
    // minutes 0..9: 10 servers of 100 players (1,000 player-minutes a minute) and 3 errors a minute;
    // minutes 10..39: 30 servers (3,000 a minute): 9 errors a minute (the same rate), 20 a minute in 20..29
    for (let i = 0; i < 30; i++) await serverSamples(p.apiKey, `E${i}`, "42", B, each(i < 10 ? range(0, 39) : range(10, 39), [100, 500, 16]));
    const errors = (m: number) => (m < 10 ? 3 : m >= 20 && m < 30 ? 20 : 9);
    const events = range(0, 39).map((m) => ({
      message: `Workspace.Shop:${m}: attempt to index nil`,
      level: "error",
      game_version: "42",
      environment: "production",
      count: errors(m),
      timestamp: new Date(B + m * MIN + 30_000).toISOString(),
    }));
    const r = await call(app, "POST", "/api/ingest", { headers: { "x-api-key": p.apiKey }, body: { errors: events } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [{ n }] = await app.sql<{ n: number }[]>`select coalesce(sum(count), 0)::int as n from events where project_id = ${p.projectId}`;
    expect(n).toBe(range(0, 39).reduce((s, m) => s + errors(m), 0));
    await countersApplied(app.sql);

    const sent = [];
    // 9..19: the spike (three times the players, three times the errors) is the same 3 per 1,000
    for (const m of [9, 12, 15, 19, 22, 25, 29, 32, 39, 40]) sent.push((await evaluate(p.projectId, B, m)).sent);
    // 25: minutes 16..25 hold 6 minutes at 20 → (4·9 + 6·20) / 30,000 · 1,000 = 5.2 > 5
    expect(sent).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 1, 0]);
    const d = titles(p.discordMessages());
    expect(d[0]).toContain("version 42: 5.2 errors per 1,000 player-minutes over 10 min (threshold 5)");
    expect(d[1]).toContain("version 42 is back after 14 min: 3 errors per 1,000 player-minutes");
  });

  it("error_rate: counts every occurrence, the ones the throttle kept out of the stored events too", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "error_rate", errors_per_1000: 5, window_minutes: 10, min_player_minutes: 100 });
    // minutes 0..9: 10 servers of 100 players, 10,000 player-minutes in the window
    for (let i = 0; i < 10; i++) await serverSamples(p.apiKey, `T${i}`, "43", B, each(range(0, 9), [100, 500, 16]));
    // one error 80 times in minute 5, in one request: past THROTTLE_LIMIT (30 an issue a minute) the
    // rest are counted on the issue, not stored; 80 / 10,000 player-minutes is 8 per 1,000
    const burst = Array.from({ length: 80 }, (_, i) => ({
      message: "ServerScriptService.Shop:12: attempt to index nil with 'Price'",
      level: "error",
      game_version: "43",
      environment: "production",
      timestamp: new Date(B + 5 * MIN + 1000 + i * 100).toISOString(),
    }));
    const r = await call(app, "POST", "/api/ingest", { headers: { "x-api-key": p.apiKey }, body: { errors: burst } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await countersApplied(app.sql);
    const [{ stored }] = await app.sql<{ stored: number }[]>`select count(*)::int as stored from events where project_id = ${p.projectId}`;
    expect(stored).toBe(30); // 30 of 80 stored: 3 per 1,000 from the stored events alone, under the threshold

    expect((await evaluate(p.projectId, B, 9)).sent).toBe(1);
    expect(titles(p.discordMessages())[0]).toContain("version 43: 8 errors per 1,000 player-minutes over 10 min (threshold 5)");
  });

  it("error_free_sessions: a new version below X% once it has N ended sessions", async () => {
    const p = await project();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "error_free_sessions", error_free_pct: 90, min_sessions: 10 });
    const T = Date.now() - 30 * MIN;
    const ended = (from: number, to: number, errored: (i: number) => boolean) =>
      range(from, to).map((i) => session(`V43/${i}/1`, 1000 + i, T, T + 5 * MIN, errored(i) ? { server: 1, client: 0 } : { server: 0, client: 0 }));
    const now = () => dispatchHealthAlerts(deps(), p.projectId);
    // 9 ended, 3 with an error: too few to say
    await report(p.apiKey, { server: server("V43", "43", T), sessions: ended(0, 8, (i) => i < 3), samples: [] });
    expect((await now()).sent).toBe(0);
    // the 10th: 7 of 10 error-free, below 90%
    await report(p.apiKey, { server: server("V43", "43", T), sessions: ended(9, 9, () => false), samples: [] });
    expect((await now()).sent).toBe(1);
    expect((await now()).sent).toBe(0);
    // 20 more clean: 27 of 30 = 90%, not below
    await report(p.apiKey, { server: server("V43", "43", T), sessions: ended(10, 29, () => false), samples: [] });
    expect((await now()).sent).toBe(1);
    expect((await now()).sent).toBe(0);
    const d = titles(p.discordMessages());
    expect(d[0]).toContain("version 43: 70% error-free sessions of 10 ended (threshold 90%)");
    expect(d[1]).toContain("Error-free sessions recovered");
    expect(d[1]).toContain("90% error-free sessions of 30 ended");
  });

  it("out_of_memory: closes of a version within the window, recovering once the window has none", async () => {
    const p = await project();
    await rule(p.projectId, [p.channelIds[0], p.channelIds[2]], { trigger: "out_of_memory", window_minutes: 30 });
    const T = Date.now() - 20 * MIN;
    await report(p.apiKey, { server: server("O1", "44", T, { at: T + 10 * MIN, reason: "OutOfMemory" }), sessions: [], samples: [] });
    await report(p.apiKey, { server: server("O2", "44", T, { at: T + 11 * MIN, reason: "DeveloperShutdown" }), sessions: [], samples: [] });
    const run = (later = 0) => dispatchHealthAlerts(deps(), p.projectId, { now: new Date(Date.now() + later) });
    expect((await run()).sent).toBe(2);
    expect((await run()).sent).toBe(0);
    expect((await run(25 * MIN)).sent).toBe(2);
    expect((await run(26 * MIN)).sent).toBe(0);
    expect(titles(p.discordMessages())[0]).toContain("version 44: 1 out-of-memory close in 30 min");
    expect(rendered(p.discordMessages()[0].body.embeds[0].description)).toContain("O1");
    expect(p.hooks().map((g) => JSON.parse(g.body).event)).toEqual(["health_alert_fired", "health_alert_recovered"]);
  });

  it("servers_drop: the live server count down X% in 10 minutes, back once the count returns", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "servers_drop", drop_pct: 50, min_servers: 3 });
    for (let i = 0; i < 10; i++) await serverSamples(p.apiKey, `D${i}`, "45", B, each(i < 4 ? range(0, 20) : [...range(0, 9), ...range(15, 20)], [10, 500, 16]));
    const sent = [];
    for (const m of range(9, 17)) sent.push((await evaluate(p.projectId, B, m)).sent);
    expect(sent).toEqual([0, 1, 0, 0, 0, 0, 1, 0, 0]);
    const d = titles(p.discordMessages());
    expect(d[0]).toContain("10 → 4 live servers, −60% in 10 min (threshold 50%)");
    expect(d[1]).toContain("the live server count is back after 5 min: 10 → 10 live servers");
  });

  it("two instances evaluating the same minute at once send each message once", async () => {
    const p = await project();
    const B = base();
    await rule(p.projectId, [p.channelIds[0]], { trigger: "server_memory", memory_mb: 1000, window_minutes: 2 });
    await serverSamples(p.apiKey, "S-twice", "42", B, { ...each(range(0, 4), [10, 2000, 16]), ...each(range(5, 6), [10, 100, 16]) });
    const both = (m: number) =>
      Promise.all([dispatchHealthAlerts(deps(), p.projectId, { now: at(B, m) }), dispatchHealthAlerts({ sql: other, config: app.services.config }, p.projectId, { now: at(B, m) })]);
    expect((await both(3)).reduce((n, r) => n + r.sent, 0)).toBe(1);
    expect((await both(4)).reduce((n, r) => n + r.sent, 0)).toBe(0);
    expect((await both(5)).reduce((n, r) => n + r.sent, 0)).toBe(1);
    expect(p.discordMessages()).toHaveLength(2);
    const [state] = await app.sql<any[]>`select * from health_alert_state where project_id = ${p.projectId}`;
    expect(state).toMatchObject({ subject: "server:S-twice" });
    expect(state.recovered_at).not.toBeNull();
  });
});
