import { describe, expect, it } from "vitest";
import {
  economyDiscordPayload,
  economySlackPayload,
  economyWebhookPayload,
  groupDigits,
  playerText,
  type EconomyAlert,
} from "../../app/alerts/economy-payloads.server.js";
import { embedProblem } from "../support/fake-discord.js";
import { lower } from "../../app/alerts/economy.server.js";

const base = (over: Partial<EconomyAlert> = {}): EconomyAlert => ({
  kind: "economy_anomaly",
  project: { id: "p", name: "Obby Tycoon" },
  rule: { id: "r", name: "Dupes" },
  subject: "rise:12",
  url: "https://monitor.example.com/projects/p/economy/players/1",
  at: new Date("2026-11-29T10:00:00.000Z"),
  event: {
    type: "anomaly",
    player: { user_id: "1", name: "Builder 1", username: "builder1" },
    currency: { key: "gems", name: "Gems" },
    from: "40",
    to: "5000000",
    increase: "4999960",
    factor: 125000,
    from_observed_at: null,
    observed_at: new Date("2026-11-29T10:00:00.000Z"),
    source: "push",
    threshold: { factor: 10, min_amount: "100000", source: "default" },
  },
  ...over,
});

describe("economy alert payloads", () => {
  it("groups digits of exact decimal strings without rounding them", () => {
    expect(groupDigits("5000000")).toBe("5,000,000");
    expect(groupDigits("-1234567.125")).toBe("-1,234,567.125");
    expect(groupDigits("123456789012345678901234567890.5")).toBe("123,456,789,012,345,678,901,234,567,890.5");
    expect(groupDigits("12")).toBe("12");
  });

  it("picks the lower of two amounts exactly, past what a double tells apart", () => {
    expect(lower("100000.0000000000000001", "100000")).toBe("100000");
    expect(lower("99999999999999999999", "100000000000000000000")).toBe("99999999999999999999");
    expect(lower("2.5", "10")).toBe("2.5");
  });

  it("names a player by display name, username and user id, or by id alone", () => {
    expect(playerText({ user_id: "1", name: "Builder 1", username: "builder1" })).toBe("Builder 1 (@builder1, user id 1)");
    expect(playerText({ user_id: "2", name: null, username: "ghost" })).toBe("@ghost (user id 2)");
    expect(playerText({ user_id: "3", name: null, username: null })).toBe("user 3");
  });

  it("stays within Discord's limits and pings nobody, whatever the player calls themselves", () => {
    const name = `@everyone [click](https://evil.example) ${"Ω".repeat(300)}`;
    const alert = base({
      project: { id: "p", name: "P".repeat(300) },
      rule: { id: "r", name: "R".repeat(100) },
      event: { ...(base().event as Extract<EconomyAlert["event"], { type: "anomaly" }>), player: { user_id: "1", name, username: "u".repeat(256) } },
    });
    const body = economyDiscordPayload(alert);
    expect(embedProblem(body)).toBeNull();
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(JSON.stringify(body)).not.toContain("[click](https");
    const summary = base({ event: { type: "summary", count: 500, lines: Array.from({ length: 21 }, () => `• ${name}`) } });
    expect(embedProblem(economyDiscordPayload(summary))).toBeNull();
  });

  it("Slack text cannot form links or mentions; the webhook keeps amounts as decimal strings", () => {
    const alert = base({ event: { ...(base().event as Extract<EconomyAlert["event"], { type: "anomaly" }>), player: { user_id: "1", name: "<!channel> <https://evil|x>", username: null } } });
    const slack = economySlackPayload(alert);
    expect(slack.text).not.toContain("<!channel>");
    expect(slack.text).toContain("&lt;!channel&gt;");
    const hook = economyWebhookPayload(alert);
    expect(hook.economy).toMatchObject({ from: "40", to: "5000000", observed_at: "2026-11-29T10:00:00.000Z", from_observed_at: null });
  });

  it("a supply alert says the day's figures and links to the currency's overview", () => {
    const alert = base({
      kind: "supply_growth",
      subject: "supply:gems:2026-11-29",
      url: "https://monitor.example.com/projects/p/economy?currency=gems",
      event: { type: "supply_growth", currency: { key: "gems", name: "Gems" }, day: "2026-11-29", growth_pct: 312.5, previous: "1000", change: "3200", opening: "75", supply: "4200", threshold_pct: 50 },
    });
    const d = economyDiscordPayload(alert).embeds[0];
    expect(d.title.replace(/\\(.)/g, "$1")).toBe("Money supply growth in Obby Tycoon: Gems supply +312.5% on 2026-11-29");
    expect(d.fields.find((f) => f.name === "Supply")?.value.replace(/\\(.)/g, "$1")).toBe("1,000 → 4,200");
    expect(d.url).toBe("https://monitor.example.com/projects/p/economy?currency=gems");
  });
});
