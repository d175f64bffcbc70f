import { describe, expect, it } from "vitest";
import { Pacer, retryDelayMs } from "../../app/economy/open-cloud.server.js";
import { histogram } from "../../app/economy/summary.server.js";

describe("retryDelayMs", () => {
  const h = (o: Record<string, string>) => new Headers(o);
  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryDelayMs(h({ "retry-after": "3" }))).toBe(3000);
    expect(retryDelayMs(h({ "retry-after": "0.5" }))).toBe(500);
    const now = Date.parse("2026-11-22T10:00:00Z");
    expect(retryDelayMs(h({ "retry-after": "Sun, 22 Nov 2026 10:00:07 GMT" }), now)).toBe(7000);
  });
  it("falls back to x-ratelimit-reset, in seconds or as a Unix time", () => {
    expect(retryDelayMs(h({ "x-ratelimit-reset": "12" }))).toBe(12_000);
    const now = 1_800_000_000_000;
    expect(retryDelayMs(h({ "x-ratelimit-reset": String(now / 1000 + 4) }), now)).toBe(4000);
    expect(retryDelayMs(h({}))).toBeNull();
    expect(retryDelayMs(h({ "retry-after": "soon" }))).toBeNull();
  });
});

describe("Pacer", () => {
  it("spaces requests so a minute never holds more than the budget", async () => {
    const pacer = new Pacer(6000); // 10 ms apart, plus the margin
    const times: number[] = [];
    for (let i = 0; i < 30; i++) {
      await pacer.take();
      times.push(performance.now());
    }
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(pacer.intervalMs - 2);
    expect(pacer.intervalMs).toBeGreaterThan(10);
  });
  it("holds everything back after a pause", async () => {
    const pacer = new Pacer(60_000);
    pacer.pause(50);
    const t = performance.now();
    await pacer.take();
    expect(performance.now() - t).toBeGreaterThanOrEqual(45);
  });
});

describe("wealth histogram", () => {
  it("fills gaps between orders of magnitude", () => {
    expect(histogram([{ bucket: -1, count: "1" }, { bucket: 0, count: "2" }, { bucket: 3, count: "4" }])).toEqual([
      { min: null, max: "0", count: 1 },
      { min: "0", max: "1", count: 2 },
      { min: "1", max: "10", count: 0 },
      { min: "10", max: "100", count: 0 },
      { min: "100", max: "1000", count: 4 },
    ]);
  });
});
