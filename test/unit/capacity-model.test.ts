/**
 * The derivation behind docs/capacity.md's servers and players per instance (scripts/bench/capacity.ts):
 * a request of n events costs R + n × e, and a Roblox server with the SDK's defaults sends its errors
 * in one batch every 10 s, at most 60 requests of 100 a minute, plus a health report a minute.
 */
import { describe, expect, it } from "vitest";
import { SDK, batchModel, serversPerInstance } from "../../scripts/bench/capacity.js";

describe("the capacity model", () => {
  it("recovers a request's fixed cost and an event's from single events and batches of 100", () => {
    // R = 500 µs, e = 20 µs: a single event 520 µs, a batch of 100 2,500 µs (25 µs an event)
    const m = batchModel(520, 25);
    expect(m.perRequestUs).toBeCloseTo(500, 6);
    expect(m.perEventUs).toBeCloseTo(20, 6);
    expect(m.batchUs(10)).toBeCloseTo(700, 6);
  });

  it("follows the SDK's defaults", () => {
    expect(SDK).toMatchObject({ flushIntervalS: 10, maxBatchSize: 100, maxRequestsPerMinute: 60, sampleIntervalS: 60 });
  });

  it("derives the servers two cores serve from the CPU a server costs a second", () => {
    // service and PostgreSQL alike: single 520 µs, batched 25 µs an event; a sample 600 µs, a session event 300 µs
    const unit = (us: number) => ({ node: us / 2, postgres: us / 2 });
    const model = { single: unit(520), batched: unit(25), sample: unit(600), session: unit(300) };
    const quiet = serversPerInstance({ name: "quiet", eventsPerMinute: 6, ...model });
    // 6 requests of 1 event (520 µs each), 1 sample, 10 players × 2 / 20 min = 1 session event: (3,120 + 600 + 300) / 60 µs a second
    expect(quiet.cpuPerServerUs).toBeCloseTo(4020 / 60, 6);
    expect(quiet.servers).toBeCloseTo(2e6 / (4020 / 60), 6);
    expect(quiet.players).toBeCloseTo(quiet.servers * 10, 6);
    expect(quiet.requestsPerMinute).toBe(7);
    expect(quiet.postgresShare).toBeCloseTo(0.5, 6);
  });

  it("sends a flush's events in one request until a minute's errors pass 6 batches, and at most 60 requests of 100", () => {
    const unit = (us: number) => ({ node: us, postgres: 0 });
    const model = { single: unit(520), batched: unit(25), sample: unit(0), session: unit(0) };
    expect(serversPerInstance({ name: "busy", eventsPerMinute: 60, ...model }).eventsPerRequest).toBe(10);
    // fewer events than flushes: a request each; none: only the health report
    expect(serversPerInstance({ name: "rare", eventsPerMinute: 2, ...model }).requestsPerMinute - 1).toBe(2);
    expect(serversPerInstance({ name: "none", eventsPerMinute: 0, ...model })).toMatchObject({ requestsPerMinute: 1, cpuPerServerUs: 0 });
    const storm = serversPerInstance({ name: "storm", eventsPerMinute: 1200, ...model });
    expect(storm.requestsPerMinute - 1).toBe(12);
    expect(storm.eventsPerRequest).toBe(100);
    // past 6,000 events a minute the SDK keeps or drops the rest: the service never sees more
    const most = serversPerInstance({ name: "most", eventsPerMinute: 20_000, ...model });
    expect(most.eventsPerMinute).toBe(6000);
    expect(most.requestsPerMinute - 1).toBe(60);
    expect(most.cpuPerServerUs).toBeCloseTo((60 * (500 + 100 * 20)) / 60, 6);
  });
});
