import { cut, DISCORD, esc, escapeDiscord, factsDiscordBody, factsSlackBody, type EmailParts, type Fact } from "./payloads.server";
import { TRIGGER_NAME } from "./triggers";

/**
 * What each channel kind receives for an economy alert: a dupe-like rise of one player's currency,
 * a gain the player's recorded flows do not explain, a currency's supply growing too fast in a day,
 * or a summary standing for a burst of those. Pure builders, like payloads.server.ts, and within
 * the same limits (Discord's 6,000-character embed, Slack's 3,000-character sections).
 */
export type EconomyPlayer = { user_id: string; name: string | null; username: string | null };
export type EconomyCurrency = { key: string; name: string };

export type EconomyEvent =
  | {
      type: "anomaly";
      player: EconomyPlayer;
      currency: EconomyCurrency;
      from: string;
      to: string;
      increase: string;
      /** to / from, null from zero or debt */
      factor: number | null;
      from_observed_at: Date | null;
      observed_at: Date;
      source: string;
      threshold: { factor: number; min_amount: string; source: string };
    }
  | {
      type: "unexplained";
      player: EconomyPlayer;
      currency: EconomyCurrency;
      from: string;
      to: string;
      explained: string;
      unexplained: string;
      from_observed_at: Date;
      observed_at: Date;
    }
  | {
      type: "supply_growth";
      currency: EconomyCurrency;
      day: string;
      growth_pct: number;
      previous: string;
      change: string;
      opening: string;
      supply: string;
      threshold_pct: number;
    }
  | { type: "summary"; count: number; lines: string[] };

export type EconomyAlert = {
  kind: "economy_anomaly" | "supply_growth";
  project: { id: string; name: string };
  rule: { id: string; name: string };
  /** the claim's subject (`rise:<id>`, `unexplained:<id>`, `supply:<currency>:<day>`), or `summary:<n>` */
  subject: string;
  event: EconomyEvent;
  /** the player's economy page (the overview for supply), when PUBLIC_URL is set */
  url: string | null;
  at: Date;
};

/** 5000000.5 -> "5,000,000.5", exactly: the amount stays the decimal string it is. */
export function groupDigits(amount: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(amount);
  if (!m) return amount;
  return `${m[1]}${m[2].replace(/\B(?=(\d{3})+(?!\d))/g, ",")}${m[3] ?? ""}`;
}

const factorText = (f: number | null) => (f === null ? "from zero or less" : `×${f.toLocaleString("en-US", { maximumFractionDigits: 2 })}`);
const pct = (p: number) => `${p > 0 ? "+" : ""}${p.toLocaleString("en-US", { maximumFractionDigits: 2 })}%`;

/** "Name (@username, user id 123)"; a player without names is "user 123". */
export function playerText(p: EconomyPlayer): string {
  const alias = p.username && p.username !== p.name ? `@${p.username}, ` : "";
  return p.name ? `${p.name} (${alias}user id ${p.user_id})` : p.username ? `@${p.username} (user id ${p.user_id})` : `user ${p.user_id}`;
}

/** One line that says what happened: the headline's subject, and a line of a burst's summary. */
export function eventLine(e: EconomyEvent): string {
  switch (e.type) {
    case "anomaly":
      return `${playerText(e.player)}: ${e.currency.name} ${groupDigits(e.from)} → ${groupDigits(e.to)} (${factorText(e.factor)})`;
    case "unexplained":
      return `${playerText(e.player)}: ${groupDigits(e.unexplained)} ${e.currency.name} unexplained (${groupDigits(e.from)} → ${groupDigits(e.to)})`;
    case "supply_growth":
      return `${e.currency.name} supply ${pct(e.growth_pct)} on ${e.day}`;
    case "summary":
      return `${e.count} more economy alerts matched this rule`;
  }
}

/** The facts of the event as name/value pairs (Discord fields, Slack's details). */
function facts(a: EconomyAlert): Fact[] {
  const e = a.event;
  const rule = { name: "Rule", value: a.rule.name, inline: true };
  switch (e.type) {
    case "anomaly":
      return [
        { name: "Player", value: playerText(e.player), inline: false },
        { name: "Currency", value: e.currency.name, inline: true },
        { name: "Balance", value: `${groupDigits(e.from)} → ${groupDigits(e.to)}`, inline: true },
        { name: "Jump", value: `+${groupDigits(e.increase)} (${factorText(e.factor)})`, inline: true },
        { name: "Threshold", value: `×${e.threshold.factor} and more than ${groupDigits(e.threshold.min_amount)} (${e.threshold.source})`, inline: true },
        { name: "Seen by", value: e.source, inline: true },
        rule,
      ];
    case "unexplained":
      return [
        { name: "Player", value: playerText(e.player), inline: false },
        { name: "Currency", value: e.currency.name, inline: true },
        { name: "Balance", value: `${groupDigits(e.from)} → ${groupDigits(e.to)}`, inline: true },
        { name: "Explained by flows", value: groupDigits(e.explained), inline: true },
        { name: "Unexplained", value: groupDigits(e.unexplained), inline: true },
        rule,
      ];
    case "supply_growth":
      return [
        { name: "Currency", value: e.currency.name, inline: true },
        { name: "Day (UTC)", value: e.day, inline: true },
        { name: "Growth", value: `${pct(e.growth_pct)} (rule: more than ${e.threshold_pct}%)`, inline: true },
        { name: "Supply", value: `${groupDigits(e.previous)} → ${groupDigits(e.supply)}`, inline: true },
        { name: "New players' opening balances", value: groupDigits(e.opening), inline: true },
        rule,
      ];
    case "summary":
      return [rule];
  }
}

function description(a: EconomyAlert): string {
  const e = a.event;
  switch (e.type) {
    case "anomaly":
      return `${e.currency.name} rose from ${groupDigits(e.from)} to ${groupDigits(e.to)} between two observations of ${playerText(e.player)}: a duplication exploit looks like this.`;
    case "unexplained":
      return `${playerText(e.player)} gained ${groupDigits(e.unexplained)} ${e.currency.name} that no recorded source explains (balance ${groupDigits(e.from)} → ${groupDigits(e.to)}, flows ${groupDigits(e.explained)}).`;
    case "supply_growth":
      return `The ${e.currency.name} supply grew ${pct(e.growth_pct)} on ${e.day} (UTC): ${groupDigits(e.previous)} at the start of the day, change ${groupDigits(e.change)}, of which ${groupDigits(e.opening)} are new players' opening balances and do not count as growth.`;
    case "summary":
      return e.lines.join("\n");
  }
}

const headline = (a: EconomyAlert) => `${TRIGGER_NAME[a.kind]} in ${a.project.name}: ${eventLine(a.event)}`;
const COLOR = { economy_anomaly: 0xd64545, supply_growth: 0xe0a030 } as const;

export function economyDiscordPayload(a: EconomyAlert) {
  const title = cut(`${TRIGGER_NAME[a.kind]} in ${escapeDiscord(a.project.name)}: ${escapeDiscord(eventLine(a.event))}`, DISCORD.title);
  return factsDiscordBody({ title, description: description(a), facts: facts(a), footer: a.subject, color: COLOR[a.kind], at: a.at, url: a.url });
}

export function economySlackPayload(a: EconomyAlert) {
  const context = `${esc(a.subject)}${a.url ? ` • <${a.url}|open>` : ""}`;
  return factsSlackBody({ headline: headline(a), description: description(a), facts: facts(a), context, emoji: false });
}

/** The webhook body: the event's facts as data (amounts as decimal strings, times in ISO 8601). */
export function economyWebhookPayload(a: EconomyAlert) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  const e = a.event;
  const economy =
    e.type === "anomaly"
      ? { ...e, from_observed_at: iso(e.from_observed_at), observed_at: iso(e.observed_at) }
      : e.type === "unexplained"
        ? { ...e, from_observed_at: iso(e.from_observed_at), observed_at: iso(e.observed_at) }
        : e;
  return {
    type: "alert",
    trigger: a.kind,
    project: a.project,
    rule: a.rule,
    subject: a.subject,
    economy,
    summary: eventLine(e),
    url: a.url,
    sent_at: a.at.toISOString(),
  };
}

/** What an email says about an economy alert (app/alerts/email-payloads.server.ts lays it out). */
export const economyEmailParts = (a: EconomyAlert): EmailParts => ({ headline: headline(a), description: description(a), facts: facts(a), footer: a.subject, url: a.url });
