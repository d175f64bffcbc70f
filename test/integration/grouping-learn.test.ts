import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupingParts } from "../../app/ingest/fingerprint.server.js";
import { LearnedTemplates } from "../../app/ingest/learned-templates.server.js";
import { learnedFingerprint } from "../../app/ingest/miner.server.js";
import { fillGroupingTemplates, learnProject } from "../../jobs/grouping-learn.js";
import { countersApplied } from "../support/counters.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { QUIET_MS, sleep } from "../support/wait.js";

/**
 * Learned templates (docs/grouping.md, "Learned templates"): a real server with pg-boss running, a
 * local Discord for new-issue alerts, events through POST /api/ingest. The learning job runs by itself
 * after writes that made issues; the test waits for its result.
 */
let app: TestApp;
let discord: FakeDiscord;
let cookie: string;
let ownerId: string;

const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

// the learning job runs in the background (pg-boss): under a full suite's load a pass has taken over 30 s
async function until<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 55_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error("timed out waiting");
    await sleep(100);
  }
}

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" });
  const u = await makeUser(app.sql);
  ownerId = u.id;
  cookie = await login(app, u.email);
});

afterAll(async () => {
  await app?.close();
  await discord?.close();
});

const STACK = "ServerScriptService.MapLoader:88 function loadMap\nServerScriptService.Main:14";
const mapError = (map: string, count = 1, from = "storage") => ({ message: `Failed to load map ${map} from ${from}`, stack_trace: STACK, count });
const MAPS = ["Desert", "Volcano", "Glacier", "Jungle", "Harbor"];

async function projectWithAlerts() {
  const { projectId, apiKey } = await makeProject(app.sql, ownerId, [], `Learn ${randomUUID().slice(0, 8)}`);
  const url = discord.webhookUrl();
  const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "Discord #alerts", kind: "discord", url } });
  expect(ch.status).toBe(201);
  const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, {
    cookie,
    body: { name: "new issues", channel_ids: [ch.body.channel.id], trigger: "new_group" },
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  return { projectId, apiKey, url };
}

const issues = async (apiKey: string) => (await getJson(app, "/api/v1/errors?grouped=true&limit=100", apiKey)).body.data as any[];

describe("learned templates", () => {
  let projectId: string;
  let apiKey: string;
  let url: string;
  let issueId: string;

  it("variants of an unknown form at one location become one issue, with exact counts, once learned", async () => {
    ({ projectId, apiKey, url } = await projectWithAlerts());
    // one map each, with counts, in separate requests (each makes its issue, as before anything is
    // learned), one right after the other: waiting for each one's counters as well gave the learning
    // pass time to run between them, and a map posted after it is a learned variant, not an issue
    for (const [i, m] of MAPS.entries()) {
      const r = await call(app, "POST", "/api/ingest", { body: { errors: [mapError(m, i + 1)] }, headers: { "x-api-key": apiKey } });
      expect(r.status).toBe(200);
    }
    await until(async () => discord.for(url).length >= MAPS.length);

    const merged = await until(async () => {
      const list = await issues(apiKey);
      return list.length === 1 && list;
    });
    issueId = merged[0].id;
    const detail = (await getJson(app, `/api/v1/errors/${issueId}`, apiKey)).body;
    // 1 + 2 + 3 + 4 + 5 occurrences, all of them in the one issue, and it is the oldest one (Desert's)
    expect(detail.group).toMatchObject({ count: 15, message: "Failed to load map Desert from storage" });
    expect(detail.learned_template).toMatchObject({
      template: "Failed to load map <*> from storage",
      variables: [{ position: 4, samples: [...MAPS].sort() }],
      texts: 5,
      issues: 5,
    });
    const members = await call(app, "GET", `/api/team/projects/${projectId}/groups/${issueId}/merged`, { cookie });
    expect((members.body.members as any[]).map((m) => Number(m.count)).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
  });

  it("a later variant makes no new issue and no new-issue alert", async () => {
    const alerts = discord.for(url).length;
    await ingest(app, apiKey, { errors: [mapError("Lagoon", 3), mapError("Canyon")] });
    await sleep(QUIET_MS);
    const list = await issues(apiKey);
    expect(list.map((g) => g.id)).toEqual([issueId]);
    expect((await getJson(app, `/api/v1/errors/${issueId}`, apiKey)).body.group.count).toBe(19);
    expect(discord.for(url)).toHaveLength(alerts);
  });

  it("two caches (as two instances have) give a new variant the same fingerprint: the template's, a function of location and template", async () => {
    const parts = groupingParts("Failed to load map Outpost from storage", STACK);
    const a = new LearnedTemplates(app.sql);
    const b = new LearnedTemplates(app.sql);
    try {
      const fa = await a.fingerprintFor(projectId, parts.location, parts.template);
      const fb = await b.fingerprintFor(projectId, parts.location, parts.template);
      expect(fa).toBe(learnedFingerprint(parts.location, "Failed to load map <*> from storage"));
      expect(fb).toBe(fa);
      // a cache holds the project's templates: a few hundred bytes for one
      expect(a.bytesFor(projectId)).toBeGreaterThan(0);
      expect(a.bytesFor(projectId)).toBeLessThan(2048);
    } finally {
      a.close();
      b.close();
    }
  });

  it("a learning pass run again changes nothing", async () => {
    // the service's own pass may hold the project at this moment (null): then this one runs after it
    expect(await until(() => learnProject(app.sql, projectId))).toEqual({ templates: 1, merged: 0 });
    expect((await issues(apiKey)).map((g) => g.id)).toEqual([issueId]);
  });

  it("a location with different constant text stays apart", async () => {
    // `from backup` at the same location: two values at that word are constants, not a variable
    await ingest(app, apiKey, { errors: [mapError("Desert", 1, "backup"), mapError("Volcano", 1, "backup")] });
    const other = { message: "Failed to load map Desert from storage", stack_trace: "ServerScriptService.Lobby:5 function warm" };
    await ingest(app, apiKey, { errors: [other] });
    await sleep(QUIET_MS);
    await until(() => learnProject(app.sql, projectId));
    const list = await issues(apiKey);
    expect(list).toHaveLength(4);
    expect(list.find((g) => g.id === issueId).count).toBe(19);
  });

  it("an unmerged issue gets back exactly its own counts and is not merged again", async () => {
    const members = (await call(app, "GET", `/api/team/projects/${projectId}/groups/${issueId}/merged`, { cookie })).body.members as any[];
    const volcano = members.find((m) => m.message === "Failed to load map Volcano from storage");
    const r = await call(app, "POST", `/api/team/projects/${projectId}/groups/${issueId}/unmerge`, { cookie, body: { ids: [volcano.id] } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await until(() => learnProject(app.sql, projectId));
    expect((await getJson(app, `/api/v1/errors/${volcano.id}`, apiKey)).body.group).toMatchObject({ count: 2, merged_into: null });
    expect((await getJson(app, `/api/v1/errors/${issueId}`, apiKey)).body.group.count).toBe(17);
  });

  it("a restart keeps what was learned: a new variant lands in the template's issue", async () => {
    const url0 = app.databaseUrl;
    await app.close();
    app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" }, url0);
    const alerts = discord.for(url).length;
    await ingest(app, apiKey, { errors: [mapError("Citadel", 2)] });
    await sleep(QUIET_MS);
    expect((await getJson(app, `/api/v1/errors/${issueId}`, apiKey)).body.group.count).toBe(19);
    expect(await issues(apiKey)).toHaveLength(5);
    expect(discord.for(url)).toHaveLength(alerts);
  });

  it("the issue page shows the learned template with its variable marked", async () => {
    const page = await app.request(`/projects/${projectId}/issues/${issueId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-testid="learned-template"');
    const at = html.indexOf('data-testid="learned-template"');
    expect(at).toBeGreaterThan(0);
    const dd = html.slice(at, html.indexOf("</dd>", at));
    // one word marked, with the values seen there; the rest of the template as sent
    expect(dd.match(/<mark /g)).toHaveLength(1);
    expect(dd).toMatch(/<mark title="varies: Desert, Glacier, Harbor, Jungle, Volcano">‹any›<\/mark>/);
    const text = dd.replace(/<[^>]*>/g, "").replace(/&#x27;/g, "'");
    expect(text).toContain("Failed to load map ‹any› from storage");
    expect(text).toMatch(/covers \d+ texts from \d+ issues/);
  });

  it("issues from before learning get their template from their latest stored event, then are learned", async () => {
    const { projectId: p, apiKey: key } = await makeProject(app.sql, ownerId, [], `Backfill ${randomUUID().slice(0, 8)}`);
    const zone = (z: string) => ({ message: `Zone ${z} is locked for this player`, stack_trace: "ServerScriptService.Zones:41 function enter" });
    const zones = ["Spawn", "Market", "Arena", "Docks"];
    await ingest(app, key, { errors: [...zones.map(zone), { message: "Zone Spawn is locked for this player", fingerprint: ["zones"] }] });
    // as issues made before migration 116 are: nothing known yet
    await app.sql`update error_groups set grouping_location = null, grouping_template = null where project_id = ${p}`;
    await fillGroupingTemplates(app.sql);
    const rows = await app.sql<{ message: string; grouping_location: string; grouping_template: string }[]>`
      select message, grouping_location, grouping_template from error_groups where project_id = ${p} and merged_into is null order by message`;
    for (const r of rows.filter((r) => r.grouping_template !== "")) {
      const parts = groupingParts(r.message, "ServerScriptService.Zones:41 function enter");
      expect([r.grouping_location, r.grouping_template]).toEqual([parts.location, parts.template]);
    }
    // the issue of a client fingerprint was not made by default grouping: nothing to learn from
    expect(rows.filter((r) => r.grouping_template === "")).toHaveLength(1);
    await until(() => learnProject(app.sql, p));
    const list = await issues(key);
    expect(list).toHaveLength(2);
    expect(list.map((g) => Number(g.count)).sort()).toEqual([1, 4]);
  });
});
