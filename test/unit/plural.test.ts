import { describe, expect, it } from "vitest";
import { allOf, plural } from "../../app/components/format.js";

describe("counts with their nouns", () => {
  it("plural: singular for exactly one, plural otherwise, with thousands separators", () => {
    expect(plural(1, "issue")).toBe("1 issue");
    expect(plural(0, "issue")).toBe("0 issues");
    expect(plural(2, "issue")).toBe("2 issues");
    expect(plural(1200, "occurrence")).toBe("1,200 occurrences");
    expect(plural("1", "player")).toBe("1 player");
    expect(plural(3, "reply", "replies")).toBe("3 replies");
    expect(plural(1, "reply", "replies")).toBe("1 reply");
  });

  it("allOf: never 'all 1 issue' nor 'all 2 issues'", () => {
    expect(allOf(1, "issue")).toBe("the 1 issue");
    expect(allOf(2, "issue")).toBe("both issues");
    expect(allOf(30, "issue")).toBe("all 30 issues");
    expect(allOf(1500, "issue")).toBe("all 1,500 issues");
    expect(allOf("1", "issue")).toBe("the 1 issue");
  });
});
