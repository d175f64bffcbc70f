/**
 * Measures the anomaly detector on generated economies: each economy is written through the
 * service's writer (writeObservationsTx, as a push writes) into its own project on a real PostgreSQL,
 * the thresholds are learned by the service's own SQL, and the anomalies are read by its own query.
 * Found / missed counts the planted dupes; false alarms are anomalies that are not planted dupes.
 */
import type { Sql } from "../../db/client.js";
import { listAnomalies, type CurrencyThreshold } from "../../db/economy-anomalies.js";
import { writeObservationsTx, type Observation } from "../../db/economy.js";
import { putEconomyMap } from "../../db/economy-maps.js";
import { effectiveThresholds } from "../../app/economy/thresholds.server.js";
import { DUPE_FACTORS, generateEconomy, type EconomyKind } from "./economy-generator.js";
import { createProject } from "./server.js";

const GEMS_MAP = { currencies: [{ key: "gems", name: "Gems", paths: ["Gems"] }], names: [], data_code: null, match: [] };

/** The configured defaults (ECONOMY_ANOMALY_FACTOR, ECONOMY_ANOMALY_MIN_AMOUNT) as shipped. */
export const SHIPPED_DEFAULTS = { economyAnomalyFactor: 10, economyAnomalyMinAmount: 100_000 };

export type DetectionRow = {
  economy: EconomyKind;
  /** "learned" or the fixed threshold the service used before learning */
  detector: string;
  rises: number;
  found: Record<number, number>;
  planted: Record<number, number>;
  falseAlarms: number;
  thresholds: { factor: number; minAmount: string }[];
};

const observation = (userId: number, gems: number, observedAt: Date): Observation => ({
  userId: String(userId),
  balances: { gems: String(gems) },
  total: String(gems),
  cash: "0",
  bank: "0",
  darkCoin: "0",
  skippedValues: [],
  skippedCount: 0,
  displayNames: [],
  username: null,
  displayName: null,
  dataCode: null,
  observedAt,
  revisionTime: null,
});

async function allAnomalies(sql: Sql, projectId: string, t: CurrencyThreshold) {
  const out: { user_id: string; from_amount: string; to_amount: string }[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await listAnomalies(sql, projectId, { thresholds: new Map([["gems", t]]), days: 30, limit: 100, offset });
    out.push(...page.data);
    if (out.length >= page.total) return out;
  }
}

/** Writes one generated economy per seed and measures the learned detector and the fixed default on them. */
export async function measureDetection(sql: Sql, kind: EconomyKind, seeds: number[]): Promise<DetectionRow[]> {
  const zero = () => Object.fromEntries(DUPE_FACTORS.map((f) => [f, 0])) as Record<number, number>;
  const learned: DetectionRow = { economy: kind, detector: "learned", rises: 0, found: zero(), planted: zero(), falseAlarms: 0, thresholds: [] };
  const fixed: DetectionRow = { ...learned, detector: "fixed", found: zero(), planted: zero(), thresholds: [] };
  for (const seed of seeds) {
    const economy = generateEconomy(kind, { seed });
    const { projectId } = await createProject(sql, `${kind} economy ${seed}`);
    await putEconomyMap(sql, projectId, GEMS_MAP, null);
    const now = Date.now();
    for (const round of economy.rounds) {
      const at = new Date(now - round.secondsAgo * 1000);
      const rows = [...round.balances].map(([u, b]) => observation(u, b, at));
      await sql.begin((tx) => writeObservationsTx(tx, projectId, "push", rows));
    }
    const [{ rises }] = await sql<{ rises: number }[]>`select count(*)::int as rises from economy_rises where project_id = ${projectId}`;
    const t = (await effectiveThresholds(sql, projectId, GEMS_MAP, SHIPPED_DEFAULTS)).get("gems")!;
    const planted = new Set(economy.dupes.map((d) => `${d.userId}:${d.from}:${d.to}`));
    for (const [row, threshold] of [
      [learned, t],
      [fixed, { factor: SHIPPED_DEFAULTS.economyAnomalyFactor, minAmount: String(SHIPPED_DEFAULTS.economyAnomalyMinAmount), off: false }],
    ] as const) {
      const flagged = await allAnomalies(sql, projectId, threshold);
      const hits = new Set(flagged.map((a) => `${a.user_id}:${a.from_amount}:${a.to_amount}`));
      row.rises += rises;
      row.thresholds.push({ factor: threshold.factor, minAmount: threshold.minAmount });
      for (const d of economy.dupes) {
        row.planted[d.factor]++;
        if (hits.has(`${d.userId}:${d.from}:${d.to}`)) row.found[d.factor]++;
      }
      row.falseAlarms += [...hits].filter((h) => !planted.has(h)).length;
    }
  }
  return [learned, fixed];
}

/** The detection table as docs/economy.md shows it (one line per economy and detector). */
export function detectionTable(rows: DetectionRow[]): string {
  const cell = (r: DetectionRow, f: number) => `${r.found[f]} / ${r.planted[f] - r.found[f]}`;
  const range = (r: DetectionRow) => {
    const fs = [...new Set(r.thresholds.map((t) => t.factor))].sort((a, b) => a - b);
    const ms = [...new Set(r.thresholds.map((t) => Number(t.minAmount)))].sort((a, b) => a - b);
    const span = (xs: number[], fmt: (x: number) => string) => (xs.length === 1 ? fmt(xs[0]) : `${fmt(xs[0])}–${fmt(xs.at(-1)!)}`);
    return `${span(fs, (x) => `${x}×`)}, +${span(ms, (x) => x.toLocaleString("en-US"))}`;
  };
  // precision: the share of what was flagged that was a planted dupe; recall: the share of the planted dupes flagged
  const ratio = (n: number, d: number) => (d === 0 ? "–" : (n / d).toFixed(2));
  const found = (r: DetectionRow) => r.found[2] + r.found[10] + r.found[50];
  const planted = (r: DetectionRow) => r.planted[2] + r.planted[10] + r.planted[50];
  const lines = [
    "| Economy | Detector (factor, minimum) | Rises | 2× found / missed | 10× found / missed | 50× found / missed | False alarms | Precision | Recall (all / 10× and 50×) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.economy} | ${r.detector === "learned" ? "learned" : "fixed default"} (${range(r)}) | ${r.rises.toLocaleString("en-US")} | ${cell(r, 2)} | ${cell(r, 10)} | ${cell(r, 50)} | ${r.falseAlarms} (${((100 * r.falseAlarms) / r.rises).toFixed(2)}%) | ${ratio(found(r), found(r) + r.falseAlarms)} | ${ratio(found(r), planted(r))} / ${ratio(r.found[10] + r.found[50], r.planted[10] + r.planted[50])} |`,
    ),
  ];
  return lines.join("\n");
}
