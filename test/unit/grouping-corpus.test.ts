import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultFingerprint, defaultFingerprintV2, defaultFingerprintV3 } from "../../app/ingest/fingerprint.server.js";
import { defaultFingerprint as v1 } from "../../app/ingest/fingerprint-v1.server.js";
import { CORPUS } from "../support/grouping-corpus.js";

type Ev = (typeof CORPUS)[number];
const v4 = (e: Ev) => defaultFingerprint(e.message, e.stack, e.player, e.userId);
const v3 = (e: Ev) => defaultFingerprintV3(e.message, e.stack, e.player, e.userId);
const v2 = (e: Ev) => defaultFingerprintV2(e.message, e.stack, e.player);
const issues = (fp: (e: Ev) => string) => new Set(CORPUS.map(fp)).size;
const groupBy = <K>(list: Ev[], key: (e: Ev) => K) => {
  const out = new Map<K, Ev[]>();
  for (const e of list) out.set(key(e), [...(out.get(key(e)) ?? []), e]);
  return out;
};

describe("grouping corpus", () => {
  it("holds at least 60 realistic events", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
  });

  it("grouping v4 puts every event in its expected issue, and no two expected issues together", () => {
    const fpOf = new Map<string, string>();
    const issueOf = new Map<string, string>();
    for (const e of CORPUS) {
      const fp = v4(e);
      if (!fpOf.has(e.issue)) fpOf.set(e.issue, fp);
      expect(fp, `${e.issue}: ${e.message}`).toBe(fpOf.get(e.issue));
      if (!issueOf.has(fp)) issueOf.set(fp, e.issue);
      expect(issueOf.get(fp), `${e.issue} shares a fingerprint with ${issueOf.get(fp)}`).toBe(e.issue);
    }
  });

  it("every issue version 2 grouped right keeps its version-2 fingerprint; only the ones it split change", () => {
    const byIssue = groupBy(CORPUS, (e) => e.issue);
    const owners = groupBy(CORPUS, v2);
    const changed: string[] = [];
    for (const [issue, events] of byIssue) {
      const fps = new Set(events.map(v2));
      const right = fps.size === 1 && owners.get([...fps][0])!.every((e) => e.issue === issue);
      if (right) for (const e of events) expect(v3(e), `${issue}: ${e.message}`).toBe(v2(e));
      else changed.push(issue);
    }
    // what version 2 split: the player named in the text, ISO timestamps, hex receipt ids with user ids
    expect(changed.sort()).toEqual([
      "anticheat-fly",
      "anticheat-speed",
      "analytics-429",
      "analytics-500",
      "daily-reward-early",
      "daily-reward-streak",
      "receipt-not-granted",
      "receipt-unknown-product",
      "teleport-player-full",
      "teleport-player-unauthorized",
      // versions 2 and 3 joined a runtime error with and without a stack by its line; version 4 counts
      // the stack's function, which the stackless event does not have
      "combat-health",
      "combat-health-no-stack",
      "quest-error",
      "quest-error-no-stack",
      // the errors sent again after an update moved their lines
      "inventory-equip-nil",
      "inventory-equip-slot",
      "inventory-full-add",
      "inventory-full-give",
      "pet-follow",
      // what no version before 4 knew: request ids, other players' ids inside keys, quoted pet names
      "shop-api-500",
      "shop-api-404",
      "matchmaking-503",
      "purchase-token",
      "gift-load",
      "pet-equip-locked",
    ].sort());
  });

  it("version 4 changes only events with a stack or with its data forms; of the issues v3 made, only the shifted lines' and those forms' change", () => {
    // without a stack, only the texts holding version 4's data forms (request ids, here) change
    const stackless = new Set(CORPUS.filter((e) => !e.stack && v4(e) !== v3(e)).map((e) => e.issue));
    expect([...stackless].sort()).toEqual(["matchmaking-503", "purchase-token"]);
    const byIssue = groupBy(CORPUS, (e) => e.issue);
    const split = [...byIssue].filter(([, events]) => new Set(events.map(v3)).size > 1).map(([issue]) => issue);
    // what version 3 split: the errors sent again after an update moved their lines, and version 4's data forms
    expect(split.sort()).toEqual(
      [
        "inventory-equip-nil",
        "inventory-equip-slot",
        "inventory-full-add",
        "inventory-full-give",
        "pet-follow",
        "shop-api-500",
        "shop-api-404",
        "matchmaking-503",
        "purchase-token",
        "gift-load",
        "pet-equip-locked",
      ].sort(),
    );
  });

  it("docs/grouping.md states the issue counts the corpus produces under v4, v3, v2 and v1", () => {
    const expected = new Set(CORPUS.map((e) => e.issue)).size;
    expect(issues(v4)).toBe(expected);
    const doc = readFileSync(new URL("../../docs/grouping.md", import.meta.url), "utf8");
    const line = `its ${CORPUS.length} events make **${issues(v4)} issues with grouping v4, ${issues(v3)} with v3, ${issues(v2)} with v2 and ${issues((e) => v1(e.message, e.stack))} with v1**`;
    expect(doc).toContain(line);
  });
});
