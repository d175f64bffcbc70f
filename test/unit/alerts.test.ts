import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { buildRequest, cut, discordPayload, slackPayload, type Alert } from "../../app/alerts/payloads.server.js";
import { matchesFilters, triggerHolds } from "../../app/alerts/evaluate.server.js";
import { isPrivateAddress, retryAfterMs } from "../../app/alerts/send.server.js";
import { maskUrl, seal, unseal } from "../../app/alerts/seal.server.js";
import { embedProblem } from "../support/fake-discord.js";

const t = new Date("2026-11-22T10:00:00.000Z");
const alert = (over: Partial<Alert["group"]> = {}, kind: Alert["kind"] = "new_group"): Alert => ({
  kind,
  project: { id: "p1", name: "Obby" },
  rule: { id: "r1", name: "New errors", threshold_count: null, window_minutes: null },
  group: {
    id: "g1",
    fingerprint: "abc123",
    message: "attempt to index nil with 'Price'",
    level: "error",
    environment: "production",
    culprit: "Workspace.Shop:42",
    count: 3,
    first_seen: t,
    last_seen: t,
    stack_trace: "Workspace.Shop, line 42",
    ...over,
  },
  url: null,
  at: t,
});

const embedTotal = (e: any) =>
  [e.title, e.description, e.footer?.text, ...e.fields.flatMap((f: any) => [f.name, f.value])].reduce((n, s) => n + [...(s ?? "")].length, 0);

describe("Discord payload", () => {
  it("stays within every embed limit for huge messages and stack traces, keeping both", () => {
    const p = discordPayload(alert({ message: "💥".repeat(9000), stack_trace: "frame\n".repeat(20000), culprit: "c".repeat(5000), environment: "e".repeat(256) }));
    const e = p.embeds[0];
    expect(embedProblem(p)).toBeNull();
    expect([...e.title].length).toBeLessThanOrEqual(256);
    expect([...e.description].length).toBeLessThanOrEqual(4096);
    expect(embedTotal(e)).toBeLessThanOrEqual(6000);
    expect(e.description).toContain("💥");
    expect(e.description).toContain("```\nframe");
    expect(e.description.endsWith("```")).toBe(true);
  });

  it("never pings: allowed_mentions parse is empty; backtick fences in user text cannot break the code block", () => {
    const p = discordPayload(alert({ message: "@everyone ```oops", stack_trace: "```" }));
    expect(p.allowed_mentions).toEqual({ parse: [] });
    expect(p.embeds[0].description.match(/```/g)).toHaveLength(2);
  });

  it("escapes Markdown in user text: masked links, mentions and formatting render as typed", () => {
    const hostile = "@everyone <@&123> [click me](https://evil.example/x) **bold** # head";
    const a = alert({ message: hostile, culprit: "[c](https://evil.example/c)", environment: "<@456>" });
    a.project.name = "[Obby](https://evil.example/p)";
    a.rule = { id: "r", name: "@here [r](https://evil.example/r)", threshold_count: null, window_minutes: null };
    const e = discordPayload(a).embeds[0];
    const texts = [e.title, e.description, ...e.fields.map((f) => f.value)];
    for (const text of texts) {
      // no masked link, mention or bold marker survives unescaped
      expect(text).not.toMatch(/(^|[^\\])\[[^\]]*\]\(/);
      expect(text).not.toMatch(/(^|[^\\])<@/);
      expect(text).not.toMatch(/(^|[^\\])@(everyone|here)/);
      expect(text).not.toMatch(/(^|[^\\])\*\*/);
    }
    expect(e.description).toContain("\\@everyone \\<\\@&123\\> \\[click me\\]\\(https\\://evil\\.example/x\\)");
    // Discord drops the backslash of an escaped punctuation character: what it shows is the original
    const rendered = (s: string) => s.replace(/\\([^0-9A-Za-z\s])/g, "$1");
    expect(rendered(e.description)).toContain(hostile);
    expect(rendered(e.fields.find((f) => f.name === "Culprit")!.value)).toBe("[c](https://evil.example/c)");
    // the stack trace sits in a code block, where Markdown is not rendered: it stays as sent
    expect(discordPayload(alert({ stack_trace: "[x](https://evil.example)" })).embeds[0].description).toContain("```\n[x](https://evil.example)\n```");
  });

  it("names the trigger", () => {
    expect(discordPayload(alert({}, "regression")).embeds[0].title).toMatch(/^Regression in Obby/);
    const f = alert({ window_count: 512 }, "frequency");
    f.rule = { id: "r", name: "spike", threshold_count: 500, window_minutes: 10 };
    expect(discordPayload(f).embeds[0].description).toContain("512 occurrences in the last 10 min (threshold 500)");
  });
});

describe("Slack payload", () => {
  it("has text and blocks, escapes mrkdwn, and keeps blocks within their limits", () => {
    const p = slackPayload(alert({ message: "<@U123> & <!channel> " + "x".repeat(5000), stack_trace: "y".repeat(10000) }));
    expect(typeof p.text).toBe("string");
    expect(p.text).not.toContain("<@U123>");
    expect(p.text).toContain("&lt;@U123&gt; &amp; &lt;!channel&gt;");
    const blocks = p.blocks as any[];
    expect(blocks[0].type).toBe("header");
    expect(blocks[0].text.text.length).toBeLessThanOrEqual(150);
    for (const b of blocks.filter((b) => b.type === "section")) expect(b.text.text.length).toBeLessThanOrEqual(3000);
  });
});

describe("webhook signature", () => {
  it("X-Signature is sha256=HMAC(secret, `${X-Timestamp}.${body}`)", () => {
    const { body, headers } = buildRequest("webhook", alert(), "s3cret-s3cret-s3cret", () => 1_790_000_000);
    expect(headers["x-timestamp"]).toBe("1790000000");
    expect(headers["x-signature"]).toBe(`sha256=${createHmac("sha256", "s3cret-s3cret-s3cret").update(`1790000000.${body}`).digest("hex")}`);
    expect(JSON.parse(body)).toMatchObject({ type: "alert", trigger: "new_group", group: { fingerprint: "abc123" } });
  });

  it("cut marks truncation and never exceeds the limit", () => {
    expect(cut("abcdef", 4)).toBe("abc…");
    expect(cut("abc", 4)).toBe("abc");
  });
});

describe("rule evaluation", () => {
  const rule = { levels: ["error"], environments: ["production"], message_contains: "DataStore", server_only: false, min_players: 0 };
  const g = { level: "error", environment: "production", message: "datastore request failed", status: "open", client_only: false, user_count: 0 };
  it("filters by level, environment and message (case-insensitive); ignored never matches", () => {
    expect(matchesFilters(rule, g)).toBe(true);
    expect(matchesFilters(rule, { ...g, level: "warn" })).toBe(false);
    expect(matchesFilters(rule, { ...g, environment: "studio" })).toBe(false);
    expect(matchesFilters(rule, { ...g, message: "other" })).toBe(false);
    expect(matchesFilters(rule, { ...g, status: "ignored" })).toBe(false);
    expect(matchesFilters({ levels: [], environments: [], message_contains: null, server_only: false, min_players: 0 }, { ...g, level: "info" })).toBe(true);
  });

  it("server_only leaves out client-only issues; min_players waits for that many distinct players", () => {
    expect(matchesFilters(rule, { ...g, client_only: true })).toBe(true);
    expect(matchesFilters({ ...rule, server_only: true }, { ...g, client_only: true })).toBe(false);
    expect(matchesFilters({ ...rule, server_only: true }, g)).toBe(true);
    expect(matchesFilters({ ...rule, min_players: 3 }, { ...g, user_count: 2 })).toBe(false);
    expect(matchesFilters({ ...rule, min_players: 3 }, { ...g, user_count: 3 })).toBe(true);
  });

  it("triggers: new groups after the rule, open regressions after the rule, counts at the threshold", () => {
    const now = t.getTime();
    const r = (trigger: "new_group" | "regression" | "frequency") => ({ trigger, created_at: new Date(now - 60_000), threshold_count: 10 });
    const grp = { id: "g", created_at: new Date(now - 1000), regressed_at: null, status: "open" };
    expect(triggerHolds(r("new_group"), grp, undefined, now)).toBe(true);
    expect(triggerHolds(r("new_group"), { ...grp, created_at: new Date(now - 120_000) }, undefined, now)).toBe(false);
    expect(triggerHolds(r("regression"), grp, undefined, now)).toBe(false);
    expect(triggerHolds(r("regression"), { ...grp, regressed_at: new Date(now - 500) }, undefined, now)).toBe(true);
    expect(triggerHolds(r("regression"), { ...grp, regressed_at: new Date(now - 500), status: "resolved" }, undefined, now)).toBe(false);
    expect(triggerHolds(r("frequency"), grp, 9, now)).toBe(false);
    expect(triggerHolds(r("frequency"), grp, 10, now)).toBe(true);
  });
});

describe("sender helpers", () => {
  it("refuses private, loopback, link-local, mapped and unique-local addresses", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.20.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ["162.159.135.232", "8.8.8.8", "2606:4700::6810:84e5"]) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("reads Discord's float retry_after first, then Retry-After seconds", () => {
    expect(retryAfterMs(JSON.stringify({ message: "x", retry_after: 1.234, global: false }), {})).toBe(1234);
    expect(retryAfterMs("rate_limited", { "retry-after": "3" })).toBe(3000);
    expect(retryAfterMs("", {})).toBeNull();
  });

  it("seals per project and masks the token", () => {
    const s = seal("x".repeat(32), "p1", "https://discord.com/api/webhooks/123/secret-token");
    expect(unseal("x".repeat(32), "p1", s)).toBe("https://discord.com/api/webhooks/123/secret-token");
    expect(() => unseal("x".repeat(32), "p2", s)).toThrow();
    expect(maskUrl("https://discord.com/api/webhooks/123/secret-token")).toBe("https://discord.com/api/webhooks/123/••••••");
    expect(maskUrl("https://hooks.slack.com/services/T0/B0/XYZ")).not.toContain("XYZ");
  });
});
