/**
 * (fp) The grouping budget: what computing an event's fingerprint and culprit costs, next to what
 * writing the event costs in (d). Measured in this process, not through the service.
 */
import { groupEvent } from "../../app/ingest/fingerprint.server.js";
import { CORPUS } from "../../test/support/grouping-corpus.js";
import { fmt, verdict, type Measured, type Row } from "./harness.js";
import { event } from "./payloads.js";

export type GroupingCost = { usPerEvent: number; firstSightingUs: number; events: number };

/**
 * What grouping costs an event, as the ingest computes it (fingerprint and culprit), over the
 * benchmark's events and the grouping corpus: for texts seen recently (the analysis is kept for
 * recent texts, as in a storm or the repeated events of (b)-(d)), and for texts never seen before,
 * whose previous-version fingerprint is computed too (a fingerprint's first sighting). Repeated for
 * about a second each; microseconds per event.
 */
export function groupingCost(): GroupingCost {
  const sample = [
    ...Array.from({ length: 200 }, (_, k) => event(`Single${k}`, 10 + (k % 7), k)),
    ...CORPUS.map((c) => ({ message: c.message, stack_trace: c.stack, player_name: c.player, user_id: c.userId })),
  ];
  let unique = 0;
  const run = (fresh: boolean) => {
    let events = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0n;
    while (elapsed < 1_000_000_000n) {
      for (const e of sample) {
        const message = fresh ? `${e.message} (${++unique})` : e.message;
        groupEvent(message, e.stack_trace, null, e.player_name, () => fresh, e.user_id);
      }
      events += sample.length;
      elapsed = process.hrtime.bigint() - start;
    }
    return { us: Number(elapsed) / 1000 / events, events };
  };
  run(false); // warm-up
  const repeated = run(false);
  const first = run(true);
  return { usPerEvent: repeated.us, firstSightingUs: first.us, events: repeated.events + first.events };
}

/** The (fp) row: grouping's time per event against (d)'s time per written event (batches of 100). */
export function groupingRow(grouping: GroupingCost, batched: Measured, single: Measured): Row {
  return {
    scenario: "(fp) grouping: fingerprints per event",
    figure: `${fmt(grouping.usPerEvent, 1)} µs/event`,
    detail: `new text ${fmt(grouping.firstSightingUs, 1)} µs; write: ${fmt(1e6 / (batched.rps * 100), 1)} µs/event in (d), ${fmt(1e6 / single.rps, 1)} µs/request in (b)`,
    ratio: fmt(grouping.usPerEvent / (1e6 / (batched.rps * 100)), 3),
    target: "<= 0.05 of (d)'s time per event",
    result: verdict(grouping.usPerEvent / (1e6 / (batched.rps * 100)) <= 0.05),
  };
}
