import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";

/**
 * Test alerts reach third parties (a Discord channel, an inbox, someone's webhook), so each user may
 * send ALERT_TEST_RATE_LIMIT (default 5) a minute, over every channel and project, through the API
 * and the Alerts page alike.
 */
let app: TestApp;
let discord: FakeDiscord;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
});
afterAll(async () => {
  await app?.close();
  await discord?.close();
});

describe("POST /api/notifications/test: the per-user limit", () => {
  it("limits test alerts per user: past ALERT_TEST_RATE_LIMIT a minute a 429 with Retry-After, on the API and the page, and nothing more is sent", async () => {
    const signedIn = async () => {
      const u = await makeUser(app.sql);
      const cookie = await login(app, u.email);
      const { projectId } = await makeProject(app.sql, u.id, [], `Tests ${randomUUID().slice(0, 8)}`);
      const url = discord.webhookUrl();
      const ch = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "Discord", kind: "discord", url } });
      return { cookie, projectId, url, channelId: ch.body.channel.id as string };
    };
    const a = await signedIn();
    const limit = app.services.config.alertTestRateLimit;
    expect(limit).toBe(5);
    const test = (who: { cookie: string; channelId: string }) => call(app, "POST", "/api/notifications/test", { cookie: who.cookie, body: { channel_id: who.channelId } });
    for (let i = 0; i < limit; i++) expect((await test(a)).status).toBe(200);
    const refused = await test(a);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "rate_limited", message: expect.stringContaining("Too many test alerts") });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(60);
    // the page's "Send test" button is the same verb under the same limit
    const page = await app.request(`/projects/${a.projectId}/alerts`, {
      method: "POST",
      headers: { cookie: a.cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "channel-test", id: a.channelId }).toString(),
    });
    expect(page.status).toBe(429);
    expect(page.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(discord.for(a.url)).toHaveLength(limit);
    // another user's budget is their own
    const b = await signedIn();
    expect((await test(b)).status).toBe(200);
    // refusals before the send (bad body, someone else's channel) are not counted
    const c = await signedIn();
    for (let i = 0; i < limit + 2; i++) expect((await test({ cookie: c.cookie, channelId: a.channelId })).status).toBe(404);
    expect((await test(c)).status).toBe(200);
  });

});
