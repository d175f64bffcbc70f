import { describe, expect, it } from "vitest";
import { BodyBudget } from "../../app/body-budget.server.js";

describe("BodyBudget", () => {
  it("holds up to its capacity, refuses past it, and gives every byte back once", () => {
    const budget = new BodyBudget(100);
    const a = budget.reserve(60)!;
    expect(budget.inUse).toBe(60);
    expect(budget.reserve(41)).toBeUndefined();
    const b = budget.reserve(0)!;
    expect(b.grow(40)).toBe(true);
    expect(b.grow(1)).toBe(false);
    expect(budget.inUse).toBe(100);
    a.shrinkTo(10);
    expect(budget.inUse).toBe(50);
    a.shrinkTo(30); // shrinking never grows
    expect(a.bytes).toBe(10);
    a.release();
    a.release();
    expect(budget.inUse).toBe(40);
    expect(a.grow(1)).toBe(false);
    b.release();
    expect(budget.inUse).toBe(0);
  });
});
