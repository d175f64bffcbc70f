import { describe, expect, it } from "vitest";
import { chooseRead } from "../../db/stats.js";

/**
 * Which read a stats window takes (db/stats.ts): every read gives the same figures (the integration
 * tests in stats-windows.test.ts read every window all four ways), so this pins only the cost side:
 * a small project reads every group's row in the short statement, a large one the few rows of the
 * long one, and cells are read when they are fewer than the kept sums.
 */
describe("chooseRead", () => {
  it("reads every group's row up to 2,000 occurrences or 2,000 kept rows, and a few groups' rows past both", () => {
    expect(chooseRead(2000, null, true).groups).toBe("few");
    expect(chooseRead(2001, 2001, true).groups).toBe("many");
    // the 1,000-issue project's month: 10,000 occurrences of 1,000 kept groups
    expect(chooseRead(10_000, 1000, true)).toEqual({ from: "kept", groups: "few" });
    expect(chooseRead(10_000, 2000, true).groups).toBe("few");
    // 100,000 issues: the last hour's 278 occurrences, the day's 6,667
    expect(chooseRead(278, null, true)).toEqual({ from: "cells", groups: "few" });
    expect(chooseRead(6667, 2001, true)).toEqual({ from: "cells", groups: "many" });
  });

  it("reads the cells when they are fewer than the kept rows, else the kept sums", () => {
    expect(chooseRead(1000, 1000, true).from).toBe("cells");
    expect(chooseRead(1001, 1000, true).from).toBe("kept");
    // past 2,000 kept rows (counted no further), the cells up to 10,000 occurrences
    expect(chooseRead(10_000, 2001, true).from).toBe("cells");
    expect(chooseRead(10_001, 2001, true)).toEqual({ from: "kept", groups: "many" });
  });

  it("reads the cells of a project without kept windows, whatever their number", () => {
    expect(chooseRead(50_000, null, false)).toEqual({ from: "cells", groups: "many" });
    expect(chooseRead(2000, null, false)).toEqual({ from: "cells", groups: "few" });
  });
});
