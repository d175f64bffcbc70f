import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";

/**
 * The SDK's large-body path in real Luau against the real service. A file of its own: luau-web's
 * memory (about 16 MB a process) does not grow, and megabytes of events need most of it.
 */
const t = sdkSuite();
const { start, events } = t;

describe("Roblox SDK with large bodies", () => {
  it("splits batches under 900 KB and carries the event that did not fit into the next", async () => {
    expect(await start()).toBe(true);
    const delivered = await t.rbx.run(`
      for i = 1, 100 do
        Monitor.captureException("big " .. i .. " " .. string.rep("m", 8000), string.rep("ServerScriptService.Deep:" .. i .. "\\n", 100))
      end
      return Monitor.flush(60)
    `);
    expect(delivered).toBe(true);
    const batches = t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"));
    // about 10.5 KB an event: 100 of them (one batch by count) are over 900 KB
    expect(batches.length).toBe(2);
    expect(batches.every((r) => r.status === 200 && r.gzip && r.body.length <= 900_000)).toBe(true);
    const sizes = batches.map((r) => JSON.parse(r.body).errors.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(100);
    // every message once, none lost at a batch boundary
    const messages = (await events()).map((e) => e.message.split(" ").slice(0, 2).join(" "));
    expect(new Set(messages).size).toBe(100);
  });
});
