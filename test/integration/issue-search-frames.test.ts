import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { MINUTE, ingest, iso, list } from "../support/query-fixtures.js";
import { countersApplied } from "../support/counters.js";

/**
 * Issue search finds an issue by the script paths and function names of its events' stack frames, at
 * any depth (not only the top frame, which is the culprit), through real HTTP: the v1 API's grouped
 * list and the issues page alike, for native stacks and Sentry-protocol frames, and for frames that
 * only a later event of the issue had.
 */
let app: TestApp;
let apiKey: string;
let projectId: string;
let cookie: string;
const now = Date.now();
const at = (minutesAgo: number) => iso(now - minutesAgo * MINUTE);

const issueLinks = (html: string) => [...html.matchAll(/<a class="msg"[^>]*href="[^"]*\/issues\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
const page = async (query: string) => {
  const r = await app.request(`/projects/${projectId}/issues?${query}`, { headers: { cookie }, redirect: "manual" });
  expect(r.status, query).toBe(200);
  return (await r.text()).replaceAll("<!-- -->", "");
};

let combat: string, shop: string, sentry: string;

beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
  cookie = await login(app, owner.email);
  const combatMessage = "ServerScriptService.Combat:42: attempt to index nil with 'Humanoid'";
  await ingest(app, apiKey, [
    {
      message: combatMessage,
      level: "error",
      stack_trace: "ServerScriptService.Combat:42 function onTouched\nServerScriptService.RoundRunner:88 function startRound",
      timestamp: at(30),
      trace_id: crypto.randomUUID(),
    },
    {
      message: "Purchase failed: not enough coins",
      level: "error",
      stack_trace: "ServerScriptService.ShopHandler:10 function buyItem\nServerScriptService.Main:3",
      timestamp: at(20),
      trace_id: crypto.randomUUID(),
    },
  ]);
  // a later event of the same issue (same message and top frame) through another caller
  await ingest(app, apiKey, [
    {
      message: combatMessage,
      level: "error",
      stack_trace: "ServerScriptService.Combat:42 function onTouched\nReplicatedStorage.Lobby.Teleporter:12 function teleportParty",
      timestamp: at(10),
      trace_id: crypto.randomUUID(),
    },
  ]);
  // a Sentry-protocol event: frames outermost first, the module path as filename
  const dsn = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
  expect(dsn.status).toBe(201);
  const dsnId = String(dsn.body.dsn).split("/").pop()!;
  const r = await app.request(`/api/${dsnId}/store/`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-sentry-auth": `Sentry sentry_key=${dsn.body.public_key},sentry_version=7,sentry_client=sentry-roblox/0.4.0`,
    },
    body: JSON.stringify({
      event_id: "7b2f0c3e9b2d4e7f8a1b2c3d4e5f6a70",
      level: "error",
      platform: "other",
      exception: {
        values: [
          {
            type: "Error",
            value: "Backpack is full",
            stacktrace: {
              frames: [
                { filename: "StarterPlayer.StarterPlayerScripts.InputController", function: "onKeyPressed", lineno: 77 },
                { filename: "ReplicatedStorage.Modules.Inventory", function: "equipTool", lineno: 7 },
              ],
            },
          },
        ],
      },
    }),
  });
  expect(r.status, await r.clone().text()).toBe(200);
  await countersApplied(app.sql);
  const ids = await app.sql<{ id: string; message: string }[]>`select id, message from error_groups where project_id = ${projectId}`;
  expect(ids).toHaveLength(3);
  const by = (s: string) => ids.find((g) => g.message.includes(s))!.id;
  [combat, shop, sentry] = [by("Humanoid"), by("Purchase"), by("Backpack")];
});
afterAll(() => app?.close());

describe("issue search by stack frames", () => {
  const cases: [string, string, () => string[]][] = [
    ["a caller's script path", "ServerScriptService.RoundRunner", () => [combat]],
    ["a function name", "onTouched", () => [combat]],
    ["a caller's function name", "startRound", () => [combat]],
    ["part of a path, in another case", "roundrun", () => [combat]],
    ["the frame of a later event only", "teleportParty", () => [combat]],
    ["a later event's script path", "Lobby.Teleporter", () => [combat]],
    ["a script and its function", "ShopHandler buyItem", () => [shop]],
    ["a frame without a function name", "ServerScriptService.Main", () => [shop]],
    ["a Sentry frame's function", "equipTool", () => [sentry]],
    ["a Sentry frame's module path", "StarterPlayerScripts.InputController", () => [sentry]],
    ["a path every issue's frames share", "ServerScriptService.", () => [combat, shop]],
  ];
  for (const [what, query, want] of cases) {
    it(`finds an issue by ${what} (${query}), in the API and on the page`, async () => {
      const api = await list(app, apiKey, { grouped: true, search: query });
      expect(api.status).toBe(200);
      expect(api.body.data.map((g: any) => g.id), query).toEqual(want());
      expect(api.body.total).toBe(want().length);
      expect(issueLinks(await page(`search=${encodeURIComponent(query)}`)), query).toEqual(want());
    });
  }

  it("does not match line numbers or names no frame has", async () => {
    for (const query of ["RoundRunner:88", "onTouchedX", "Humanoid.Died", "Inventory:7"]) {
      const api = await list(app, apiKey, { grouped: true, search: query });
      expect(api.status).toBe(200);
      expect(api.body, query).toMatchObject({ data: [], total: 0 });
    }
  });

  it("keeps each issue's distinct frames without line numbers, first events first", async () => {
    const rows = await app.sql<{ id: string; frames: string }[]>`select id, frames from error_groups where project_id = ${projectId}`;
    const of = Object.fromEntries(rows.map((r) => [r.id, r.frames]));
    expect(of[combat].split("\n")).toEqual([
      "ServerScriptService.Combat onTouched",
      "ServerScriptService.RoundRunner startRound",
      "ReplicatedStorage.Lobby.Teleporter teleportParty",
    ]);
    expect(of[shop].split("\n")).toEqual(["ServerScriptService.ShopHandler buyItem", "ServerScriptService.Main"]);
    expect(of[sentry].split("\n")).toEqual(["ReplicatedStorage.Modules.Inventory equipTool", "StarterPlayer.StarterPlayerScripts.InputController onKeyPressed"]);
  });

  it("keeps frames arriving at once from concurrent writes, and every occurrence", async () => {
    const [{ count: before }] = await app.sql<{ count: string }[]>`select count::text from error_groups where id = ${combat}`;
    const event = (caller: string) => ({
      message: "ServerScriptService.Combat:42: attempt to index nil with 'Humanoid'",
      level: "error",
      stack_trace: `ServerScriptService.Combat:42 function onTouched\nServerScriptService.${caller}:1 function call${caller}`,
      trace_id: crypto.randomUUID(),
    });
    await Promise.all([ingest(app, apiKey, [event("Alpha")]), ingest(app, apiKey, [event("Beta")])]);
    const [g] = await app.sql<{ count: string; frames: string }[]>`select count::text, frames from error_groups where id = ${combat}`;
    expect(Number(g.count)).toBe(Number(before) + 2);
    expect(g.frames.split("\n")).toEqual(expect.arrayContaining(["ServerScriptService.Alpha callAlpha", "ServerScriptService.Beta callBeta"]));
    for (const query of ["callAlpha", "callBeta"]) {
      expect((await list(app, apiKey, { grouped: true, search: query })).body.data.map((x: any) => x.id), query).toEqual([combat]);
    }
  });

  it("keeps at most 32 frames per issue: its first ones", async () => {
    const event = (i: number) => ({
      message: "ServerScriptService.Pets:7: pet not found",
      level: "error",
      stack_trace: `ServerScriptService.Pets:7 function findPet\nServerScriptService.Caller${i}:1 function viaCaller${i}x`,
      trace_id: crypto.randomUUID(),
    });
    // within one batch, then through the issue's row in later batches
    await ingest(app, apiKey, Array.from({ length: 20 }, (_, i) => event(i)));
    await ingest(app, apiKey, Array.from({ length: 10 }, (_, i) => event(20 + i)));
    await ingest(app, apiKey, Array.from({ length: 10 }, (_, i) => event(30 + i)));
    const [g] = await app.sql<{ id: string; frames: string }[]>`
      select id, frames from error_groups where project_id = ${projectId} and message like '%pet not found'`;
    const frames = g.frames.split("\n");
    expect(frames).toHaveLength(32);
    expect(frames.slice(0, 2)).toEqual(["ServerScriptService.Pets findPet", "ServerScriptService.Caller0 viaCaller0x"]);
    expect(frames.at(-1)).toBe("ServerScriptService.Caller30 viaCaller30x");
    expect((await list(app, apiKey, { grouped: true, search: "viaCaller30x" })).body.data.map((x: any) => x.id)).toEqual([g.id]);
    expect((await list(app, apiKey, { grouped: true, search: "viaCaller31x" })).body).toMatchObject({ data: [], total: 0 });
  });
});
