import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { LocalSmtp } from "../support/smtp-server.js";
import { waitFor } from "../support/wait.js";

/**
 * Email channels end to end: a real SMTP server (npm smtp-server) on 127.0.0.1 with a login, the
 * service configured with SMTP_URL and SMTP_FROM, channels and rules through the Team API, test
 * sends and an issue alert through the running jobs; what arrived is read back with mailparser.
 */
let smtp: LocalSmtp;
let app: TestApp;
let owner: { id: string; email: string; cookie: string };
const FROM = "alerts@monitor.example.com";

beforeAll(async () => {
  smtp = await new LocalSmtp().start();
  // one account sends many test emails here; the per-user limit has its own file (alert-test-limit.test.ts)
  app = await startTestApp({ JOBS_ENABLED: "true", SMTP_URL: smtp.url(), SMTP_FROM: `Roblox Monitor <${FROM}>`, ALERT_TEST_RATE_LIMIT: "1000" });
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
});

afterAll(async () => {
  await app?.close();
  await smtp?.close();
});

async function project() {
  return makeProject(app.sql, owner.id, [], `Email ${randomUUID().slice(0, 8)}`);
}

async function emailChannel(projectId: string, recipients: string[]) {
  const r = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie: owner.cookie, body: { name: "Email on-call", kind: "email", recipients } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.channel as { id: string; kind: string; url: string | null; recipients: string[] };
}

const sendTest = (channelId: string) => call(app, "POST", "/api/notifications/test", { cookie: owner.cookie, body: { channel_id: channelId } });
const deliveries = async (projectId: string) => (await call(app, "GET", `/api/team/projects/${projectId}/deliveries`, { cookie: owner.cookie })).body.data as any[];
const channelCount = async (projectId: string) => (await app.sql<{ n: number }[]>`select count(*)::int as n from alert_channels where project_id = ${projectId}`)[0].n;

describe("email channels through the Team API", () => {
  it("are created with their recipients (no URL); bad input is a 400 that writes nothing", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["oncall@example.com", " lead@example.com ", "ONCALL@example.com"]);
    expect(ch).toMatchObject({ kind: "email", url: null, recipients: ["oncall@example.com", "lead@example.com"], has_secret: false, enabled: true });

    const bad: [unknown, string][] = [
      [{ name: "x", kind: "email" }, "recipients"],
      [{ name: "x", kind: "email", recipients: [] }, "recipients"],
      [{ name: "x", kind: "email", recipients: ["not an address"] }, "recipients[0]"],
      [{ name: "x", kind: "email", recipients: Array.from({ length: 21 }, (_, i) => `a${i}@example.com`) }, "recipients"],
      [{ name: "x", kind: "email", recipients: ["a@example.com"], url: "https://example.com/hook" }, "url"],
      [{ name: "x", kind: "slack", url: "https://hooks.slack.com/services/T/B/C", recipients: ["a@example.com"] }, "recipients"],
      [{ name: "x", kind: "email", recipients: "a@example.com" }, "recipients"],
    ];
    for (const [body, path] of bad) {
      const r = await call(app, "POST", `/api/team/projects/${projectId}/channels`, { cookie: owner.cookie, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(JSON.stringify(r.body.details)).toContain(path);
    }
    expect(await channelCount(projectId)).toBe(1);

    // recipients change by PATCH; a URL does not apply to email, recipients not to other kinds
    const p = await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${ch.id}`, { cookie: owner.cookie, body: { recipients: ["team@example.com"] } });
    expect(p.status).toBe(200);
    expect(p.body.channel.recipients).toEqual(["team@example.com"]);
    const u = await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${ch.id}`, { cookie: owner.cookie, body: { url: "https://example.com/x" } });
    expect(u.status).toBe(400);
    const discord = await call(app, "POST", `/api/team/projects/${projectId}/channels`, {
      cookie: owner.cookie,
      body: { name: "d", kind: "slack", url: "https://hooks.slack.com/services/T/B/C" },
    });
    const r = await call(app, "PATCH", `/api/team/projects/${projectId}/channels/${discord.body.channel.id}`, { cookie: owner.cookie, body: { recipients: ["a@example.com"] } });
    expect(r.status).toBe(400);
    const [row] = await app.sql<{ recipients: string[] }[]>`select recipients from alert_channels where id = ${discord.body.channel.id}`;
    expect(row.recipients).toEqual([]);
  });

  it("a test send arrives as a multipart email from SMTP_FROM and is logged with the SMTP reply", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["oncall@example.com", "lead@example.com"]);
    const before = smtp.received.length;
    const r = await sendTest(ch.id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const got = smtp.received.slice(before);
    expect(got).toHaveLength(1);
    expect(got[0].envelope.to.sort()).toEqual(["lead@example.com", "oncall@example.com"]);
    expect(got[0].envelope.from).toBe(FROM);
    expect(got[0].mail.from?.text).toContain(FROM);
    expect(got[0].mail.subject).toContain("Test alert in Email");
    expect(got[0].mail.text).toContain("the channel works");
    expect(got[0].mail.html).toContain("the channel works");
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ trigger: "test", trigger_name: "Test alert", status: "sent", response_code: 250, attempts: 1, error: null, channel_name: "Email on-call" });
  });

  it("an issue alert goes out by email with the game's text escaped in the HTML part", async () => {
    const { projectId, apiKey } = await project();
    const ch = await emailChannel(projectId, ["issues@example.com"]);
    const rule = await call(app, "POST", `/api/team/projects/${projectId}/rules`, { cookie: owner.cookie, body: { name: "New ones", trigger: "new_group", channel_ids: [ch.id] } });
    expect(rule.status).toBe(201);
    expect(rule.body.rule.state).toBe("active");
    const message = `Workspace.Shop:42: <img src=x onerror=alert(1)> ${randomUUID()}`;
    await ingest(app, apiKey, { errors: [{ message, environment: "production", stack_trace: "Workspace.Shop, line 42" }] });
    const [mail] = await waitFor(() => smtp.for("issues@example.com").length > 0 && smtp.for("issues@example.com"), 10_000);
    expect(mail.mail.subject).toContain("New issue in Email");
    // (the title is the message in its grouping form: numbers and ids stand as placeholders)
    expect(mail.mail.text).toContain("Workspace.Shop:42: <img src=x onerror=alert(");
    expect(mail.mail.text).toContain("Workspace.Shop, line 42");
    expect(mail.mail.html).not.toContain("<img");
    expect(mail.mail.html).toContain("&lt;img src=x onerror=alert(");
    // the delivery is logged right after the send
    let log = await deliveries(projectId);
    for (let i = 0; log.length === 0 && i < 200; i++) log = await new Promise((r) => setTimeout(r, 25)).then(() => deliveries(projectId));
    expect(log[0]).toMatchObject({ trigger: "new_group", trigger_name: "New issue", status: "sent", response_code: 250, rule_name: "New ones" });
  });
});

describe("SMTP failures in the delivery log", () => {
  it("a rejected recipient (550) fails at once; with another recipient accepted the mail is sent and the refused one named", async () => {
    const { projectId } = await project();
    const only = await emailChannel(projectId, ["reject-me@example.com"]);
    const before = smtp.transactions;
    const r = await sendTest(only.id);
    expect(r.status).toBe(502);
    expect(r.body.error).toBe("delivery_failed");
    expect(smtp.transactions).toBe(before);
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "failed", response_code: 550, attempts: 1 });
    expect(d.error).toContain("User unknown");

    const mixed = await emailChannel(projectId, ["fine@example.com", "reject-too@example.com"]);
    expect((await sendTest(mixed.id)).status).toBe(200);
    expect(smtp.for("fine@example.com")).toHaveLength(1);
    const [m] = await deliveries(projectId);
    expect(m).toMatchObject({ status: "sent", response_code: 250, attempts: 1, error: "not accepted for reject-too@example.com" });
  });

  it("a temporary failure (451) is retried and then delivered", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["retry@example.com"]);
    smtp.busy(1);
    const r = await sendTest(ch.id);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(smtp.for("retry@example.com")).toHaveLength(1);
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "sent", response_code: 250, attempts: 2 });
  });

  it("a temporary failure on every attempt ends failed after 3 attempts with the 4xx reply", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["busy@example.com"]);
    smtp.busy(3);
    expect((await sendTest(ch.id)).status).toBe(502);
    expect(smtp.for("busy@example.com")).toHaveLength(0);
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "failed", response_code: 451, attempts: 3 });
    expect(d.error).toContain("Try again later");
  });

  it("a refused login (535) is permanent: one attempt, and the log never holds the SMTP password", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["auth@example.com"]);
    smtp.refuseLogins = true;
    try {
      const r = await sendTest(ch.id);
      expect(r.status).toBe(502);
      expect(r.body.message).toContain("SMTP login refused");
    } finally {
      smtp.refuseLogins = false;
    }
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "failed", response_code: 535, attempts: 1 });
    expect(JSON.stringify(d)).not.toContain(smtp.pass);
  });

  it("a server that is down: each attempt fails to connect, and the log says so", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["down@example.com"]);
    const port = smtp.port;
    await smtp.close();
    try {
      const r = await sendTest(ch.id);
      expect(r.status).toBe(502);
    } finally {
      await smtp.start(port);
    }
    const [d] = await deliveries(projectId);
    expect(d).toMatchObject({ status: "failed", response_code: null, attempts: 3 });
    expect(d.error).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/);
    // up again: the next send goes out
    expect((await sendTest(ch.id)).status).toBe(200);
  });
});

describe("a server without SMTP_URL", () => {
  it("refuses new email channels naming the setting, and logs a send to an existing one as failed", async () => {
    const { projectId } = await project();
    const ch = await emailChannel(projectId, ["nosmtp@example.com"]);
    const bare = await startTestApp({ ALERT_TEST_RATE_LIMIT: "1000" }, app.databaseUrl);
    try {
      const cookie = await login(bare, owner.email);
      const r = await call(bare, "POST", `/api/team/projects/${projectId}/channels`, { cookie, body: { name: "e", kind: "email", recipients: ["a@example.com"] } });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain("SMTP_URL");
      expect(await channelCount(projectId)).toBe(1);
      const t = await call(bare, "POST", "/api/notifications/test", { cookie, body: { channel_id: ch.id } });
      expect(t.status).toBe(502);
      expect(t.body.message).toContain("SMTP_URL");
    } finally {
      await bare.close();
    }
  });
});
