import { describe, expect, it } from "vitest";
import { factor, shortAmount } from "../../app/economy/charts.js";
import { formatIn, validZone } from "../../app/components/time.js";

describe("economy figures stay short enough for a card", () => {
  it("shortens large amounts and keeps small ones exact", () => {
    expect(shortAmount("4370956012345")).toBe("4.37T");
    expect(shortAmount("93000000000")).toBe("93B");
    expect(shortAmount("5003678")).toBe("5M");
    expect(shortAmount("999999")).toBe("999,999");
    expect(shortAmount("-2500000")).toBe("-2.5M");
    expect(shortAmount("123456789012345678901")).toBe("1.23e+20");
    expect(shortAmount(null)).toBe("—");
  });

  it("prints anomaly factors without raw decimals", () => {
    expect(factor(48850689.64)).toBe("48.9M×");
    expect(factor(12.345)).toBe("12.3×");
    expect(factor(4880.4)).toBe("4,880×");
    expect(factor(10)).toBe("10×");
  });
});

describe("times in the chosen zone", () => {
  const t = "2026-11-23T14:05:09.000Z";
  it("UTC by default, the local zone with its offset when chosen", () => {
    expect(formatIn(t, null)).toBe("2026-11-23 14:05 UTC");
    expect(formatIn(t, "Europe/Berlin", true)).toBe("2026-11-23 15:05:09 GMT+1");
    expect(formatIn(t, "Asia/Kolkata")).toBe("2026-11-23 19:35 GMT+5:30");
    expect(formatIn("2026-11-23T23:30:00Z", "America/Los_Angeles")).toBe("2026-11-23 15:30 GMT-8");
  });
  it("accepts only zones the runtime knows", () => {
    expect(validZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(validZone("Mars/Olympus")).toBeNull();
    expect(validZone("UTC")).toBeNull();
    expect(validZone("")).toBeNull();
  });
});

describe("economy line chart labels", () => {
  it("ends the last day's label at its point instead of running past the chart's right edge", async () => {
    const { createElement } = await import("react");
    const { renderToStaticMarkup } = await import("react-dom/server");
    const { LineChart } = await import("../../app/economy/charts.js");
    const points = ["11-23", "11-24", "11-25"].map((label, i) => ({ label, value: String(i * 10) }));
    const svg = renderToStaticMarkup(createElement(LineChart, { points, label: "Money supply" }));
    const ticks = [...svg.matchAll(/<text[^>]*text-anchor="(\w+)"[^>]*>(11-2\d)<\/text>/g)].map((m) => [m[2], m[1]]);
    expect(ticks).toEqual([
      ["11-23", "middle"],
      ["11-24", "middle"],
      ["11-25", "end"],
    ]);
  });
});
