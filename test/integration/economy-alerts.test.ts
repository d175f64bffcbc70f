import { createHmac, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putEconomyMap } from "../../db/economy-maps.js";
import { dispatchEconomyAlerts } from "../../app/alerts/economy.server.js";
import { pruneEconomyAlertClaims } from "../../db/economy-alerts.js";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { FakeSlack } from "../support/fake-slack.js";
import { startReceiver } from "../support/webhook-receiver.js";
import { COINS_GEMS_MAP, coinsGemsPlayer } from "../support/economy-maps.js";
import { startFakeOpenCloud, type FakeOpenCloud } from "../support/fake-open-cloud.js";
import { QUIET_MS, sleep, waitFor } from "../support/wait.js";

/**
 * Economy alerts end to end: a real server with pg-boss, a Coins/Gems map, balances through
 * POST /api/economy/ingest, rules and channels through the Team API, a local Discord and Slack.
 * Unexplained gains are written as the flows' reconciliation writes them (a row per gain), and a push
 * then triggers the evaluation as it does in production. Each test has its own project.
 */
const PUBLIC_URL = "https://monitor.example.com";

let app: TestApp;
let discord: FakeDiscord;
let slack: FakeSlack;
let openCloud: FakeOpenCloud;
let owner: { id: string; email: string; cookie: string };

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  slack = await new FakeSlack().start();
  openCloud = await startFakeOpenCloud({});
  app = await startTestApp({
    JOBS_ENABLED: "true",
    WEBHOOK_ALLOW_PRIVATE: "true",
    PUBLIC_URL,
    OPEN_CLOUD_BASE_URL: openCloud.url,
    OPEN_CLOUD_REQUESTS_PER_MINUTE: "60000",
  });
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});

afterAll(async () => {
  await app?.close();
  await discord?.close();
  await slack?.close();
  await openCloud?.close();
});

const team = (method: string, path: string, body?: unknown) => call(app, method, path, { cookie: owner.cookie, body });

async function project() {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Economy alerts ${randomUUID().slice(0, 8)}`);
  await putEconomyMap(app.sql, projectId, COINS_GEMS_MAP, null);
  return { projectId, apiKey };
}

async function discordChannel(projectId: string) {
  const url = discord.webhookUrl();
  const ch = await team("POST", `/api/team/projects/${projectId}/channels`, { name: `Discord ${randomUUID().slice(0, 4)}`, kind: "discord", url });
  expect(ch.status).toBe(201);
  return { url, channelId: ch.body.channel.id as string };
}

async function rule(projectId: string, channelId: string, r: Record<string, unknown>) {
  const res = await team("POST", `/api/team/projects/${projectId}/rules`, { name: "economy", channel_ids: [channelId], ...r });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.rule;
}

/** A push of players' wallets: [user id, coins, gems]. */
async function push(apiKey: string, players: [number, number, number][]) {
  const r = await call(app, "POST", "/api/economy/ingest", {
    headers: { "x-api-key": apiKey },
    body: {
      players: players.map(([id, coins, gems]) => coinsGemsPlayer(id, { coins, gems }, { username: `builder${id}`, display_name: `Builder ${id}` })),
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** An unexplained gain as the flows' reconciliation records it. */
async function unexplained(projectId: string, userId: number, currency: string, from: string, to: string, explained: string) {
  const gain = (BigInt(to) - BigInt(from) - BigInt(explained)).toString();
  const [row] = await app.sql<{ id: string }[]>`
    insert into economy_unexplained (project_id, history_id, user_id, currency, from_amount, to_amount, explained, unexplained, from_observed_at, observed_at)
    values (${projectId}, 0, ${userId}, ${currency}, ${from}, ${to}, ${explained}, ${gain}, now() - interval '5 minutes', now())
    returning id::text as id`;
  return row.id;
}

const deliveries = async (projectId: string) => (await team("GET", `/api/team/projects/${projectId}/deliveries`)).body.data as any[];
const text = (m: { body: any }) => JSON.stringify(m.body);
/** Discord text as it renders: the backslashes escaping Markdown removed. */
const rendered = (s: string) => s.replace(/\\(.)/g, "$1");

describe("economy rules through the Team API", () => {
  it("creates, validates, edits and deletes economy_anomaly and supply_growth rules", async () => {
    const { projectId } = await project();
    const { channelId } = await discordChannel(projectId);
    const base = `/api/team/projects/${projectId}/rules`;

    // error-only fields are stored as "no filter"; the currency is the map's key; amounts are decimal strings
    const a = await rule(projectId, channelId, {
      trigger: "economy_anomaly",
      currency: "GEMS",
      min_amount: 2500,
      levels: ["error"],
      message_contains: "x",
      min_players: 3,
      growth_pct: 10,
    });
    expect(a).toMatchObject({ trigger: "economy_anomaly", currency: "gems", min_amount: "2500", growth_pct: null, levels: [], message_contains: null, min_players: 0 });
    const exact = await rule(projectId, channelId, { trigger: "economy_anomaly", min_amount: "123456789012345678901234.5" });
    expect(exact).toMatchObject({ currency: null, min_amount: "123456789012345678901234.5" });

    const s = await rule(projectId, channelId, { trigger: "supply_growth", growth_pct: 25, min_amount: 5 });
    expect(s).toMatchObject({ trigger: "supply_growth", currency: null, growth_pct: 25, min_amount: null });

    // an error rule keeps no economy field
    const e = await rule(projectId, channelId, { trigger: "new_group", currency: "gems", min_amount: 1 });
    expect(e).toMatchObject({ currency: null, min_amount: null, growth_pct: null });

    const bad = async (body: Record<string, unknown>, path: string) => {
      const r = await team("POST", base, { name: "bad", channel_ids: [channelId], ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.details.map((d: any) => d.path)).toContain(path);
      return r.body;
    };
    const unknown = await bad({ trigger: "economy_anomaly", currency: "rubies" }, "currency");
    expect(unknown.message).toContain("coins, gems");
    await bad({ trigger: "economy_anomaly", min_amount: -1 }, "min_amount");
    await bad({ trigger: "economy_anomaly", min_amount: "lots" }, "min_amount");
    await bad({ trigger: "supply_growth" }, "growth_pct");
    await bad({ trigger: "supply_growth", growth_pct: 0 }, "growth_pct");
    await bad({ trigger: "supply_rise" }, "trigger");
    expect((await team("GET", base)).body.data).toHaveLength(4);

    // a patch is validated merged with the rule
    const p = await team("PATCH", `${base}/${a.id}`, { trigger: "supply_growth" });
    expect(p.status).toBe(400);
    const ok = await team("PATCH", `${base}/${a.id}`, { trigger: "supply_growth", growth_pct: 12.5 });
    expect(ok.status).toBe(200);
    expect(ok.body.rule).toMatchObject({ trigger: "supply_growth", currency: "gems", growth_pct: 12.5, min_amount: null });
    const cur = await team("PATCH", `${base}/${a.id}`, { currency: "Tokens" });
    expect(cur.status).toBe(400);
    expect((await team("PATCH", `${base}/${a.id}`, { currency: null })).body.rule.currency).toBeNull();

    expect((await team("DELETE", `${base}/${s.id}`)).status).toBe(200);
    expect((await team("GET", base)).body.data).toHaveLength(3);
  });
});

describe("economy_anomaly", () => {
  it("a dupe push sends exactly one Discord message naming the player, the currency, the jump and the link", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    const r = await rule(projectId, channelId, { name: "Dupes", trigger: "economy_anomaly" });
    await push(apiKey, [[1, 100, 40], [2, 50, 10]]);
    await push(apiKey, [[1, 100, 5_000_000], [2, 60, 12]]);
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    const embed = msg.body.embeds[0];
    expect(embed.title).toContain("Economy anomaly in ");
    expect(embed.title).toContain("Builder 1");
    expect(embed.title).toContain("Gems 40 → 5,000,000");
    expect(rendered(embed.title)).toContain("(×125,000)");
    const fields = Object.fromEntries(embed.fields.map((f: any) => [f.name, f.value]));
    expect(fields.Player).toContain("user id 1");
    expect(fields.Player).toContain("builder1");
    expect(fields.Currency).toBe("Gems");
    expect(fields.Jump).toContain("4,999,960");
    expect(embed.url).toBe(`${PUBLIC_URL}/projects/${projectId}/economy/players/1`);
    expect(embed.description).toContain(`(${PUBLIC_URL}/projects/${projectId}/economy/players/1)`);
    expect(msg.body.allowed_mentions).toEqual({ parse: [] });

    // more pushes of the same players (no new rise of that size) send nothing more
    await push(apiKey, [[1, 100, 5_000_001], [2, 70, 12]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    const [rise] = await app.sql<{ id: string }[]>`select id::text as id from economy_rises where project_id = ${projectId} and user_id = 1 and currency = 'gems' and amount = 5000000`;
    const log = await deliveries(projectId);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ trigger: "economy_anomaly", status: "sent", rule_id: r.id, subject: `rise:${rise.id}`, subject_user_id: "1", subject_currency: "gems", group_id: null });
  });

  it("an unexplained gain alerts with the amount the flows do not explain", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    await rule(projectId, channelId, { trigger: "economy_anomaly" });
    await push(apiKey, [[7, 10, 100]]);
    const id = await unexplained(projectId, 7, "gems", "100", "90100", "100");
    await push(apiKey, [[8, 1, 1]]);
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    const embed = msg.body.embeds[0];
    expect(embed.title).toContain("Builder 7");
    expect(embed.title).toContain("89,900 Gems unexplained");
    const fields = Object.fromEntries(embed.fields.map((f: any) => [f.name, f.value]));
    expect(fields).toMatchObject({ Unexplained: "89,900", "Explained by flows": "100", Balance: "100 → 90,100" });
    expect(embed.url).toBe(`${PUBLIC_URL}/projects/${projectId}/economy/players/7`);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    expect((await deliveries(projectId))[0].subject).toBe(`unexplained:${id}`);
  });

  it("min_amount: a rule alerts only on rises and unexplained gains of at least its minimum", async () => {
    const { projectId, apiKey } = await project();
    const big = await discordChannel(projectId);
    const small = await discordChannel(projectId);
    await rule(projectId, big.channelId, { trigger: "economy_anomaly", min_amount: "10000000" });
    await rule(projectId, small.channelId, { trigger: "economy_anomaly", min_amount: 4_999_960 });
    await push(apiKey, [[1, 0, 40]]);
    await unexplained(projectId, 1, "coins", "0", "9999999", "0");
    await push(apiKey, [[1, 0, 5_000_000]]);
    await waitFor(() => discord.for(small.url).length >= 1);
    await sleep(QUIET_MS);
    expect(discord.for(small.url)).toHaveLength(2); // the 4,999,960 rise and the 9,999,999 gain
    expect(discord.for(big.url)).toHaveLength(0);
  });

  it("currency: a rule on Coins ignores a Gems dupe and alerts on a Coins one", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    await rule(projectId, channelId, { trigger: "economy_anomaly", currency: "coins" });
    await push(apiKey, [[3, 40, 40]]);
    await push(apiKey, [[3, 40, 5_000_000]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    await push(apiKey, [[3, 5_000_000, 5_000_000]]);
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    expect(msg.body.embeds[0].title).toContain("Coins 40 → 5,000,000");
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
  });

  it("a disabled rule stays silent, and once enabled does not alert on what happened while it was off", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    const r = await rule(projectId, channelId, { trigger: "economy_anomaly", enabled: false });
    await push(apiKey, [[4, 40, 40]]);
    await push(apiKey, [[4, 40, 5_000_000]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    expect((await team("PATCH", `/api/team/projects/${projectId}/rules/${r.id}`, { enabled: true })).status).toBe(200);
    await push(apiKey, [[4, 41, 5_000_000]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    await push(apiKey, [[4, 5_000_000, 5_000_000]]);
    await waitFor(() => discord.for(url).length > 0);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
  });

  it("concurrent evaluations never send twice, and a burst becomes four messages and a summary", async () => {
    const { projectId } = await project();
    const { url, channelId } = await discordChannel(projectId);
    const r = await rule(projectId, channelId, { trigger: "economy_anomaly" });
    // written without a push: nothing is enqueued, the four evaluations below race for them
    for (let i = 0; i < 8; i++) await unexplained(projectId, 100 + i, "gems", "0", String(1_000_000 + i), "0");
    const deps = { sql: app.sql, config: app.services.config };
    const results = await Promise.all([1, 2, 3, 4].map(() => dispatchEconomyAlerts(deps, projectId)));
    expect(results.reduce((n, x) => n + x.sent, 0)).toBe(5);
    expect(discord.for(url)).toHaveLength(5);
    const summary = discord.for(url).find((m) => m.body.embeds[0].title.includes("4 more economy alerts"))!;
    expect(summary.body.embeds[0].description.split("\n").filter((l: string) => l.startsWith("•"))).toHaveLength(4);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from economy_alert_claims where project_id = ${projectId} and rule_id = ${r.id}`;
    expect(n).toBe(8);
    // and once more: everything is claimed
    expect((await dispatchEconomyAlerts(deps, projectId)).sent).toBe(0);

    // the retention job drops claims only once nothing they cover can be evaluated again
    await app.sql`update economy_alert_claims set created_at = now() - interval '3 days'
      where project_id = ${projectId} and subject in (select subject from economy_alert_claims where project_id = ${projectId} order by subject limit 3)`;
    await pruneEconomyAlertClaims(app.sql);
    const [{ left }] = await app.sql<{ left: number }[]>`select count(*)::int as left from economy_alert_claims where project_id = ${projectId}`;
    expect(left).toBe(5);
  });

  it("a dupe found by an Open Cloud scan alerts when the scan finds it, however old the revision", async () => {
    const { projectId } = await project();
    const { url, channelId } = await discordChannel(projectId);
    await rule(projectId, channelId, { trigger: "economy_anomaly" });
    const key = await team("PUT", "/api/economy/key", {
      project_id: projectId,
      api_key: openCloud.apiKey,
      universe_id: openCloud.universeId,
      datastore_name: openCloud.datastoreName,
    });
    expect(key.status, JSON.stringify(key.body)).toBe(200);
    const entry = (gems: number, at: string) => ({ id: "Player_20", value: coinsGemsPlayer(20, { coins: 1, gems }).profile, revisionCreateTime: at });
    const scan = async () => {
      const r = await team("POST", "/api/economy/sync", { project_id: projectId });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      for (const start = Date.now(); ; await sleep(50)) {
        const s = (await team("GET", `/api/economy/sync?project_id=${projectId}`)).body;
        if (s.state === "succeeded" && s.job_id === r.body.job_id) break;
        if (Date.now() - start > 30_000) throw new Error(`the scan did not finish: ${JSON.stringify(s)}`);
      }
    };
    openCloud.entries.set("Player_20", entry(40, "2026-11-01T00:00:00.000Z"));
    await scan();
    openCloud.entries.set("Player_20", entry(5_000_000, "2026-11-02T00:00:00.000Z"));
    await scan();
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    expect(rendered(msg.body.embeds[0].title)).toContain("user 20: Gems 40 → 5,000,000");
    const fields = Object.fromEntries(msg.body.embeds[0].fields.map((f: any) => [f.name, f.value]));
    expect(fields["Seen by"]).toBe("scan");
  });

  it("Slack blocks and a signed webhook carry the same facts", async () => {
    const { projectId, apiKey } = await project();
    const hook = slack.hookUrl();
    const s = await team("POST", `/api/team/projects/${projectId}/channels`, { name: "Slack", kind: "slack", url: hook });
    const receiver = await startReceiver();
    const { got } = receiver;
    try {
      const secret = "a-shared-secret-of-some-length";
      const w = await team("POST", `/api/team/projects/${projectId}/channels`, { name: "Hook", kind: "webhook", url: receiver.url, secret });
      const r = await team("POST", `/api/team/projects/${projectId}/rules`, {
        name: "Dupes everywhere",
        trigger: "economy_anomaly",
        channel_ids: [s.body.channel.id, w.body.channel.id],
      });
      expect(r.status).toBe(201);
      await push(apiKey, [[5, 2400, 0]]);
      await push(apiKey, [[5, 120_000_000, 0]]);
      const m = await waitFor(() => slack.messages.find((x) => x.path === new URL(hook).pathname));
      expect(m.body.text).toContain("Builder 5");
      expect(m.body.text).toContain("Coins 2,400 → 120,000,000 (×50,000)");
      expect(text(m)).toContain(`<${PUBLIC_URL}/projects/${projectId}/economy/players/5|open>`);
      await waitFor(() => got.length > 0);
      const { headers, body } = got[0];
      const ts = String(headers["x-timestamp"]);
      expect(headers["x-signature"]).toBe(`sha256=${createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex")}`);
      expect(headers["x-alert-trigger"]).toBe("economy_anomaly");
      expect(JSON.parse(body)).toMatchObject({
        type: "alert",
        trigger: "economy_anomaly",
        project: { id: projectId },
        rule: { id: r.body.rule.id, name: "Dupes everywhere" },
        economy: {
          type: "anomaly",
          player: { user_id: "5", name: "Builder 5", username: "builder5" },
          currency: { key: "coins", name: "Coins" },
          from: "2400",
          to: "120000000",
          increase: "119997600",
          factor: 50000,
        },
        url: `${PUBLIC_URL}/projects/${projectId}/economy/players/5`,
      });
    } finally {
      receiver.close();
    }
  });
});

describe("the triggers", () => {
  const jobs = async (queue: string, projectId: string) =>
    (await app.sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${queue} and data->>'project_id' = ${projectId}`)[0].n;

  it("economy rules are evaluated after pushes only, error rules after errors only", async () => {
    const economy = await project();
    await rule(economy.projectId, (await discordChannel(economy.projectId)).channelId, { trigger: "economy_anomaly" });
    const errors = await project();
    await rule(errors.projectId, (await discordChannel(errors.projectId)).channelId, { trigger: "new_group" });
    for (const p of [economy, errors]) {
      await ingest(app, p.apiKey, { errors: [{ message: "A new error" }] });
      await push(p.apiKey, [[1, 1, 1]]);
    }
    await sleep(QUIET_MS);
    expect(await jobs("economy-alerts", economy.projectId)).toBeGreaterThan(0);
    expect(await jobs("alerts", economy.projectId)).toBe(0);
    expect(await jobs("economy-alerts", errors.projectId)).toBe(0);
    expect(await jobs("alerts", errors.projectId)).toBeGreaterThan(0);
  });
});

// Flows are stored by POST /api/economy/flows and reconciled in pushes (docs/economy.md, "Flows"):
// this runs where that endpoint exists.
const flows = existsSync(new URL("../../app/routes/api.economy.flows.ts", import.meta.url));

describe("with recorded flows", () => {
  it.skipIf(!flows)("a push whose gain the recorded flows do not explain alerts with the unexplained amount", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    await rule(projectId, channelId, { trigger: "economy_anomaly", currency: "gems", min_amount: 1000 });
    const first = await call(app, "POST", "/api/economy/flows", {
      headers: { "x-api-key": apiKey },
      body: { flows: [{ user_id: 31, currency: "gems", amount: 5, source: "quest" }] },
    });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await push(apiKey, [[31, 0, 100]]);
    // +5,050 Gems of which a quest explains 50
    const r = await call(app, "POST", "/api/economy/ingest", {
      headers: { "x-api-key": apiKey },
      body: {
        flows: [{ user_id: 31, currency: "gems", amount: 50, source: "quest" }],
        players: [coinsGemsPlayer(31, { coins: 0, gems: 5150 }, { username: "builder31", display_name: "Builder 31" })],
      },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    expect(rendered(msg.body.embeds[0].title)).toContain("Builder 31 (@builder31, user id 31): 5,000 Gems unexplained (100 → 5,150)");
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
  });
});

describe("supply_growth", () => {
  it("alerts once per currency and day when the day's growth passes the rule's percentage", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await discordChannel(projectId);
    // yesterday's supply, as the daily aggregates hold it: 1,000 of each currency
    for (const currency of ["coins", "gems"]) {
      await app.sql`insert into economy_daily_currency (project_id, currency, day, shard, delta)
        values (${projectId}, ${currency}, (now() at time zone 'UTC')::date - 1, 0, 1000)`;
    }
    await rule(projectId, channelId, { name: "Inflation", trigger: "supply_growth", growth_pct: 50 });
    await push(apiKey, [[9, 5, 10]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    // Gems grows by 1,000 on a supply of 1,000 (+100%); Coins by 5 (+0.5%)
    await push(apiKey, [[9, 10, 1010]]);
    const [msg] = await waitFor(() => discord.for(url).length > 0 && discord.for(url));
    const day = new Date().toISOString().slice(0, 10);
    const title = rendered(msg.body.embeds[0].title);
    expect(title).toContain(`Money supply growth in `);
    expect(title).toMatch(new RegExp(`Gems supply \\+10[01]% on ${day}`));
    expect(msg.body.embeds[0].url).toBe(`${PUBLIC_URL}/projects/${projectId}/economy?currency=gems`);
    const fields = Object.fromEntries(msg.body.embeds[0].fields.map((f: any) => [f.name, rendered(f.value)]));
    expect(fields).toMatchObject({ Currency: "Gems", "Day (UTC)": day, Supply: "1,000 → 2,010" });
    expect(fields.Growth).toContain("(rule: more than 50%)");
    // more growth the same day is not alerted again
    await push(apiKey, [[9, 10, 5000]]);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    expect((await deliveries(projectId))[0]).toMatchObject({ trigger: "supply_growth", subject: `supply:gems:${day}` });
  });
});
