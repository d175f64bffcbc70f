import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHealthCompaction } from "../../jobs/health.js";
import { createProject, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { script, scriptBase } from "../support/health.js";

/**
 * Shard compaction (db/health.ts compactHealthShards): the closed hours and days of the hour rollup
 * and the histograms become one row per cell, and every figure of the release health reads is what
 * it was before.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const TABLES = [
  { table: "health_hour", key: "place_version, hour, environment", sums: ["samples", "player_minutes", "sessions_started", "sessions_ended", "sessions_error_free", "servers_started"] },
  { table: "health_hist_hour", key: "place_version, hour, metric, age_bucket, bin, environment", sums: ["n"] },
  { table: "health_hist_day", key: "place_version, day, metric, age_bucket, bin, environment", sums: ["n"] },
] as const;

/** Per table: the rows, the cells, and each sum over the whole table. */
async function shape(projectId: string) {
  const out: Record<string, unknown> = {};
  for (const t of TABLES) {
    const [r] = await app.sql.unsafe(
      `select count(*)::int as rows, count(distinct (${t.key}))::int as cells, ${t.sums.map((c) => `sum(${c})::int as ${c}`).join(", ")}
       from ${t.table} where project_id = $1`,
      [projectId],
    );
    out[t.table] = r;
  }
  return out;
}

/** What writers on other connections leave: half of each row's counts moved to another shard. */
async function spreadOverShards(projectId: string) {
  for (const t of TABLES) {
    const cols = t.key.split(", ");
    const rows = await app.sql.unsafe(`select ${t.key}, shard, ${t.sums.join(", ")} from ${t.table} where project_id = $1`, [projectId]);
    for (const r of rows) {
      const half = t.sums.map((c) => Math.floor(Number(r[c]) / 2));
      const keyParams = cols.map((_, i) => `$${i + 2}`);
      await app.sql.unsafe(
        `update ${t.table} set ${t.sums.map((c, i) => `${c} = ${c} - $${cols.length + 2 + i}`).join(", ")}
         where project_id = $1 and ${cols.map((c, i) => `${c} = ${keyParams[i]}`).join(" and ")} and shard = $${cols.length + 2 + t.sums.length}`,
        [projectId, ...cols.map((c) => r[c]), ...half, r.shard],
      );
      await app.sql.unsafe(
        `insert into ${t.table} as h (project_id, ${t.key}, shard, ${t.sums.join(", ")})
         values ($1, ${keyParams.join(", ")}, $${cols.length + 2 + t.sums.length}, ${t.sums.map((_, i) => `$${cols.length + 2 + i}`).join(", ")})
         on conflict (project_id, ${t.key}, shard) do update set ${t.sums.map((c) => `${c} = h.${c} + excluded.${c}`).join(", ")}`,
        [projectId, ...cols.map((c) => r[c]), ...half, (Number(r.shard) + 3) % 8],
      );
    }
  }
}

describe("shard compaction", () => {
  it("merges each closed cell's shard rows into one and changes no figure", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "Compaction");
    for (const r of script(scriptBase())) expect((await postJson(app, "/api/health", r, apiKey)).status).toBe(200);
    await countersApplied(app.sql);
    const read = async () => ({
      list: (await getJson(app, "/api/v1/releases?window=7d", apiKey)).body.data.map((v: any) => [v.version, v.health]),
      d41: (await getJson(app, "/api/v1/releases/41?window=7d", apiKey)).body,
      d42: (await getJson(app, "/api/v1/releases/42?window=30d", apiKey)).body,
    });
    const before = await shape(projectId);
    const answers = await read();
    expect(answers.list).toHaveLength(2);
    expect((answers.list as any[]).find(([v]) => v === "41")[1].player_minutes).toBe(8);

    await spreadOverShards(projectId);
    const spread = await shape(projectId);
    const t = spread.health_hist_hour as { rows: number; cells: number };
    expect(t.rows).toBeGreaterThan(t.cells);

    // a run an hour and a day on: every cell of the script is closed
    const later = new Date(Date.now() + 26 * 3_600_000);
    expect(await runHealthCompaction(app.sql, later)).toBeGreaterThan(0);
    const after = await shape(projectId);
    for (const name of Object.keys(after)) {
      const a = after[name] as Record<string, number>;
      expect(a.rows, name).toBe(a.cells);
      expect(a, name).toEqual({ ...(spread[name] as object), rows: a.cells });
    }
    expect(await read()).toEqual(answers);
    // another run finds nothing to merge
    expect(await runHealthCompaction(app.sql, later)).toBe(0);
    expect(spread).toEqual({ ...before, ...Object.fromEntries(Object.entries(spread).map(([k, v]) => [k, { ...(before[k] as object), rows: (v as any).rows }])) });
    expect(await read()).toEqual(answers);
  });

  it("writes the merged rows in key order: a version's cells of one metric and day lie together", async () => {
    const { projectId } = await createProject(app.sql, "Compaction layout");
    // yesterday's memory-by-age cells of 10 versions as writers leave them: 8 shards, every version,
    // bin and shard interleaved (the order samples came in on 8 connections)
    await app.sql`
      insert into health_hist_day (project_id, environment, place_version, day, metric, age_bucket, bin, shard, n)
      select ${projectId}, 'production', 'v' || v, (now() at time zone 'UTC')::date - 1, 1, a, b, s, 1
      from generate_series(0, 7) s cross join generate_series(0, 39) b cross join generate_series(0, 6) a cross join generate_series(1, 10) v
      order by b, a, v, s`;
    await app.sql`analyze health_hist_day`;
    const layout = async () =>
      (
        await app.sql<{ pages: number; rows: number; n: number }[]>`
          select count(distinct (ctid::text::point)[0])::int as pages, count(*)::int as rows, sum(n)::int as n
          from health_hist_day where project_id = ${projectId} and place_version = 'v3' and metric = 1`
      )[0];
    expect(await layout()).toMatchObject({ rows: 7 * 40 * 8, n: 7 * 40 * 8 });
    expect(await runHealthCompaction(app.sql, new Date())).toBeGreaterThan(0);
    const merged = await layout();
    expect(merged).toMatchObject({ rows: 7 * 40, n: 7 * 40 * 8 });
    // 280 rows of about 80 bytes: 3 or 4 pages at the table's fill factor (5 across a boundary), where
    // summing into the kept shard's rows in place left them where the writers made them, one a page
    expect(merged.pages).toBeLessThanOrEqual(5);
  });
});
