/**
 * (rules) What a project's grouping rules cost an event at ingest, measured in this process:
 * `npx tsx scripts/bench/grouping-rules.ts`. Two cases, each repeated for about a second:
 * - worst: 100 rules whose regexes are 100 variants of the classic catastrophic-backtracking pattern
 *   `(a+)+$` (`([a一]+)+$`, `([a丁]+)+$`, …, so none is a copy of another) against
 *   the longest stored message (8 KiB of `a` and a `b`): every rule runs over the whole text and none
 *   matches, so every event pays for all 100 full scans;
 * - typical: 20 rules of the kinds a studio writes (anchored regexes, paths, levels, tags) against
 *   the bench's ordinary events.
 * RE2's matching is linear in the text for any pattern, and a project's regexes run as one RE2 set (one
 * pass over the text for all of them), so the worst case is a scan of 8 KiB, not an exponential
 * blow-up nor 100 scans; the figure is the price of that bound (docs/grouping.md, "Grouping rules").
 */
import { compileRule, ProjectRules, type RuleSubject } from "../../app/ingest/rules.server.js";

function perEvent(rules: ProjectRules, subjects: RuleSubject[]) {
  let events = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  while (elapsed < 1_000_000_000n) {
    for (const s of subjects) rules.match(s);
    events += subjects.length;
    elapsed = process.hrtime.bigint() - start;
  }
  return Number(elapsed) / 1000 / events;
}

const subject = (message: string, over: Partial<RuleSubject> = {}): RuleSubject => ({ message, level: "error", tags: null, stackTrace: null, playerName: null, ...over });

const worst = new ProjectRules(
  Array.from({ length: 100 }, (_, i) => compileRule({ id: `w${i}`, action: "ignore", name: null, match: { message_regex: `([a${String.fromCharCode(0x4e00 + i)}]+)+$` } })),
);
const typical = new ProjectRules([
  ...Array.from({ length: 5 }, (_, i) => compileRule({ id: `r${i}`, action: "group", name: null, match: { message_regex: `^HttpError ${500 + i}: ` } })),
  ...Array.from({ length: 5 }, (_, i) => compileRule({ id: `p${i}`, action: "group", name: null, match: { path: `ServerScriptService.Module${i}` } })),
  ...Array.from({ length: 5 }, (_, i) => compileRule({ id: `t${i}`, action: "ignore", name: null, match: { tag: `noise-${i}` } })),
  ...Array.from({ length: 5 }, (_, i) => compileRule({ id: `l${i}`, action: "ignore", name: null, match: { level: "info", message_regex: `(?i)debug ${i}` } })),
]);
const ordinary = Array.from({ length: 200 }, (_, k) =>
  subject(`ServerScriptService.Single${k}:${10 + (k % 7)}: attempt to index nil with 'Value${k % 13}'`, {
    stackTrace: `ServerScriptService.Single${k}:${10 + (k % 7)} function run\nServerScriptService.Main:3`,
    tags: ["combat"],
  }),
);

perEvent(worst, [subject("a".repeat(100) + "b")]); // warm-up
const worstUs = perEvent(worst, [subject("a".repeat(8191) + "b")]);
perEvent(typical, ordinary);
const typicalUs = perEvent(typical, ordinary);
console.log(JSON.stringify({ worst_100_rules_8kib_us_per_event: Math.round(worstUs), typical_20_rules_us_per_event: Number(typicalUs.toFixed(2)) }));
