import { expect } from "vitest";
import type { Sql } from "../../db/client.js";
import type { Timeframe } from "../../db/stats.js";

/** The rollup each window's kept sums follow (db/migrations/103_stats_windows.sql). */
export const TABLE: Record<Timeframe, string> = { "1h": "rollup_minute", "24h": "rollup_minute", "7d": "rollup_hour", "30d": "rollup_hour" };
const TIMEFRAMES = Object.keys(TABLE) as Timeframe[];

/** Every window's kept sums against its cells from `since` on; returns how many groups the windows hold. */
export async function keptEqualsCells(sql: Sql, projectId: string) {
  let held = 0;
  for (const tf of TIMEFRAMES) {
    const [{ since }] = await sql<{ since: Date }[]>`select since from stats_window_marks where project_id = ${projectId} and timeframe = ${tf}`;
    const kept = await sql<{ group_id: string; error: number; warn: number; info: number }[]>`
      select group_id, error::int, warn::int, info::int from stats_window_sums where project_id = ${projectId} and timeframe = ${tf} order by group_id`;
    const cells = await sql<{ group_id: string; error: number; warn: number; info: number }[]>`
      select group_id, coalesce(sum(count) filter (where level = 'error'), 0)::int as error,
        coalesce(sum(count) filter (where level = 'warn'), 0)::int as warn, coalesce(sum(count) filter (where level = 'info'), 0)::int as info
      from ${sql(TABLE[tf])} where project_id = ${projectId} and bucket >= ${since}
      group by group_id having sum(count) <> 0 order by group_id`;
    expect({ tf, kept: kept.map((r) => ({ ...r })) }).toEqual({ tf, kept: cells.map((r) => ({ ...r })) });
    held += kept.length;
  }
  await projectHoursEqualCells(sql, projectId);
  return held;
}

/** The project's hour cells (rollup_project_hour, migration 137) against its groups' hour cells summed. */
export async function projectHoursEqualCells(sql: Sql, projectId: string) {
  const kept = await sql<{ bucket: Date; level: string; count: number }[]>`
    select bucket, level, count::int from rollup_project_hour where project_id = ${projectId} and count <> 0 order by bucket, level`;
  const cells = await sql<{ bucket: Date; level: string; count: number }[]>`
    select bucket, level, sum(count)::int as count from rollup_hour where project_id = ${projectId}
    group by 1, 2 having sum(count) <> 0 order by bucket, level`;
  expect(kept.map((r) => ({ ...r }))).toEqual(cells.map((r) => ({ ...r })));
  return cells.length;
}

