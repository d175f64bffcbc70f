/**
 * Grouping accuracy as the log-parsing benchmark measures it (Zhu et al. 2019, "Tools and Benchmarks
 * for Automated Log Parsing"): a message is grouped right iff the set of messages grouped with it is
 * exactly the set of its true group; the accuracy is the share of messages grouped right.
 */
import { defaultFingerprint, groupingParts } from "../../app/ingest/fingerprint.server.js";
import { mine, pickTemplate, tokens } from "../../app/ingest/miner.server.js";
import { CORPUS, type CorpusEvent } from "./grouping-corpus.js";
import { minerCorpus } from "./miner-corpus.js";

export function groupingAccuracy(events: { issue: string }[], predicted: string[]): number {
  const byTrue = new Map<string, number[]>();
  const byPred = new Map<string, Set<string>>();
  events.forEach((e, i) => {
    byTrue.set(e.issue, [...(byTrue.get(e.issue) ?? []), i]);
    byPred.set(predicted[i], (byPred.get(predicted[i]) ?? new Set()).add(e.issue));
  });
  let right = 0;
  for (const idx of byTrue.values()) {
    const preds = new Set(idx.map((i) => predicted[i]));
    if (preds.size === 1 && byPred.get(predicted[idx[0]])!.size === 1) right += idx.length;
  }
  return right / events.length;
}

/** Each event's issue under default grouping, and with the templates learned from the whole set. */
export function predictions(events: CorpusEvent[]): { rules: string[]; learned: string[] } {
  const rules = events.map((e) => defaultFingerprint(e.message, e.stack, e.player, e.userId));
  const parts = events.map((e) => groupingParts(e.message, e.stack, e.player, e.userId));
  const byLocation = new Map<string, { template: string; tokens: string[]; positions: number; fingerprint: string }[]>();
  for (const t of mine(parts)) {
    const k = `${t.location}\u0000${t.tokenCount}`;
    byLocation.set(k, [...(byLocation.get(k) ?? []), { template: t.template, tokens: tokens(t.template), positions: t.positions.length, fingerprint: t.fingerprint }]);
  }
  const learned = parts.map((p, i) => {
    const toks = tokens(p.template);
    return pickTemplate(byLocation.get(`${p.location}\u0000${toks.length}`), toks)?.fingerprint ?? rules[i];
  });
  return { rules, learned };
}

const f3 = (x: number) => x.toFixed(3);

/** The table docs/grouping.md holds (checked by test/unit/miner.test.ts). */
export function accuracyTable(): string {
  const sets: [string, CorpusEvent[]][] = [
    ["generated Roblox errors, forms the rules do not know (test/support/miner-corpus.ts)", minerCorpus()],
    ["the grouping corpus (test/support/grouping-corpus.ts)", CORPUS],
  ];
  const lines = [
    "| Set | Events | True issues | Issues, rules only | Accuracy, rules only | Issues, with learned templates | Accuracy, with learned templates |",
    "|---|---:|---:|---:|---:|---:|---:|",
  ];
  for (const [name, events] of sets) {
    const { rules, learned } = predictions(events);
    lines.push(
      `| ${name} | ${events.length} | ${new Set(events.map((e) => e.issue)).size} | ${new Set(rules).size} | ${f3(groupingAccuracy(events, rules))} | ${new Set(learned).size} | ${f3(groupingAccuracy(events, learned))} |`,
    );
  }
  return lines.join("\n");
}
