import { describe, expect, it } from "vitest";
import { shardOf } from "../../app/ingest/writer.server.js";

/** The shard of a (project, fingerprint) decides which writer queue and transaction its events take. */
describe("shardOf", () => {
  const project = "6f1c2b0e-8d7a-4c1e-9f3b-2a5d4e6c7b8a";

  it("is one queue when there is one shard", () => {
    expect(shardOf(project, "abc", 1)).toBe(0);
  });

  it("is the same in every process and release (pinned values), and depends on the project too", () => {
    // FNV-1a (32 bit) of "<project>\0<fingerprint>", modulo the shard count
    expect(shardOf(project, "e3b0c44298fc1c149afbf4c8996fb924", 4)).toBe(1);
    const other = "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a";
    const differs = Array.from({ length: 50 }, (_, i) => `fp${i}`).some((fp) => shardOf(project, fp, 2) !== shardOf(other, fp, 2));
    expect(differs).toBe(true);
  });

  it("spreads fingerprints evenly", () => {
    for (const shards of [2, 3, 4]) {
      const counts = new Array(shards).fill(0);
      for (let i = 0; i < 6000; i++) counts[shardOf(project, `fingerprint-${i.toString(16)}`, shards)]++;
      for (const n of counts) expect(Math.abs(n - 6000 / shards)).toBeLessThan((6000 / shards) * 0.1);
    }
  });
});
