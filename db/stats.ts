import type { Sql } from "./client.js";

export type Timeframe = "1h" | "24h" | "7d" | "30d";
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const WINDOWS: Record<Timeframe, { ms: number; unit: "minute" | "hour" }> = {
  "1h": { ms: HOUR, unit: "minute" },
  "24h": { ms: 24 * HOUR, unit: "minute" },
  "7d": { ms: 7 * DAY, unit: "hour" },
  "30d": { ms: 30 * DAY, unit: "hour" },
};

/** The rollups ingest writes (occurrences per group, level and origin); merges and deletes move them all alike. */
export const ROLLUP_TABLES = ["rollup_minute", "rollup_hour", "rollup_day"] as const;

/** The rollups from finest to coarsest; each bucket of one holds exactly the buckets of the finer one inside it. */
const LEVELS = [
  { table: "rollup_minute", ms: MINUTE },
  { table: "rollup_hour", ms: HOUR },
  { table: "rollup_day", ms: DAY },
] as const;

type Part = { table: (typeof LEVELS)[number]["table"]; from: number; to?: number; sign: 1 | -1 };

/**
 * Which buckets sum to the occurrences from `from` (a bucket edge of level `k`) on: coarse buckets for
 * every whole coarse span, and for the coarse bucket `from` falls in, either its fine buckets from
 * `from` to its end (none exist after `now`) or the coarse bucket less its fine buckets before
 * `from`, whichever reads fewer. A group then costs at most half a coarse bucket's fine buckets per
 * level: a 30d window reads at most 12 hour and 31 day buckets per group instead of 720 hour buckets.
 */
function cover(from: number, k: number, now: number): Part[] {
  const fine = LEVELS[k];
  const coarse = LEVELS[k + 1];
  if (!coarse) return [{ table: fine.table, from, sign: 1 }];
  const lo = Math.floor(from / coarse.ms) * coarse.ms;
  if (lo === from) return cover(from, k + 1, now);
  const hi = lo + coarse.ms;
  const after = Math.max(0, Math.min(hi, now) - from) / fine.ms;
  const before = (from - lo) / fine.ms;
  if (after <= before) {
    return hi > now ? [{ table: fine.table, from, sign: 1 }] : [{ table: fine.table, from, to: hi, sign: 1 }, ...cover(hi, k + 1, now)];
  }
  return [...cover(lo, k + 1, now), { table: fine.table, from: lo, to: from, sign: -1 }];
}

/**
 * The rollup cells (group, level, count) whose counts sum to the occurrences from `start` (rounded
 * down to the window's unit) on; a cell may count negatively (see `cover`).
 */
function windowCells(sql: Sql, projectId: string, start: number, unit: "minute" | "hour", now: number) {
  const k = unit === "minute" ? 0 : 1;
  const from = Math.floor(start / LEVELS[k].ms) * LEVELS[k].ms;
  return cover(from, k, now)
    .map((p) => sql`
      select group_id, level, ${p.sign === 1 ? sql`count` : sql`-count`} as count from ${sql(p.table)}
      where project_id = ${projectId} and bucket >= ${new Date(p.from)} ${p.to === undefined ? sql`` : sql`and bucket < ${new Date(p.to)}`}`)
    .reduce((all, part) => sql`${all} union all ${part}`);
}

type Figure = { kind: "level" | "top"; id: string | null; message: string | null; count: number; last_seen: Date | null; level: string; status: string | null };

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d.
 * The cells are read once, summed per group and level, and both the per-level totals and the top
 * groups come from those sums (one statement).
 * open_groups is exact (a group occurred in the window iff its last_seen is inside it); so is
 * affected_users, to the minute (each user's latest occurrence is kept to the minute).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const cells = windowCells(sql, projectId, start.getTime(), w.unit, now.getTime());
  const [figures, [{ open_groups }], [{ affected_users }]] = await Promise.all([
    sql<Figure[]>`
      with sums as materialized (
        select group_id, level, sum(count)::bigint as n from (${cells}) c group by 1, 2
      ), top as (
        -- ordered by a top-N sort over the groups, ranked after the limit (ten rows)
        select g.id, g.message, s.count, g.last_seen, g.level, g.status
        from (select group_id, sum(n)::bigint as count from sums group by 1 having sum(n) > 0) s
        join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
        order by s.count desc, g.last_seen desc, g.id desc limit 10
      )
      select 'level' as kind, null::uuid as id, null::text as message, sum(n)::bigint as count, null::timestamptz as last_seen,
        level, null::text as status, 0::bigint as rank
      from sums group by level
      union all
      select 'top', id, message, count, last_seen, level, status, row_number() over (order by count desc, last_seen desc, id desc) from top
      order by kind, rank`,
    sql<{ open_groups: number }[]>`
      select count(*)::bigint as open_groups from error_groups
      where project_id = ${projectId} and status = 'open' and merged_into is null and last_seen >= ${start}`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  for (const f of figures) if (f.kind === "level") by_level[f.level] = Number(f.count);
  return {
    timeframe,
    total_errors: by_level.error + by_level.warn + by_level.info,
    by_level,
    open_groups: Number(open_groups),
    affected_users: Number(affected_users),
    top_errors: figures
      .filter((f) => f.kind === "top")
      .map((f) => ({ id: f.id, message: f.message, count: Number(f.count), last_seen: f.last_seen, level: f.level, status: f.status })),
  };
}
