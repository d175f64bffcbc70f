import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * A share link shows what failed, never who it happened to: names and ids planted in every field
 * an event can carry must appear nowhere in the share JSON or the share page's HTML.
 */
let app: TestApp;
let viewerToken: string;
let editorToken: string;
let sentryToken: string;

const PLANTED = [
  "Zyxwvplanted", // player_name, and a name inside an instance path
  "Qqplantedtwo", // a second player, named bare in a message
  "918273645", // user_id, also inside a DataStore key
  "55512345", // a value after `Key =`
  "7776665554", // an Open Cloud user path
  "4445556667", // a UserId: value
  "CtxPlanted", // context
  "JobPlanted", // job_id
  "0a1b2c3d-1111-2222-3333-444455556666", // trace_id
  "7e57ab1e-0000-4000-8000-00000000e1d0", // event_id
  "SecretName", // a native tag whose key names a player
  "111222333", // a native tag whose key names a user id
  "SentryKid", // a Sentry tag whose key names a player
  "Sentrynamed", // a Sentry event's user.username, also a bare tag value
  "5550001112", // a Sentry event's user.id, also inside a tag value
  "kid@example.test", // Sentry user.email and a `user.email` tag
  "ExtraPlanted", // Sentry extra
];

/** Tags that say nothing about who: they stay. */
const KEPT_NATIVE = ["combat", "weapon:sword"];
const KEPT_SENTRY = ["server:eu-1", "place_id:1818"];

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "1" });
  const u = await makeUser(app.sql);
  const { projectId, apiKey } = await makeProject(app.sql, u.id);
  const cookie = await login(app, u.email);
  const stack = "Players.Zyxwvplanted.PlayerGui.Hud:5: function update\nServerScriptService.Data:40: function save Player_918273645";
  await ingest(app, apiKey, {
    errors: [
      {
        message: "Players.Zyxwvplanted.PlayerGui.Hud:5: DataStore request failed for Player_918273645 (Key = 55512345)",
        stack_trace: stack,
        user_id: 918273645,
        player_name: "Zyxwvplanted",
        context: { note: "CtxPlanted" },
        job_id: "JobPlanted-00000000-0000",
        trace_id: "{0A1B2C3D-1111-2222-3333-444455556666}",
        event_id: "7E57AB1E-0000-4000-8000-00000000E1D0",
        tags: ["player:SecretName", "uid:111222333", "combat", "weapon:sword", "Zyxwvplanted", "save=Player_918273645"],
        fingerprint: ["hud-save"],
      },
      {
        message: "Qqplantedtwo lost data at users/7776665554, UserId: 4445556667",
        stack_trace: "Players.Qqplantedtwo.Backpack.Tool:3",
        user_id: "4445556667",
        player_name: "Qqplantedtwo",
        tags: ["Player-Name:SecretName", "USER.ID:111222333", "note:seen 4445556667 times", "buyer:qqplantedtwo"],
        fingerprint: ["hud-save"],
      },
    ],
  });
  const sentry = await app.request(`/api/${projectId}/store/?sentry_key=${apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      event_id: "a".repeat(32),
      platform: "other",
      level: "error",
      exception: { values: [{ type: "Error", value: "Shop.Buy failed", stacktrace: { frames: [{ filename: "ServerScriptService.Shop", lineno: 7, function: "buy" }] } }] },
      user: { id: "5550001112", username: "Sentrynamed", email: "kid@example.test" },
      tags: { player: "SentryKid", "user.email": "kid@example.test", buyer: "Sentrynamed", session: "u5550001112", server: "eu-1", place_id: "1818" },
      extra: { player_name: "ExtraPlanted" },
      contexts: { player: { name: "ExtraPlanted" } },
      fingerprint: ["shop-buy"],
    }),
  });
  expect(sentry.status).toBe(200);
  const groupOf = async (fingerprint: string) =>
    (await app.sql<{ id: string }[]>`select group_id as id from events where project_id = ${projectId} and message like ${fingerprint} limit 1`)[0].id;
  const mk = async (groupId: string, role: string) => {
    const r = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role } });
    expect(r.status).toBe(201);
    return r.body.token as string;
  };
  const nativeGroup = await groupOf("%DataStore request failed%");
  viewerToken = await mk(nativeGroup, "viewer");
  editorToken = await mk(nativeGroup, "editor");
  sentryToken = await mk(await groupOf("%Shop.Buy failed%"), "viewer");
});
afterAll(() => app?.close());

const leaks = (text: string) => PLANTED.filter((p) => text.toLowerCase().includes(p.toLowerCase()));

describe("share views", () => {
  it("GET /api/share/:token names nobody, and drops context, job_id, trace_id and event_id", async () => {
    const r = await call(app, "GET", `/api/share/${viewerToken}`);
    expect(r.status).toBe(200);
    expect(leaks(JSON.stringify(r.body))).toEqual([]);
    expect(r.body.events).toHaveLength(2);
    for (const e of r.body.events) {
      for (const k of ["context", "job_id", "trace_id", "event_id", "user_id", "player_name"]) expect(e).not.toHaveProperty(k);
    }
    // what failed stays readable
    expect(r.body.group.message).toBe("Players.<player>.PlayerGui.Hud:5: DataStore request failed for Player_<id> (Key = <id>)");
    const second = r.body.events.find((e: { message: string }) => e.message.includes("lost data"));
    expect(second.message).toBe("<player> lost data at users/<id>, UserId: <id>");
    expect(second.stack_trace).toBe("Players.<player>.Backpack.Tool:3");
  });

  it("the share page's HTML (rendered text and hydration data) names nobody", async () => {
    const res = await app.request(`/share/${viewerToken}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("DataStore request failed");
    for (const t of KEPT_NATIVE) expect(html).toContain(t);
    expect(leaks(html)).toEqual([]);
  });

  it("drops native tags whose key names a player or user, or whose value holds a name or id, and keeps the rest", async () => {
    const r = await call(app, "GET", `/api/share/${viewerToken}`);
    expect(r.status).toBe(200);
    const tags = r.body.events.map((e: { tags: string[] | null }) => e.tags);
    expect(tags).toContainEqual(KEPT_NATIVE);
    // the second event had only tags that say who
    expect(tags).toContainEqual(null);
    expect(leaks(JSON.stringify(r.body))).toEqual([]);
  });

  it("a Sentry event's tags, user, extra and contexts name nobody, on the API and the page", async () => {
    const r = await call(app, "GET", `/api/share/${sentryToken}`);
    expect(r.status).toBe(200);
    expect(r.body.events).toHaveLength(1);
    expect(r.body.events[0].tags).toEqual(KEPT_SENTRY);
    expect(r.body.events[0]).not.toHaveProperty("context");
    expect(leaks(JSON.stringify(r.body))).toEqual([]);
    const res = await app.request(`/share/${sentryToken}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("Shop.Buy failed");
    for (const t of KEPT_SENTRY) expect(html).toContain(t);
    expect(leaks(html)).toEqual([]);
  });

  it("an editor's status change answers the scrubbed group", async () => {
    const r = await call(app, "POST", `/api/share/${editorToken}`, { body: { status: "resolved" } });
    expect(r.status).toBe(200);
    expect(r.body.group.status).toBe("resolved");
    expect(leaks(JSON.stringify(r.body))).toEqual([]);
  });
});
