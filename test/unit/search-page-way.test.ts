import { describe, expect, it } from "vitest";
import { pageWay } from "../../db/event-messages.js";

/**
 * How a raw search's page is read (db/event-messages.ts): per matching text when the texts are few,
 * however rare their events; newest first when the matches are a large share of the stored events.
 */
describe("pageWay", () => {
  it("reads a term of one text per text, however rare its events", () => {
    expect(pageWay(1, 1_000, 1_000_000, 50)).toBe("per-text");
    expect(pageWay(1, 3, 10_000_000, 50)).toBe("per-text");
  });

  it("walks the newest events for a term in a quarter of them, spread over many texts", () => {
    // the bench's "Damage": 250 of 1,000 texts, a quarter of the events, at 10k and at 1M events
    expect(pageWay(250, 2_500, 10_000, 50)).toBe("newest-first");
    expect(pageWay(250, 250_000, 1_000_000, 50)).toBe("newest-first");
  });

  it("weighs how deep the page reaches", () => {
    // 20 texts holding 1 event in 200: the first page is cheaper per text, and so is a deep one
    expect(pageWay(20, 5_000, 1_000_000, 50)).toBe("per-text");
    // 5 texts holding half the events: newest first finds a page in about twice its length
    expect(pageWay(5, 500_000, 1_000_000, 50)).toBe("newest-first");
  });

  it("never takes the stored events for fewer than the matches", () => {
    expect(pageWay(3, 10, 0, 50)).toBe(pageWay(3, 10, 10, 50));
    expect(pageWay(300, 10_000, 2_000, 50)).toBe(pageWay(300, 10_000, 10_000, 50));
  });
});
