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

/** The rollup level of a window's unit, and `start` rounded down to that unit: where its cells begin. */
function windowStart(start: number, unit: "minute" | "hour") {
  const k = unit === "minute" ? 0 : 1;
  return { k, table: LEVELS[k].table, from: Math.floor(start / LEVELS[k].ms) * LEVELS[k].ms };
}

/**
 * The rollup cells (group, level, count) whose counts sum to the occurrences from `start` (rounded
 * down to the window's unit) on; a cell may count negatively (see `cover`).
 */
function windowCells(sql: Sql, projectId: string, start: number, unit: "minute" | "hour", now: number) {
  const { k, from } = windowStart(start, unit);
  return cover(from, k, now)
    .map((p) => sql`
      select group_id, level, ${p.sign === 1 ? sql`count` : sql`-count`} as count from ${sql(p.table)}
      where project_id = ${projectId} and bucket >= ${new Date(p.from)} ${p.to === undefined ? sql`` : sql`and bucket < ${new Date(p.to)}`}`)
    .reduce((all, part) => sql`${all} union all ${part}`);
}

type Figure = { kind: "level" | "top"; id: string | null; message: string | null; count: number; last_seen: Date | null; level: string; status: string | null };

/** The prefix of a window's columns in stats_window_counts (<prefix>_error, _warn, _info). */
const WINDOW_COLUMNS: Record<Timeframe, string> = { "1h": "h1", "24h": "h24", "7d": "d7", "30d": "d30" };

/** After the per-level rows of a figures statement: the top groups of its `top`, ranked, and the order both are read in. */
const rankedTop = (sql: Sql) => sql`
    union all
    select 'top', id, message, count, last_seen, level, status, row_number() over (order by count desc, last_seen desc, id desc) from top
    order by kind, rank`;

/**
 * The window's figures from its kept per-group sums (stats_window_counts, the cells from the window's
 * `since` on), corrected by the cells between `since` and the window's first bucket (`start`
 * rounded down to its unit): subtracted when `since` is earlier, added when later. With `since` current that correction is empty, so the read
 * costs the window's groups, not its cells. The top ten are exact: a group the correction leaves
 * alone keeps its kept count, so every group ranked below the 10 + k (k corrected groups) largest
 * kept counts, ties included, ranks below ten groups whose counts are exact.
 */
function keptFigures(sql: Sql, projectId: string, timeframe: Timeframe, start: Date, since: Date) {
  // the rollup the kept sums follow (db/migrations/103_stats_windows.sql) is the window's unit's
  const { table, from: fromMs } = windowStart(start.getTime(), WINDOWS[timeframe].unit);
  const from = new Date(fromMs);
  const c = WINDOW_COLUMNS[timeframe];
  const kept = sql`
    select group_id, ${sql(`${c}_error`)} as error, ${sql(`${c}_warn`)} as warn, ${sql(`${c}_info`)} as info,
      ${sql(`${c}_error`)} + ${sql(`${c}_warn`)} + ${sql(`${c}_info`)} as count
    from stats_window_counts
    where project_id = ${projectId} and (${sql(`${c}_error`)} <> 0 or ${sql(`${c}_warn`)} <> 0 or ${sql(`${c}_info`)} <> 0)`;
  const top = sql`
    select g.id, g.message, s.e + s.w + s.i as count, g.last_seen, g.level, g.status
    from sums s join error_groups g on g.project_id = ${projectId} and g.id = s.group_id
    where s.e + s.w + s.i > 0
    order by s.e + s.w + s.i desc, g.last_seen desc, g.id desc limit 10`;
  const [lo, hi] = since < from ? [since, from] : [from, since];
  // `since` current: no correction, and a plain statement that plans no rollup partition
  const parts =
    lo.getTime() === hi.getTime()
      ? sql`
    with kept as materialized (${kept}
    ), sums as (
      select group_id, error as e, warn as w, info as i from kept
      where count >= coalesce((select count from kept order by count desc offset 9 limit 1), 0)
    ), levels as (
      select coalesce(sum(error), 0) as e, coalesce(sum(warn), 0) as w, coalesce(sum(info), 0) as i from kept
    ), top as (${top})`
      : sql`
    with corr as materialized (
      select group_id, coalesce(sum(c) filter (where level = 'error'), 0) as e, coalesce(sum(c) filter (where level = 'warn'), 0) as w,
        coalesce(sum(c) filter (where level = 'info'), 0) as i
      from (
        select r.group_id, r.level, ${since < from ? sql`-r.count` : sql`r.count`} as c from ${sql(table)} r
        where r.project_id = ${projectId} and r.bucket >= ${lo} and r.bucket < ${hi}
      ) x group by 1
    ), kept as materialized (${kept}
    ), cut as (
      select count from kept order by count desc offset (select 9 + count(*) from corr) limit 1
    ), sums as (
      select group_id, sum(e)::bigint as e, sum(w)::bigint as w, sum(i)::bigint as i from (
        select group_id, error as e, warn as w, info as i from kept
        where count >= coalesce((select count from cut), 0) or group_id in (select group_id from corr)
        union all
        select group_id, e, w, i from corr
      ) x group by 1
    ), levels as (
      select coalesce((select sum(error) from kept), 0) + coalesce((select sum(e) from corr), 0) as e,
        coalesce((select sum(warn) from kept), 0) + coalesce((select sum(w) from corr), 0) as w,
        coalesce((select sum(info) from kept), 0) + coalesce((select sum(i) from corr), 0) as i
    ), top as (${top})`;
  return sql<Figure[]>`
    ${parts}
    select 'level' as kind, null::uuid as id, null::text as message, v.count::bigint as count, null::timestamptz as last_seen,
      v.level, null::text as status, 0::bigint as rank
    from levels, lateral (values ('error', levels.e), ('warn', levels.w), ('info', levels.i)) v(level, count)
    ${rankedTop(sql)}`;
}

/**
 * Moves every kept window that fell behind its target (a project no write reached for a while; a
 * write moves its own), so the correction a read applies stays within a minute. Every minute (jobs).
 */
export async function moveStatsWindows(sql: Sql): Promise<void> {
  await sql`
    select stats_window_move(project_id, timeframe) from stats_window_marks
    where since < stats_window_target(timeframe) order by project_id, timeframe`;
}

/** The window's figures summed from its rollup cells (see `cover`), for a project without kept windows. */
function cellFigures(sql: Sql, projectId: string, start: Date, unit: "minute" | "hour", now: Date) {
  const cells = windowCells(sql, projectId, start.getTime(), unit, now.getTime());
  return sql<Figure[]>`
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
    ${rankedTop(sql)}`;
}

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d. The per-level totals and the top
 * groups come from the window's kept sums (keptFigures), else from its cells.
 * open_groups is exact (a group occurred in the window iff its last_seen is inside it); so is
 * affected_users, to the minute (each user's latest occurrence is kept to the minute).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const [[mark], [{ open_groups }], [{ affected_users }]] = await Promise.all([
    sql<{ since: Date }[]>`select since from stats_window_marks where project_id = ${projectId} and timeframe = ${timeframe}`,
    sql<{ open_groups: number }[]>`
      select count(*)::bigint as open_groups from error_groups
      where project_id = ${projectId} and status = 'open' and merged_into is null and last_seen >= ${start}`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const figures = mark ? await keptFigures(sql, projectId, timeframe, start, mark.since) : await cellFigures(sql, projectId, start, w.unit, now);
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
