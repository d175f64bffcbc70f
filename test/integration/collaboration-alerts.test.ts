import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, projectWithRoles, signedInRoles, type RoleUsers } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { FakeSlack } from "../support/fake-slack.js";
import { startReceiver } from "../support/webhook-receiver.js";

/**
 * Issue alerts name the assignee in every channel (a local Discord, Slack and webhook receiver), and
 * the alerts sent appear on the timeline, read from the delivery log.
 */
let app: TestApp;
let discord: FakeDiscord;
let slack: FakeSlack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let users: RoleUsers;

beforeAll(async () => {
  discord = await new FakeDiscord().start();
  slack = await new FakeSlack().start();
  receiver = await startReceiver();
  app = await startTestApp({ WEBHOOK_ALLOW_PRIVATE: "true" });
  users = await signedInRoles(app);
});
afterAll(async () => {
  await app?.close();
  await discord?.close();
  await slack?.close();
  receiver?.close();
});

const dispatch = (body: unknown) =>
  call(app, "POST", "/api/notifications/dispatch", { body, headers: { "x-internal-key": app.services.config.notificationSecret! } });

describe("alerts about an assigned issue", () => {
  it("name the assignee on Discord, Slack and the webhook; an unassigned issue's do not; the timeline lists the alerts sent", async () => {
    const { projectId, apiKey } = await projectWithRoles(app.sql, users);
    const P = `/api/team/projects/${projectId}`;
    const cookie = users.owner.cookie;
    const hooks = { discord: discord.webhookUrl(), slack: slack.hookUrl(), webhook: receiver.url };
    const channelIds: string[] = [];
    for (const [kind, url] of Object.entries(hooks)) {
      const ch = await call(app, "POST", `${P}/channels`, { cookie, body: { name: `${kind} channel`, kind, url } });
      expect(ch.status, JSON.stringify(ch.body)).toBe(201);
      channelIds.push(ch.body.channel.id);
    }
    await ingest(app, apiKey, { errors: [{ message: "Assigned alert", count: 3 }, { message: "Unassigned alert", count: 3 }] });
    const rule = await call(app, "POST", `${P}/rules`, { cookie, body: { name: "Busy", trigger: "frequency", threshold_count: 3, window_minutes: 5, channel_ids: channelIds } });
    expect(rule.status).toBe(201);
    const groups = await app.sql<{ id: string; fingerprint: string; message: string }[]>`select id, fingerprint, message from error_groups where project_id = ${projectId}`;
    const assigned = groups.find((g) => g.message === "Assigned alert")!;
    const unassigned = groups.find((g) => g.message === "Unassigned alert")!;
    await call(app, "PATCH", `${P}/groups/${assigned.id}`, { cookie: users.member.cookie, body: { assignee_id: users.admin.id } });

    const r = await dispatch({ project_id: projectId, fingerprints: groups.map((g) => g.fingerprint) });
    expect(r.body).toEqual({ sent: 6, failed: 0 });

    const embeds = discord.for(hooks.discord).map((m) => m.body.embeds[0]);
    const embedOf = (message: string) => embeds.find((e) => e.description.includes(message))!;
    // Discord text is escaped Markdown: the address reads as typed once rendered
    expect(embedOf("Assigned alert").fields).toContainEqual({ name: "Assignee", value: users.admin.email.replace(/[.\-@]/g, "\\$&"), inline: true });
    expect(embedOf("Unassigned alert").fields.map((f: { name: string }) => f.name)).not.toContain("Assignee");

    const slackBodies = slack.messages.filter((m) => m.path === new URL(hooks.slack).pathname).map((m) => JSON.stringify(m.body));
    expect(slackBodies.filter((b) => b.includes(`*Assignee:* ${users.admin.email}`))).toHaveLength(1);

    const hookBodies = receiver.got.map((g) => JSON.parse(g.body));
    expect(hookBodies.find((b) => b.group.id === assigned.id).group.assignee).toEqual({ email: users.admin.email });
    expect(hookBodies.find((b) => b.group.id === unassigned.id).group.assignee).toBeNull();

    const t = await call(app, "GET", `${P}/groups/${assigned.id}/activity`, { cookie: users.member.cookie });
    const sent = t.body.data.filter((x: { type: string }) => x.type === "alert_sent");
    expect(sent.map((x: { channel: string }) => x.channel).sort()).toEqual(["discord channel", "slack channel", "webhook channel"]);
    expect(sent[0]).toMatchObject({ trigger: "frequency", rule: "Busy", actor: null });
  });
});
