import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";

/** A Sentry event raises the project's alerts exactly as a native event does (same write path, same trigger). */
let app: TestApp;
let discord: FakeDiscord;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  app = await startTestApp({ JOBS_ENABLED: "true", WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(async () => {
  await app?.close();
  await discord?.close();
});

it("a new error sent by a Sentry SDK reaches the new_group rule's Discord channel once", async () => {
  const u = await makeUser(app.sql);
  const cookie = await login(app, u.email);
  const { projectId } = await makeProject(app.sql, u.id);
  const url = discord.webhookUrl();
  const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "alerts", kind: "discord", url } });
  expect(ch.status).toBe(201);
  const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie, body: { name: "new", trigger: "new_group", channel_ids: [ch.body.channel.id] } });
  expect(rule.status).toBe(201);
  const key = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
  const dsnId = String(key.body.dsn).split("/").pop();

  const event = { exception: { values: [{ type: "Error", value: "Workspace.Door:9: attempt to index nil with 'Open'" }] } };
  const body = `{}\n{"type":"event"}\n${JSON.stringify(event)}\n`;
  for (let i = 0; i < 3; i++) {
    const r = await app.request(`/api/${dsnId}/envelope/?sentry_key=${key.body.public_key}`, { method: "POST", body });
    expect(r.status).toBe(200);
  }
  for (let waited = 0; discord.for(url).length === 0 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  const [msg] = discord.for(url);
  expect(msg.body.embeds[0].title).toContain("New issue");
  expect(msg.body.embeds[0].description).toContain("attempt to index nil with 'Open'");
  // the two later occurrences are not new: no second message
  await new Promise((r) => setTimeout(r, 2000));
  expect(discord.for(url)).toHaveLength(1);
});
