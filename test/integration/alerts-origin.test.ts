import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { QUIET_MS, sleep, waitFor } from "../support/wait.js";

/**
 * Rules limited to server-origin issues and to issues N distinct players had, end to end: real
 * server with pg-boss running, a local Discord, events through POST /api/ingest, rules through the
 * Team API. What game clients report (relayed by the SDK, tagged origin:client) may be an
 * exploiter's text; these limits keep it from paging the team.
 */
let app: TestApp;
let discord: FakeDiscord;
let owner: { id: string; email: string; cookie: string };


async function project() {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Origin ${randomUUID().slice(0, 8)}`);
  return { projectId, apiKey };
}
async function channel(projectId: string) {
  const url = discord.webhookUrl();
  const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie: owner.cookie, body: { name: "Discord", kind: "discord", url } });
  expect(ch.status).toBe(201);
  return { url, channelId: ch.body.channel.id as string };
}
async function rule(projectId: string, channelId: string, fields: Record<string, unknown>) {
  const r = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie, body: { name: "rule", channel_ids: [channelId], ...fields } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.rule;
}
/** Each message's embed as text (title, description, fields). */
const embeds = (url: string) => discord.for(url).map((m) => JSON.stringify(m.body.embeds[0]));
const clientOnly = async (projectId: string) =>
  Object.fromEntries(
    (await app.sql<{ message: string; client_only: boolean }[]>`select message, client_only from error_groups where project_id = ${projectId}`).map((g) => [
      g.message,
      g.client_only,
    ]),
  );

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" });
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});

afterAll(async () => {
  await app?.close();
  await discord?.close();
});

describe("server_only rules", () => {
  it("a client-origin issue does not alert a server-only rule (a plain rule still alerts); a server event makes the issue server-origin", async () => {
    const { projectId, apiKey } = await project();
    const plain = await channel(projectId);
    const serverOnly = await channel(projectId);
    const created = await rule(projectId, plain.channelId, { trigger: "new_group" });
    expect(created).toMatchObject({ server_only: false, min_players: 0 });
    expect(await rule(projectId, serverOnly.channelId, { trigger: "new_group", server_only: true })).toMatchObject({ server_only: true, min_players: 0 });

    const fromClient = "Players.Exploiter.PlayerGui.Hud:1: FREE ROBUX at scam.example";
    await ingest(app, apiKey, { errors: [{ message: fromClient, user_id: 900, player_name: "Exploiter", tags: ["origin:client"] }] });
    // the SDK's earlier mark reads the same
    await ingest(app, apiKey, { errors: [{ message: "Players.Old.PlayerGui.Hud:2: old sdk", user_id: 901, tags: ["client", "map:castle"] }] });
    await waitFor(() => discord.for(plain.url).length === 2);
    await sleep(QUIET_MS);
    expect(discord.for(serverOnly.url)).toHaveLength(0);
    expect(await clientOnly(projectId)).toEqual({ [fromClient]: true, "Players.Old.PlayerGui.Hud:2: old sdk": true });

    // a server error alerts both rules
    await ingest(app, apiKey, { errors: [{ message: "ServerScriptService.Shop:7: DataStore request failed", tags: ["shop:main"] }] });
    await waitFor(() => discord.for(serverOnly.url).length === 1);
    expect(embeds(serverOnly.url)[0]).toContain("DataStore request failed");

    // the same error then raised on the server (untagged, in a batch with a client report of it):
    // the issue is no longer client-only, and the server-only rule alerts it once
    await ingest(app, apiKey, { errors: [{ message: fromClient, tags: ["origin:client"] }, { message: fromClient }] });
    await waitFor(() => discord.for(serverOnly.url).length === 2);
    expect(embeds(serverOnly.url)[1]).toContain("FREE ROBUX");
    expect((await clientOnly(projectId))[fromClient]).toBe(false);
    await ingest(app, apiKey, { errors: [{ message: fromClient, tags: ["origin:client"] }] });
    await sleep(QUIET_MS);
    expect(discord.for(serverOnly.url)).toHaveLength(2);
    expect((await clientOnly(projectId))[fromClient]).toBe(false);
    expect(discord.for(plain.url)).toHaveLength(3);
  });
});

describe("client-only issues and merges", () => {
  it("a merged issue is client-only while all its members are; later events and unmerge keep each part's own mark", async () => {
    const { projectId, apiKey } = await project();
    const a = "Players.A.PlayerGui.Shop:1: client one";
    const b = "Players.B.PlayerGui.Shop:2: client two";
    const c = "ServerScriptService.Shop:3: server three";
    await ingest(app, apiKey, { errors: [{ message: a, tags: ["origin:client"] }, { message: b, tags: ["origin:client"] }, { message: c }] });
    const id = async (message: string) =>
      (await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and message = ${message} and merged_into is null`)[0].id;
    const [ida, idb, idc] = [await id(a), await id(b), await id(c)];
    const merge = (ids: string[], target: string) =>
      call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie: owner.cookie, body: { ids, target_id: target } });
    const mark = async (groupId: string) =>
      (await app.sql<{ client_only: boolean }[]>`select client_only from error_groups where project_id = ${projectId} and id = ${groupId}`)[0].client_only;

    expect((await merge([ida, idb], ida)).status).toBe(200);
    expect(await mark(ida)).toBe(true);
    // a server event of a member's fingerprint lands in the issue and makes it (and the member) server-origin
    await ingest(app, apiKey, { errors: [{ message: b }] });
    expect(await mark(ida)).toBe(false);
    expect(await mark(idb)).toBe(false);
    const u = await call(app, "POST", `/api/team/projects/${projectId}/groups/${ida}/unmerge`, { cookie: owner.cookie, body: { ids: [idb] } });
    expect(u.status).toBe(200);
    expect([await mark(ida), await mark(idb)]).toEqual([true, false]);
    expect((await merge([ida, idc], ida)).status).toBe(200);
    expect(await mark(ida)).toBe(false);
  });
});

describe("min_players rules", () => {
  it("alerts a new issue only once N distinct players had it, and only once", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await channel(projectId);
    await rule(projectId, channelId, { trigger: "new_group", min_players: 3 });
    const message = "Players.Someone.PlayerGui.Inventory:12: attempt to index nil with 'Slot'";
    const from = (userId: number, count = 1) => ingest(app, apiKey, { errors: [{ message, user_id: userId, count, tags: ["origin:client"] }] });

    await from(1, 50);
    await from(1, 50);
    await from(2);
    // a server error with no player is not a player
    await ingest(app, apiKey, { errors: [{ message }] });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);

    await from(3);
    await waitFor(() => discord.for(url).length === 1);
    expect(embeds(url)[0]).toContain("attempt to index nil with 'Slot'");
    await from(4);
    await from(5);
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(1);
    const [{ user_count }] = await app.sql<{ user_count: string }[]>`select user_count::text from error_groups where project_id = ${projectId}`;
    expect(user_count).toBe("5");
  });

  it("a frequency rule with a player minimum needs both the count and the players", async () => {
    const { projectId, apiKey } = await project();
    const { url, channelId } = await channel(projectId);
    await rule(projectId, channelId, { trigger: "frequency", threshold_count: 10, window_minutes: 5, min_players: 2 });
    const message = "Players.Someone.PlayerScripts.Camera:3: spam";
    await ingest(app, apiKey, { errors: [{ message, user_id: 7, count: 500 }] });
    await sleep(QUIET_MS);
    expect(discord.for(url)).toHaveLength(0);
    await ingest(app, apiKey, { errors: [{ message, user_id: 8 }] });
    await waitFor(() => discord.for(url).length === 1);
  });
});

describe("rule input", () => {
  it("refuses a negative or non-integer player minimum and a non-boolean server_only with 400, writing nothing", async () => {
    const { projectId } = await project();
    const { channelId } = await channel(projectId);
    const base = { name: "bad", trigger: "new_group", channel_ids: [channelId] };
    const bad: [Record<string, unknown>, string][] = [
      [{ min_players: -1 }, "min_players"],
      [{ min_players: 2.5 }, "min_players"],
      [{ min_players: "3" }, "min_players"],
      [{ min_players: null }, "min_players"],
      [{ min_players: 1_000_001 }, "min_players"],
      [{ server_only: "yes" }, "server_only"],
      [{ server_only: 1 }, "server_only"],
    ];
    for (const [fields, path] of bad) {
      const r = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie, body: { ...base, ...fields } });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", message: expect.stringContaining(path), details: [expect.objectContaining({ path })] });
    }
    expect(await app.sql`select 1 from alert_rules where project_id = ${projectId}`).toHaveLength(0);

    const made = await rule(projectId, channelId, { trigger: "new_group" });
    for (const [fields, path] of bad) {
      const r = await call(app, "PATCH", `/api/team/projects/${projectId}/rules/${made.id}`, { cookie: owner.cookie, body: fields });
      expect(r.status, JSON.stringify(fields)).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", details: [expect.objectContaining({ path })] });
    }
    const [stored] = await app.sql<{ server_only: boolean; min_players: number; updated_at: Date }[]>`
      select server_only, min_players, updated_at from alert_rules where project_id = ${projectId}`;
    expect({ ...stored, updated_at: stored.updated_at.toISOString() }).toEqual({ server_only: false, min_players: 0, updated_at: made.updated_at });

    const ok = await call(app, "PATCH", `/api/team/projects/${projectId}/rules/${made.id}`, { cookie: owner.cookie, body: { server_only: true, min_players: 5 } });
    expect(ok.status).toBe(200);
    expect(ok.body.rule).toMatchObject({ server_only: true, min_players: 5, trigger: "new_group" });
    const list = await call(app, "GET", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie });
    expect(list.body.data).toEqual([expect.objectContaining({ id: made.id, server_only: true, min_players: 5 })]);
  });
});
