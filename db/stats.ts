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

type Figure = { kind: "level" | "open" | "top"; id: string | null; message: string | null; count: number; last_seen: Date | null; level: string; status: string | null };

/** The prefix of a window's columns in stats_window_counts (<prefix>_error, _warn, _info). */
const WINDOW_COLUMNS: Record<Timeframe, string> = { "1h": "h1", "24h": "h24", "7d": "d7", "30d": "d30" };

/**
 * The groups of a figures statement's `active` (group_id, count: its occurrences in the window, only
 * groups that have some) with what ranking and open_groups need of each, read by key: `joined`; and
 * the top ten of them with their messages, `top`. A project's other groups are not read.
 */
const activeGroups = (sql: Sql, projectId: string) => sql`
    , joined as materialized (
      select a.group_id as id, a.count, g.last_seen, g.status, g.merged_into
      from active a join error_groups g on g.project_id = ${projectId} and g.id = a.group_id
    ), top as (
      select t.id, g.message, t.count, t.last_seen, g.level, t.status
      from (select id, count, last_seen, status from joined order by count desc, last_seen desc, id desc limit 10) t
      join error_groups g on g.project_id = ${projectId} and g.id = t.id
    )`;

/**
 * After the per-level rows of a figures statement: the open groups that occurred in the window (those
 * of `joined` last seen from `start` on: every group last seen in the window has occurrences there),
 * the top groups of its `top`, ranked, and the order all are read in.
 */
const openAndTop = (sql: Sql, start: Date) => sql`
    union all
    select 'open', null, null, (select count(*) from joined where status = 'open' and merged_into is null and last_seen >= ${start}), null, null, null, 0
    union all
    select 'top', id, message, count, last_seen, level, status, row_number() over (order by count desc, last_seen desc, id desc) from top
    order by kind, rank`;

/**
 * The window's figures from its kept per-group sums (stats_window_counts, the cells from the window's
 * `since` on), corrected by the cells between `since` and the window's first bucket (`start`
 * rounded down to its unit): subtracted when `since` is earlier, added when later. With `since`
 * current that correction is empty, so the read costs the window's groups, not its cells nor the
 * project's other groups.
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
  const [lo, hi] = since < from ? [since, from] : [from, since];
  // `since` current: no correction, and a plain statement that plans no rollup partition
  const parts =
    lo.getTime() === hi.getTime()
      ? sql`
    with kept as materialized (${kept}
    ), levels as (
      select coalesce(sum(error), 0) as e, coalesce(sum(warn), 0) as w, coalesce(sum(info), 0) as i from kept
    ), active as (
      select group_id, count from kept where count > 0
    )`
      : sql`
    with corr as materialized (
      select group_id, coalesce(sum(c) filter (where level = 'error'), 0) as e, coalesce(sum(c) filter (where level = 'warn'), 0) as w,
        coalesce(sum(c) filter (where level = 'info'), 0) as i
      from (
        select r.group_id, r.level, ${since < from ? sql`-r.count` : sql`r.count`} as c from ${sql(table)} r
        where r.project_id = ${projectId} and r.bucket >= ${lo} and r.bucket < ${hi}
      ) x group by 1
    ), kept as materialized (${kept}
    ), levels as (
      select coalesce((select sum(error) from kept), 0) + coalesce((select sum(e) from corr), 0) as e,
        coalesce((select sum(warn) from kept), 0) + coalesce((select sum(w) from corr), 0) as w,
        coalesce((select sum(info) from kept), 0) + coalesce((select sum(i) from corr), 0) as i
    ), active as (
      select group_id, sum(c)::bigint as count from (
        select group_id, count as c from kept
        union all
        select group_id, e + w + i from corr
      ) x group by 1 having sum(c) > 0
    )`;
  return sql<Figure[]>`
    ${parts}
    ${activeGroups(sql, projectId)}
    select 'level' as kind, null::uuid as id, null::text as message, v.count::bigint as count, null::timestamptz as last_seen,
      v.level, null::text as status, 0::bigint as rank
    from levels, lateral (values ('error', levels.e), ('warn', levels.w), ('info', levels.i)) v(level, count)
    ${openAndTop(sql, start)}`;
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
    ), active as (
      select group_id, sum(n)::bigint as count from sums group by 1 having sum(n) > 0
    )
    ${activeGroups(sql, projectId)}
    select 'level' as kind, null::uuid as id, null::text as message, sum(n)::bigint as count, null::timestamptz as last_seen,
      level, null::text as status, 0::bigint as rank
    from sums group by level
    ${openAndTop(sql, start)}`;
}

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d. The per-level totals and the top
 * groups come from the window's kept sums (keptFigures), else from its cells, and so does
 * open_groups, which is exact: a group occurred in the window iff its last_seen is inside it, and
 * only the groups with occurrences in the window are read to find those. So is affected_users, to
 * the minute (each user's latest occurrence is kept to the minute).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date()) {
  const w = WINDOWS[timeframe];
  const start = new Date(now.getTime() - w.ms);
  const [[mark], [{ affected_users }]] = await Promise.all([
    sql<{ since: Date }[]>`select since from stats_window_marks where project_id = ${projectId} and timeframe = ${timeframe}`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const figures = mark ? await keptFigures(sql, projectId, timeframe, start, mark.since) : await cellFigures(sql, projectId, start, w.unit, now);
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0 };
  let open_groups = 0;
  for (const f of figures) {
    if (f.kind === "level") by_level[f.level] = Number(f.count);
    else if (f.kind === "open") open_groups = Number(f.count);
  }
  return {
    timeframe,
    total_errors: by_level.error + by_level.warn + by_level.info,
    by_level,
    open_groups,
    affected_users: Number(affected_users),
    top_errors: figures
      .filter((f) => f.kind === "top")
      .map((f) => ({ id: f.id, message: f.message, count: Number(f.count), last_seen: f.last_seen, level: f.level, status: f.status })),
  };
}
