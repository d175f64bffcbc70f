import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { isAnomaly } from "../../app/economy/thresholds.server.js";
import { detectionTable, measureDetection, type DetectionRow } from "../support/economy-detection.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * Precision and recall of the learned thresholds on generated economies (test/support/economy-generator.ts):
 * a small game (balances ~40–2,000, rises ~5–100) and a large one (~2,400–1,000,000, rises
 * ~100–20,000), with heavy-tailed earnings, spending and newcomers, three seeds each, and ten dupes
 * of 2×, 10× and 50× planted per seed. The docs' table (docs/economy.md, "Detection") is this one.
 */
const SEEDS = [1, 2, 3];

describe("the learned detector on generated economies", () => {
  let sql: Sql;
  let rows: DetectionRow[];
  beforeAll(async () => {
    sql = createSql(await freshDatabaseUrl(), 4);
    await migrate(sql);
    rows = [...(await measureDetection(sql, "small", SEEDS)), ...(await measureDetection(sql, "large", SEEDS))];
  }, 600_000);
  afterAll(() => sql?.end());

  it("finds every 10× and 50× dupe in the small and the large economy, with few false alarms", () => {
    for (const r of rows.filter((r) => r.detector === "learned")) {
      expect(r.planted[10], r.economy).toBe(30);
      expect(r.found[10], `${r.economy}: 10× found`).toBe(r.planted[10]);
      expect(r.found[50], `${r.economy}: 50× found`).toBe(r.planted[50]);
      // ordinary earning (its heavy tail included) rarely crosses the learned threshold: at most 1% of the rises
      expect(r.falseAlarms / r.rises, `${r.economy}: false alarms ${r.falseAlarms} of ${r.rises} rises`).toBeLessThan(0.01);
      expect(r.rises, r.economy).toBeGreaterThan(10_000);
    }
  });

  it("learns thresholds that fit each game: both of the issue's 50× jumps are found, the small game's minimum far below the large one's", () => {
    const small = rows.find((r) => r.economy === "small" && r.detector === "learned")!;
    const large = rows.find((r) => r.economy === "large" && r.detector === "learned")!;
    const threshold = (t: { factor: number; minAmount: string }) => ({ ...t, off: false, source: "learned" as const });
    for (const t of small.thresholds) {
      expect(isAnomaly(threshold(t), "40", "2000")).toBe(true);
      expect(isAnomaly(threshold(t), "40", "400")).toBe(true); // 10× of the poorest
    }
    for (const t of large.thresholds) expect(isAnomaly(threshold(t), "2400", "120000")).toBe(true);
    expect(Math.min(...large.thresholds.map((t) => Number(t.minAmount)))).toBeGreaterThan(Math.max(...small.thresholds.map((t) => Number(t.minAmount))) * 10);
  });

  it("the fixed default (10×, 100,000) misses nearly every dupe of the small game and every 10× one", () => {
    const small = rows.find((r) => r.economy === "small" && r.detector === "fixed")!;
    expect(small.found[10]).toBe(0);
    expect(small.found[50]).toBeLessThan(small.planted[50] / 10);
    expect(rows.find((r) => r.economy === "large" && r.detector === "fixed")!.found[10]).toBe(0);
  });

  it("is the table docs/economy.md shows", () => {
    const table = detectionTable(rows);
    const docs = readFileSync(new URL("../../docs/economy.md", import.meta.url), "utf8");
    expect(docs.includes(table), `docs/economy.md should hold:\n${table}`).toBe(true);
  });
});
