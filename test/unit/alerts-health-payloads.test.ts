import { describe, expect, it } from "vitest";
import { duration, healthDiscordPayload, healthLine, healthSlackPayload, healthWebhookPayload, type HealthAlert } from "../../app/alerts/health-payloads.server.js";
import { buildRequest } from "../../app/alerts/payloads.server.js";
import { embedProblem } from "../support/fake-discord.js";

const fired: HealthAlert = {
  kind: "server_memory",
  status: "fired",
  project: { id: "p", name: "Obby Tycoon" },
  rule: { id: "r", name: "Leak" },
  subject: "server:job-1",
  health: { trigger: "server_memory", window_minutes: 10, version: "42", job_id: "job-1", value: 5731.2, threshold: 5500, lowest: 5512.4, highest: 5731.2 },
  fired: null,
  fired_at: new Date("2026-11-29T03:02:00.000Z"),
  recovered_at: null,
  url: "https://monitor.example.com/projects/p/servers",
  at: new Date("2026-11-29T03:02:00.000Z"),
};
const recovered: HealthAlert = {
  ...fired,
  status: "recovered",
  health: { ...fired.health, value: null, reason: "the server closed (OutOfMemory)" },
  fired: fired.health,
  recovered_at: new Date("2026-11-29T03:26:00.000Z"),
};

describe("health alert messages", () => {
  it("say what crossed which threshold where, and for how long it was bad", () => {
    expect(healthLine(fired)).toBe("server job-1 (version 42): memory 5,731.2 MB (threshold 5,500 MB for 10 min)");
    expect(healthLine(recovered)).toBe("server job-1 (version 42) is back after 24 min: the server closed (OutOfMemory)");
    expect(duration(125 * 60_000)).toBe("2 h 5 min");
    expect(duration(27 * 3_600_000)).toBe("1 d 3 h");
    expect(healthWebhookPayload(fired)).toMatchObject({ event: "health_alert_fired", version: "42", job_id: "job-1", recovered_at: null, bad_for_seconds: null });
    expect(healthWebhookPayload(recovered)).toMatchObject({ event: "health_alert_recovered", bad_for_seconds: 1440, fired: { value: 5731.2 } });
    const req = buildRequest("webhook", recovered, "secret", () => 1);
    expect(req.headers["x-alert-trigger"]).toBe("server_memory");
    expect(JSON.parse(req.body).event).toBe("health_alert_recovered");
  });

  it("stay within Discord's and Slack's limits with hostile names and never ping", () => {
    const long = "@everyone [click](https://evil.example) " + "x".repeat(5000);
    const a: HealthAlert = {
      ...recovered,
      project: { id: "p", name: long },
      rule: { id: "r", name: long },
      subject: `server:${long.slice(0, 100)}`,
      health: { ...recovered.health, job_id: long.slice(0, 100), version: long, reason: long },
      fired: { ...fired.health, version: long, servers: Array(10).fill(long.slice(0, 100)) },
    };
    const d = healthDiscordPayload(a);
    expect(embedProblem(d)).toBeNull();
    expect(d.allowed_mentions).toEqual({ parse: [] });
    // Markdown and mentions escaped: shown as typed, never a link or a ping
    expect(d.embeds[0].title).not.toMatch(/(^|[^\\])@everyone/);
    expect(d.embeds[0].title).toContain("\\[click\\]");
    const s = healthSlackPayload(a);
    expect([...s.text].length).toBeLessThanOrEqual(3000);
    for (const b of s.blocks as any[]) if (b.text) expect([...b.text.text].length).toBeLessThanOrEqual(3000);
    expect(s.text).not.toContain("<https://evil");
  });
});
