import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEALTH_ALERT_QUEUE, type HealthAlertJob } from "../../jobs/health-alerts.js";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";
import { FakeDiscord } from "../support/fake-discord.js";
import { server } from "../support/health.js";
import { sleep, waitFor } from "../support/wait.js";

/**
 * The health alerts' scheduled path with the job workers running (pg-boss on the test database):
 * the minute's tick makes one job per project with an enabled health rule, and that job evaluates
 * the project at the real time and sends through its channels. The schedule's own tick comes once a
 * minute; the test sends ticks as the schedule does, so it need not wait for one.
 */
let app: TestApp;
let discord: FakeDiscord;
let owner: { id: string; email: string; cookie: string };

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

const team = (method: string, path: string, body?: unknown) => call(app, method, path, { cookie: owner.cookie, body });
const tick = () => app.services.boss!.send(HEALTH_ALERT_QUEUE, {} satisfies HealthAlertJob);

async function outOfMemoryProject(ruleEnabled: boolean) {
  const { projectId, apiKey } = await makeProject(app.sql, owner.id, [], `Health jobs ${randomUUID().slice(0, 8)}`);
  const url = discord.webhookUrl();
  const ch = await team("POST", `/api/team/projects/${projectId}/channels`, { name: "Discord", kind: "discord", url });
  expect(ch.status, JSON.stringify(ch.body)).toBe(201);
  const rule = await team("POST", `/api/team/projects/${projectId}/rules`, {
    name: "OOM",
    trigger: "out_of_memory",
    window_minutes: 60,
    channel_ids: [ch.body.channel.id],
    enabled: ruleEnabled,
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  // a server that started 20 minutes ago and closed out of memory 2 minutes ago
  const now = Date.now();
  const r = await call(app, "POST", "/api/health", {
    headers: { "x-api-key": apiKey },
    body: { server: server("oom-1", "77", now - 20 * 60_000, { at: now - 2 * 60_000, reason: "OutOfMemory" }), sessions: [], samples: [] },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { projectId, messages: () => discord.for(url) };
}

describe("health alerts on the job workers", () => {
  it("a tick evaluates each project with an enabled health rule and sends once, however many ticks come in the minute", async () => {
    const on = await outOfMemoryProject(true);
    const off = await outOfMemoryProject(false);
    await tick();
    const [msg] = await waitFor(() => on.messages().length > 0 && on.messages(), 15_000);
    expect(msg.body.embeds[0].title.replace(/\\(.)/g, "$1")).toContain("Out-of-memory closes alert");
    // more ticks (another instance's, the schedule's own): the alert is open, nothing more is sent
    await tick();
    await tick();
    const [{ n }] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from pgboss.job where name = ${HEALTH_ALERT_QUEUE} and data->>'project_id' = ${on.projectId}`;
    expect(n).toBeGreaterThanOrEqual(1);
    // every job sent so far has run (pg-boss keeps finished jobs in its table for a while)
    const deadline = Date.now() + 15_000;
    for (;;) {
      const [{ pending }] = await app.sql<{ pending: number }[]>`
        select count(*)::int as pending from pgboss.job where name = ${HEALTH_ALERT_QUEUE} and state in ('created', 'retry', 'active')`;
      if (pending === 0) break;
      expect(Date.now()).toBeLessThan(deadline);
      await sleep(100);
    }
    expect(on.messages()).toHaveLength(1);
    const [state] = await app.sql<{ subject: string; recovered_at: Date | null }[]>`
      select subject, recovered_at from health_alert_state where project_id = ${on.projectId}`;
    expect(state).toMatchObject({ subject: "version:77", recovered_at: null });
    // a disabled rule's project gets no job and no message
    expect(off.messages()).toHaveLength(0);
    const [{ n: offJobs }] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from pgboss.job where name = ${HEALTH_ALERT_QUEUE} and data->>'project_id' = ${off.projectId}`;
    expect(offJobs).toBe(0);
  });
});
