import { describe, expect, it } from "vitest";
import { byVersionDesc, compareVersions } from "../../app/components/version-order";

const sorted = (list: string[]) => [...list].sort(compareVersions);

describe("version order", () => {
  it("orders place versions by their number, not as text", () => {
    expect(sorted(["10", "9", "100", "2", "43"])).toEqual(["2", "9", "10", "43", "100"]);
  });

  it("orders dotted versions part by part", () => {
    expect(sorted(["1.2.10", "1.2.9", "1.10.0", "1.9", "2.0", "1.2"])).toEqual(["1.2", "1.2.9", "1.2.10", "1.9", "1.10.0", "2.0"]);
  });

  it("ignores a leading v and leading zeros, then falls back to text so the order is total", () => {
    expect(compareVersions("v1.2.3", "1.2.4")).toBeLessThan(0);
    expect(compareVersions("v1.2.10", "1.2.9")).toBeGreaterThan(0);
    expect(sorted(["1", "01"])).toEqual(["01", "1"]);
    expect(compareVersions("7", "7")).toBe(0);
  });

  it("puts a pre-release before its release, and numbers before words at the same place", () => {
    expect(sorted(["1.2.0", "1.2.0-beta", "1.1.9"])).toEqual(["1.1.9", "1.2.0-beta", "1.2.0"]);
    expect(sorted(["1.2.x", "1.2.3"])).toEqual(["1.2.3", "1.2.x"]);
  });

  it("compares numbers of any length exactly", () => {
    expect(compareVersions("18446744073709551617", "18446744073709551616")).toBeGreaterThan(0);
    expect(compareVersions("99999999999999999999", "100000000000000000000")).toBeLessThan(0);
  });

  it("lists rows newest version first without changing the input", () => {
    const rows = [{ version: "9" }, { version: "10" }, { version: "1.2.10" }, { version: "1.2.9" }];
    expect(byVersionDesc(rows).map((r) => r.version)).toEqual(["10", "9", "1.2.10", "1.2.9"]);
    expect(rows[0].version).toBe("9");
  });
});
