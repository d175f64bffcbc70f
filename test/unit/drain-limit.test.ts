import { describe, expect, it } from "vitest";
import { DRAIN_TARGET_MS, nextDrainLimit } from "../../db/counter-deltas.js";

/**
 * The deferred-counter drain sizes itself (db/counter-deltas.ts): a pending row may hold one event or
 * thousands, and a drain that runs into the statement timeout applies nothing, so a drain that always
 * took the same number of rows could time out again and again while the backlog grew.
 */
describe("the size of the next drain", () => {
  it("shrinks to a quarter after a statement timeout, never below one row", () => {
    expect(nextDrainLimit(500, 500, "timeout")).toBe(125);
    expect(nextDrainLimit(2, 500, "timeout")).toBe(1);
  });

  it("shrinks in proportion when a drain ran past the target", () => {
    expect(nextDrainLimit(400, 500, { n: 400, ms: DRAIN_TARGET_MS * 4 })).toBe(100);
    expect(nextDrainLimit(3, 500, { n: 3, ms: DRAIN_TARGET_MS * 100 })).toBe(1);
  });

  it("grows back when full drains are quick, up to the maximum", () => {
    expect(nextDrainLimit(100, 500, { n: 100, ms: DRAIN_TARGET_MS / 10 })).toBe(200);
    expect(nextDrainLimit(400, 500, { n: 400, ms: 1 })).toBe(500);
  });

  it("stays when the drain was not full, or another instance held the lock", () => {
    expect(nextDrainLimit(100, 500, { n: 20, ms: 1 })).toBe(100);
    expect(nextDrainLimit(100, 500, { n: null, ms: 1 })).toBe(100);
  });
});
