import { describe, expect, it } from "vitest";
import { buildEmail, escapeHtml } from "../../app/alerts/email-payloads.server.js";
import type { Alert } from "../../app/alerts/payloads.server.js";
import type { EconomyAlert } from "../../app/alerts/economy-payloads.server.js";
import type { HealthAlert } from "../../app/alerts/health-payloads.server.js";

/** The email of every alert kind: a one-line subject, a text body and an HTML body, game text escaped. */

const HOSTILE = `<script>alert(1)</script> <a href="https://evil.example">click</a> & "quotes"`;
const at = new Date("2026-11-29T10:00:00.000Z");

const issue = (kind: Alert["kind"], over: Partial<Alert["group"]> = {}): Alert => ({
  kind,
  project: { id: "p", name: "Obby Tycoon" },
  rule: { id: "r", name: "Pager", threshold_count: 50, window_minutes: 5 },
  group: {
    id: "g",
    fingerprint: "fp-1",
    message: "Workspace.Shop:42: attempt to index nil with 'Price'",
    level: "error",
    environment: "production",
    culprit: "Workspace.Shop",
    count: 7,
    first_seen: at,
    last_seen: at,
    stack_trace: "Workspace.Shop, line 42\nWorkspace.Main, line 3",
    window_count: 64,
    ...over,
  },
  url: "https://monitor.example.com/projects/p/issues/g",
  at,
});

const economy: EconomyAlert = {
  kind: "economy_anomaly",
  project: { id: "p", name: "Obby Tycoon" },
  rule: { id: "r", name: "Dupes" },
  subject: "rise:12",
  url: null,
  at,
  event: {
    type: "anomaly",
    player: { user_id: "1", name: HOSTILE, username: "builder1" },
    currency: { key: "gems", name: "Gems" },
    from: "40",
    to: "5000000",
    increase: "4999960",
    factor: 125000,
    from_observed_at: null,
    observed_at: at,
    source: "push",
    threshold: { factor: 10, min_amount: "100000", source: "default" },
  },
};
const supply: EconomyAlert = {
  ...economy,
  kind: "supply_growth",
  subject: "supply:gems:2026-11-28",
  event: { type: "supply_growth", currency: { key: "gems", name: "Gems" }, day: "2026-11-28", growth_pct: 31.5, previous: "1000000", change: "320000", opening: "5000", supply: "1320000", threshold_pct: 25 },
};

const health: HealthAlert = {
  kind: "server_memory",
  status: "fired",
  project: { id: "p", name: "Obby Tycoon" },
  rule: { id: "r", name: "Leak" },
  subject: "server:job-1",
  health: { trigger: "server_memory", window_minutes: 10, version: "42", job_id: "job-1", value: 5731.2, threshold: 5500, lowest: 5512.4, highest: 5731.2 },
  fired: null,
  fired_at: at,
  recovered_at: null,
  url: "https://monitor.example.com/projects/p/servers",
  at,
};
const recovered: HealthAlert = { ...health, status: "recovered", health: { ...health.health, value: null, reason: "the server closed" }, fired: health.health, recovered_at: new Date(at.getTime() + 24 * 60_000) };

describe("alert emails", () => {
  it("name what happened in the subject and carry the same facts in text and HTML, for every kind", () => {
    const row = (name: string, value: string) => `<th style="text-align:left;padding:2px 12px 2px 0;vertical-align:top">${name}</th><td style="padding:2px 0">${value}</td>`;
    const cases: [Alert | EconomyAlert | HealthAlert, string, string, string][] = [
      [issue("new_group"), "New issue in Obby Tycoon: Workspace.Shop:42", "First occurrence of a new issue.", "First occurrence of a new issue."],
      [issue("regression"), "Regression in Obby Tycoon", "A resolved issue occurred again.", row("Environment", "production")],
      [issue("frequency"), "Spike in Obby Tycoon", "64 occurrences in the last 5 min (threshold 50)", "64 occurrences in the last 5 min (threshold 50)"],
      [issue("test"), "Test alert in Obby Tycoon", "the channel works", "the channel works"],
      [economy, "Economy anomaly in Obby Tycoon", "Balance: 40 → 5,000,000", row("Balance", "40 → 5,000,000")],
      [supply, "Money supply growth in Obby Tycoon: Gems supply +31.5% on 2026-11-28", "Growth: +31.5% (rule: more than 25%)", row("Growth", "+31.5% (rule: more than 25%)")],
      [health, "Server memory alert in Obby Tycoon", "Threshold: 5,500", row("Threshold", "5,500")],
      [recovered, "Server memory recovered in Obby Tycoon", "Alerting for: 24 min", row("Alerting for", "24 min")],
    ];
    for (const [alert, subject, text, html] of cases) {
      const m = buildEmail(alert);
      expect(m.subject).toContain(subject);
      expect(m.subject).not.toMatch(/[\r\n]/);
      expect(m.text).toContain(text);
      expect(m.html).toContain(html);
      expect(m.html.startsWith("<!doctype html>")).toBe(true);
    }
    const withLink = buildEmail(issue("new_group"));
    expect(withLink.text).toContain("Open in Roblox Monitor: https://monitor.example.com/projects/p/issues/g");
    expect(withLink.html).toContain('<a href="https://monitor.example.com/projects/p/issues/g">Open in Roblox Monitor</a>');
    expect(withLink.text).toContain("Stack trace:\nWorkspace.Shop, line 42");
    expect(buildEmail(economy).text).toContain("Set PUBLIC_URL for a link to the dashboard.");
  });

  it("escape game text in HTML (no markup, no links) and keep the subject one line", () => {
    for (const m of [
      buildEmail(issue("new_group", { message: `Injected\r\nBcc: everyone@example.com\n${HOSTILE}`, title: undefined, stack_trace: HOSTILE, culprit: HOSTILE })),
      buildEmail(economy),
    ]) {
      expect(m.html).not.toContain("<script>");
      expect(m.html).not.toContain('href="https://evil.example"');
      expect(m.html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(m.html).toContain("&amp; &quot;quotes&quot;");
      // the text body shows it as typed
      expect(m.text).toContain(HOSTILE);
      expect(m.subject).not.toMatch(/[\r\n]/);
    }
    const injected = buildEmail(issue("new_group", { message: "Injected\r\nBcc: everyone@example.com" }));
    expect(injected.subject).toBe("New issue in Obby Tycoon: Injected");
  });

  it("cut a huge message and stack trace to a bounded size", () => {
    const m = buildEmail(issue("new_group", { message: "x".repeat(100_000), stack_trace: "y".repeat(100_000) }));
    expect([...m.subject].length).toBeLessThanOrEqual(200);
    expect(m.text.length).toBeLessThan(14_000);
    expect(m.html.length).toBeLessThan(16_000);
  });
});
