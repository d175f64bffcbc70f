/**
 * (fp) The grouping budget: what computing an event's fingerprint and culprit costs, next to what
 * writing the event costs in (d). Measured in this process, not through the service.
 */
import { groupEvent, groupingParts } from "../../app/ingest/fingerprint.server.js";
import { LearnedTemplates } from "../../app/ingest/learned-templates.server.js";
import { learnedFingerprint, mine, tokens, VARIABLE } from "../../app/ingest/miner.server.js";
import type { Sql } from "../../db/client.js";
import { MAX_TEMPLATES_PER_PROJECT } from "../../db/grouping-templates.js";
import { minerCorpus } from "../../test/support/miner-corpus.js";
import { CORPUS } from "../../test/support/grouping-corpus.js";
import { fmt, verdict, type Measured, type Row } from "./harness.js";
import { event } from "./payloads.js";

export type GroupingCost = { usPerEvent: number; firstSightingUs: number; events: number; minerBytes: MinerMemory };

/** The learned-template cache's memory for one project holding N templates (bytes, estimated at V8's sizes). */
export type MinerMemory = { templates: number; bytes: number }[];

/**
 * `n` learned templates as a project's cache holds them: the templates the miner learns from the
 * generated Roblox errors, then more of the same shape at other locations.
 */
function learnedRows(n: number) {
  const base = mine(minerCorpus().map((e) => groupingParts(e.message, e.stack)));
  return Array.from({ length: n }, (_, i) => {
    const t = base[i % base.length];
    const location = i < base.length ? t.location : learnedFingerprint(`location ${i}`, "");
    return { fingerprint: learnedFingerprint(location, t.template), location, template: t.template, token_count: t.tokenCount, variables: t.positions.length };
  });
}

/** The cache's bytes for one project at 10, 100, 1,000 and the most it holds (MAX_TEMPLATES_PER_PROJECT). */
export function minerMemory(): MinerMemory {
  const cache = new LearnedTemplates(null as unknown as Sql);
  try {
    return [10, 100, 1000, MAX_TEMPLATES_PER_PROJECT].map((n) => {
      cache.hold(`p${n}`, learnedRows(n));
      return { templates: n, bytes: cache.bytesFor(`p${n}`) };
    });
  } finally {
    cache.close();
  }
}

/**
 * What grouping costs an event, as the ingest computes it (fingerprint and culprit), over the
 * benchmark's events and the grouping corpus: for texts seen recently (the analysis is kept for
 * recent texts, as in a storm or the repeated events of (b)-(d)), and for texts never seen before,
 * whose previous-version fingerprint is computed too (a fingerprint's first sighting). Each event
 * is also looked up in a project's learned templates as ingest does (its grouping parts, then the
 * cache's match), with the cache holding the most templates it keeps, some at the events' own
 * locations. Repeated for about a second each; microseconds per event.
 */
export function groupingCost(): GroupingCost {
  const sample = [
    ...Array.from({ length: 200 }, (_, k) => event(`Single${k}`, 10 + (k % 7), k)),
    ...CORPUS.map((c) => ({ message: c.message, stack_trace: c.stack, player_name: c.player, user_id: c.userId })),
  ];
  let unique = 0;
  // the project's cache: full, with a template at each location and length the events have (so every
  // look-up reaches the matching step; the last word a variable), the rest from learnedRows
  const cache = new LearnedTemplates(null as unknown as Sql);
  const own = new Map<string, { fingerprint: string; location: string; template: string; token_count: number; variables: number }>();
  for (const e of sample) {
    const p = groupingParts(e.message, e.stack_trace, e.player_name, e.user_id);
    const t = tokens(p.template);
    const template = [...t.slice(0, -1), VARIABLE].join(" ");
    if (!own.has(p.bucket)) own.set(p.bucket, { fingerprint: learnedFingerprint(p.location, template), location: p.location, template, token_count: t.length, variables: 1 });
  }
  cache.hold("bench", [...own.values(), ...learnedRows(MAX_TEMPLATES_PER_PROJECT - own.size)]);
  const run = (fresh: boolean) => {
    let events = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0n;
    while (elapsed < 1_000_000_000n) {
      for (const e of sample) {
        const message = fresh ? `${e.message} (${++unique})` : e.message;
        const g = groupEvent(message, e.stack_trace, null, e.player_name, () => fresh, e.user_id);
        cache.fingerprintIn("bench", g.parts!);
      }
      events += sample.length;
      elapsed = process.hrtime.bigint() - start;
    }
    return { us: Number(elapsed) / 1000 / events, events };
  };
  run(false); // warm-up
  const repeated = run(false);
  const first = run(true);
  cache.close();
  return { usPerEvent: repeated.us, firstSightingUs: first.us, events: repeated.events + first.events, minerBytes: minerMemory() };
}

/** The (fp) row: grouping's time per event against (d)'s time per written event (batches of 100). */
export function groupingRow(grouping: GroupingCost, batched: Measured, single: Measured): Row {
  return {
    scenario: "(fp) grouping: fingerprints per event",
    figure: `${fmt(grouping.usPerEvent, 1)} µs/event`,
    detail: `new text ${fmt(grouping.firstSightingUs, 1)} µs; learned templates included (cache per project: ${grouping.minerBytes
      .map((m) => `${m.templates}: ${fmt(m.bytes / 1024, 0)} KiB`)
      .join(", ")}); write: ${fmt(1e6 / (batched.rps * 100), 1)} µs/event in (d), ${fmt(1e6 / single.rps, 1)} µs/request in (b)`,
    ratio: fmt(grouping.usPerEvent / (1e6 / (batched.rps * 100)), 3),
    target: "<= 0.05 of (d)'s time per event",
    result: verdict(grouping.usPerEvent / (1e6 / (batched.rps * 100)) <= 0.05),
  };
}
