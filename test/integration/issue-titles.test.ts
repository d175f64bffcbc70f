import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { FakeSlack } from "../support/fake-slack.js";
import { waitFor } from "../support/wait.js";

/**
 * An issue is titled by its grouping form wherever it is named: the dashboard's list, detail and player
 * pages, the alerts and the v1 API. The first occurrence came from Player134_Speedy; Builderman's page
 * must not carry that name, and no title carries a player's key or a numbered spawn.
 */
let app: TestApp;
let discord: FakeDiscord;
let slack: FakeSlack;
let receiver: Server;
const hooked: any[] = [];
let projectId: string;
let apiKey: string;
let cookie: string;
const ids: Record<string, string> = {};
const TRACE = "6f0c4a52-9d1e-4b7a-8f3e-2a1b0c9d8e7f";

const SHOP = (p: string) => `Players.${p}.PlayerGui.ShopGui.Buy:42: attempt to index nil with 'Price'`;
const SHOP_TITLE = "Players.<player>.PlayerGui.ShopGui.Buy:42: attempt to index nil with 'Price'";
const QUEUE = (k: string) => `DataStore request was added to queue. If request queue fills, further requests will be dropped. Key = ${k}`;
const QUEUE_TITLE = QUEUE("<key>");
const SPAWN = (n: number) => `Spawn${n} is not a valid member of Folder "Workspace.Map.Spawns"`;
const SPAWN_TITLE = `<child> is not a valid member of Folder "Workspace.Map.Spawns"`;
const NAMES = ["Player134_Speedy", "Player_10261327", "10261327", "Spawn3"];

/** What a page shows: its HTML without scripts (the loader data), React's text separators removed, entities decoded. */
const page = async (path: string) => {
  const r = await app.request(path, { headers: { cookie } });
  expect(r.status, path).toBe(200);
  return (await r.text())
    .replace(/<script\b[^>]*>.*?<\/script>/gs, "")
    .replaceAll("<!-- -->", "").replaceAll("<wbr/>", "").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"').replaceAll("&#x27;", "'");
};
const api = (path: string) => call(app, "GET", path, { headers: { "x-api-key": apiKey } });
const noneOf = (text: string, what: string) => {
  for (const n of NAMES) expect(text, `${what} carries ${n}`).not.toContain(n);
};

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  slack = await new FakeSlack().start();
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      hooked.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" });
  const owner = await makeUser(app.sql);
  cookie = await login(app, owner.email);
  ({ projectId, apiKey } = await makeProject(app.sql, owner.id, [], "Titles"));
  const channel = async (body: Record<string, string>) =>
    (await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body })).body.channel.id as string;
  const channels = [
    await channel({ name: "Discord", kind: "discord", url: discord.webhookUrl() }),
    await channel({ name: "Slack", kind: "slack", url: slack.hookUrl() }),
    await channel({ name: "Hook", kind: "webhook", url: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook` }),
  ];
  const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie, body: { name: "new", trigger: "new_group", channel_ids: channels } });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);

  // each issue's first event is another player's; Builderman's come later
  await ingest(app, apiKey, {
    errors: [
      { message: SHOP("Player134_Speedy"), user_id: 134, player_name: "Player134_Speedy", level: "error", trace_id: TRACE },
      { message: QUEUE("Player_10261327"), user_id: 10261327, player_name: "Speedy_Two", level: "warn" },
      { message: SPAWN(3), user_id: 135, player_name: "Player135", level: "error" },
    ],
  });
  await ingest(app, apiKey, {
    errors: [
      { message: SHOP("Builderman"), user_id: 156, player_name: "Builderman", level: "error" },
      { message: QUEUE("Player_156"), user_id: 156, player_name: "Builderman", level: "warn" },
      { message: SPAWN(7), user_id: 156, player_name: "Builderman", level: "error" },
    ],
  });
  for (const g of await app.sql<{ id: string; message: string }[]>`select id, message from error_groups where project_id = ${projectId}`) {
    ids[g.message.startsWith("Players.") ? "shop" : g.message.startsWith("DataStore") ? "queue" : "spawn"] = g.id;
  }
  expect(Object.keys(ids).sort()).toEqual(["queue", "shop", "spawn"]);
});

afterAll(async () => {
  await app?.close();
  await discord?.close();
  await slack?.close();
  receiver?.close();
});

describe("issue titles", () => {
  it("the issues list names each issue by its grouping form, without the first player's data", async () => {
    const html = await page(`/projects/${projectId}/issues?status=all`);
    for (const t of [SHOP_TITLE, QUEUE_TITLE, SPAWN_TITLE]) expect(html).toContain(t);
    expect(html).toContain(`aria-label="Select ${SHOP_TITLE}"`);
    noneOf(html, "the issues list");
  });

  it("the detail's heading is the title; the latest raw message is below it, labelled", async () => {
    const html = await page(`/projects/${projectId}/issues/${ids.shop}`);
    const heading = /data-testid="issue-message"[^>]*>(.*?)<\/h2>/s.exec(html)?.[1];
    expect(heading).toBe(SHOP_TITLE);
    const latest = /data-testid="latest-message"[^>]*>(.*?)<\/p>/s.exec(html)?.[1] ?? "";
    expect(latest).toContain("Latest message: ");
    expect(latest).toContain(SHOP("Builderman"));
    expect(/<title>([^\n]*?) · Roblox Monitor<\/title>/.exec(html)?.[1]).toBe(SHOP_TITLE.slice(0, 60));
    // paged back to older events, the latest message is still the newest event's
    const [newest] = await app.sql<{ id: string }[]>`
      select id::text from events where project_id = ${projectId} and group_id = ${ids.shop} order by "timestamp" desc, id desc limit 1`;
    const older = await page(`/projects/${projectId}/issues/${ids.shop}?before=${newest.id}`);
    expect(/data-testid="latest-message"[^>]*>(.*?)<\/p>/s.exec(older)?.[1] ?? "").toContain(SHOP("Builderman"));
  });

  it("Builderman's player page lists his issues by title, not by another player's name", async () => {
    const html = await page(`/projects/${projectId}/players/156`);
    const issues = /data-testid="player-issues"(.*?)<\/table>/s.exec(html)?.[1] ?? "";
    for (const t of [SHOP_TITLE, QUEUE_TITLE, SPAWN_TITLE]) expect(issues).toContain(t);
    noneOf(html, "Builderman's page");
    // his own events stay as they were sent
    expect(html).toContain(SHOP("Builderman"));
  });

  it("the overview, the traces list and the alert delivery log name issues by title", async () => {
    const overview = await page(`/projects/${projectId}`);
    expect(overview).toContain(SHOP_TITLE);
    noneOf(overview, "the overview");
    const traces = await page(`/projects/${projectId}/traces`);
    expect(traces).toContain(SHOP_TITLE);
    noneOf(traces, "the traces list");
    await waitFor(() => hooked.length >= 3, 15_000);
    const log = await page(`/projects/${projectId}/deliveries`);
    expect(log).toContain(SHOP_TITLE.slice(0, 80));
    noneOf(log, "the delivery log");
  });

  it("the v1 API gives each grouped issue a title beside its unchanged message", async () => {
    const list = await api("/api/v1/errors?grouped=true&limit=10");
    expect(list.status).toBe(200);
    const byId = new Map<string, any>(list.body.data.map((g: any) => [g.id, g]));
    expect(byId.get(ids.shop)).toMatchObject({ title: SHOP_TITLE, message: SHOP("Player134_Speedy") });
    expect(byId.get(ids.queue)).toMatchObject({ title: QUEUE_TITLE, message: QUEUE("Player_10261327") });
    expect(byId.get(ids.spawn)).toMatchObject({ title: SPAWN_TITLE, message: SPAWN(3) });
    const detail = await api(`/api/v1/errors/${ids.queue}`);
    expect(detail.status).toBe(200);
    expect(detail.body.group).toMatchObject({ title: QUEUE_TITLE, message: QUEUE("Player_10261327") });
    // raw events carry no title: they are occurrences, not issues
    const raw = await api("/api/v1/errors?limit=10");
    expect(raw.body.data.every((e: any) => !("title" in e))).toBe(true);
    const player = await api("/api/v1/players/156");
    expect(player.body.issues.map((g: any) => g.title).sort()).toEqual([SHOP_TITLE, QUEUE_TITLE, SPAWN_TITLE].sort());
    const stats = await api("/api/v1/stats?timeframe=24h");
    expect(stats.body.top_errors.map((g: any) => g.title)).toContain(SHOP_TITLE);
  });

  it("Discord, Slack and webhook alerts name the new issue by its title", async () => {
    await waitFor(() => discord.messages.length >= 3 && slack.messages.length >= 3 && hooked.length >= 3, 15_000);
    const discordText = discord.messages.map((m) => `${m.body.embeds[0].title}\n${m.body.embeds[0].description}`).join("\n").replaceAll("\\", "");
    // Discord's text is escaped: `<`, `.`, `_` and `:` carry a backslash, removed above
    for (const t of [SHOP_TITLE, QUEUE_TITLE, SPAWN_TITLE]) expect(discordText).toContain(t);
    noneOf(discordText, "the Discord alerts");
    const slackText = slack.messages
      .map((m) => JSON.stringify(m.body))
      .join("\n")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">");
    for (const t of [SHOP_TITLE, QUEUE_TITLE, SPAWN_TITLE]) expect(slackText).toContain(JSON.stringify(t).slice(1, -1));
    noneOf(slackText, "the Slack alerts");
    const hook = hooked.find((h) => h.group.id === ids.shop);
    expect(hook.group).toMatchObject({ title: SHOP_TITLE, message: SHOP("Player134_Speedy") });
  });
});
