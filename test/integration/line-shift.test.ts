import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countersApplied } from "../support/counters.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { shiftLines } from "../support/grouping-corpus.js";
import { getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { QUIET_MS, sleep, waitFor } from "../support/wait.js";

/**
 * Lines move; bugs don't (grouping v4): a game sends its errors as version N, then an update moves
 * every line of its scripts and the same errors arrive as version N+1. Real server with pg-boss
 * running, a local Discord, events through POST /api/ingest.
 */
let app: TestApp;
let discord: FakeDiscord;
let cookie: string;
let ownerId: string;

const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

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

// the three stack forms, a caller without a function name, and an error thrown by game code
const ERRORS = [
  {
    message: "ServerScriptService.Shop:40: attempt to index nil with 'Price'",
    stack_trace: "ServerScriptService.Shop:40 function buy\nServerScriptService.Main:5",
  },
  {
    message: "ReplicatedStorage.Modules.Economy:57: attempt to perform arithmetic (add) on nil and number",
    stack_trace: "Script 'ReplicatedStorage.Modules.Economy', Line 57 - function deposit\nScript 'ServerScriptService.Jobs', Line 77 - function payday",
  },
  {
    message: "Trade rejected: item no longer in inventory",
    stack_trace: "ServerScriptService.Trade, line 210 - function confirm\nServerScriptService.Trade, line 150",
  },
];

describe("an update that moves every line", () => {
  it("keeps the errors in their issues: same issue count, first version stays N, no new-issue alert", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, ownerId, [], `Line shift ${randomUUID().slice(0, 8)}`);
    const url = discord.webhookUrl();
    const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "Discord #alerts", kind: "discord", url } });
    expect(ch.status).toBe(201);
    const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, {
      cookie,
      body: { name: "new issues", channel_ids: [ch.body.channel.id], trigger: "new_group" },
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(201);

    await ingest(app, apiKey, { errors: ERRORS.map((e) => ({ ...e, game_version: "41" })) });
    await waitFor(() => discord.for(url).length >= ERRORS.length, 5000);
    const before = (await getJson(app, "/api/v1/errors?grouped=true&limit=100", apiKey)).body.data as any[];
    expect(before).toHaveLength(ERRORS.length);

    // the update: 12 lines added at the top of every script
    await ingest(app, apiKey, {
      errors: ERRORS.map((e) => ({ message: shiftLines(e.message, 12), stack_trace: shiftLines(e.stack_trace, 12), game_version: "42", count: 2 })),
    });
    await sleep(QUIET_MS);

    const after = (await getJson(app, "/api/v1/errors?grouped=true&limit=100", apiKey)).body.data as any[];
    expect(after.map((g) => g.id).sort()).toEqual(before.map((g) => g.id).sort());
    for (const g of after) {
      const issue = (await getJson(app, `/api/v1/errors/${g.id}`, apiKey)).body.group;
      expect(issue).toMatchObject({ count: 3, first_version: "41" });
    }
    // nothing is new in the update, and no new-issue alert went out for it
    expect((await getJson(app, "/api/v1/errors?grouped=true&new_in_version=42", apiKey)).body.data).toEqual([]);
    const releases = Object.fromEntries(((await getJson(app, "/api/v1/releases", apiKey)).body.data as any[]).map((v) => [v.version, v.new_issues]));
    expect(releases).toMatchObject({ "41": ERRORS.length, "42": 0 });
    expect(discord.for(url)).toHaveLength(ERRORS.length);
  });
});
