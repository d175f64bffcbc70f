import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";

/**
 * What one event carries of the Luau SDK's breadcrumb trail stays within the SDK's size bound, and
 * every event is accepted. A file of its own: 100 events with long trails fill most of luau-web's
 * fixed memory.
 */
const t = sdkSuite();
const { start } = t;

type Crumb = { timestamp?: string; level: string; category?: string; message?: string; data?: Record<string, unknown> };
const crumbsOf = async () =>
  (await t.app.sql<{ message: string; breadcrumbs: Crumb[] | null }[]>`
    select message, breadcrumbs from events where project_id = ${t.projectId} order by id`).map((r) => ({ message: r.message, breadcrumbs: r.breadcrumbs }));

describe("Roblox SDK breadcrumbs", () => {
  it("keeps what one event carries under its size bound, newest first, and every event is accepted", async () => {
    await start();
    // 50 lines of 1,000 bytes: 50 KB of Output, more than one event may carry
    await t.rbx.run(`
      for i = 1, 50 do print(string.format("%02d ", i) .. string.rep("é", 600)) end
      task.wait()
      for i = 1, 100 do Monitor.captureMessage("big event " .. i, "error") end
      return Monitor.flush(30)
    `);
    // all 100 counted (the throttle stores 30 rows of one issue a minute)
    const [{ n }] = await t.app.sql<{ n: string }[]>`select sum(count)::text as n from error_groups where project_id = ${t.projectId}`;
    expect(n).toBe("100");
    const rows = await crumbsOf();
    expect(rows.length).toBeGreaterThanOrEqual(30);
    for (const row of rows) {
      const crumbs = row.breadcrumbs!;
      expect(Buffer.byteLength(JSON.stringify(crumbs))).toBeLessThanOrEqual(16_000);
      // the newest lines are kept, each cut to 1,000 bytes on a character boundary
      expect(crumbs.at(-1)!.message).toMatch(/^50 é+$/);
      expect(Buffer.byteLength(crumbs.at(-1)!.message!)).toBeLessThanOrEqual(1000);
      expect(crumbs.length).toBeGreaterThan(10);
      expect(crumbs[0].message).toMatch(new RegExp(`^${51 - crumbs.length} `));
    }
    // the batches stayed under the body limit (more requests, nothing refused)
    const posts = t.rbx.requests.filter((r) => r.url.endsWith("/api/ingest"));
    expect(posts.length).toBeGreaterThan(1);
    expect(posts.every((r) => r.status === 200 && Buffer.byteLength(r.body) <= 900_000)).toBe(true);
  });
});
