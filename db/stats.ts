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

/** Where a window's cells begin (`from`, its first bucket) and how it ends: its start, unit and rollup. */
type Window = { start: Date; from: Date; unit: "minute" | "hour"; table: (typeof LEVELS)[number]["table"] };

/**
 * The window's occurrences per level: the project's hour rows (rollup_project_hour, equal to its
 * groups' hour cells) of every hour from the window's first bucket on, and for a window in minutes
 * that starts inside an hour, that hour's minute cells from its first minute on. A few thousand rows
 * at most, whatever the number of groups.
 */
function levelsOf(sql: Sql, projectId: string, w: Window) {
  const hour = new Date(Math.ceil(w.from.getTime() / HOUR) * HOUR);
  const minutes =
    w.unit === "minute" && hour.getTime() > w.from.getTime()
      ? sql`union all select level, count from rollup_minute where project_id = ${projectId} and bucket >= ${w.from} and bucket < ${hour}`
      : sql``;
  return sql`
    select level, sum(count)::bigint as n from (
      select level, count from rollup_project_hour where project_id = ${projectId} and bucket >= ${hour}
      ${minutes}
    ) c group by level`;
}

/**
 * Up to this many groups with occurrences in a window, its open_groups and top ten read every one of
 * their rows (fewGroupsFigures): a statement of three parts, planned and run in about the time the
 * statement for many groups (manyGroupsFigures) spends on its fixed parts alone. Bounded by the
 * window's occurrences and, with kept windows, by the project's kept rows (a group with occurrences
 * in a window has one, but for the minute a read's correction adds).
 */
const FEW_GROUPS = 2000;

/** With more kept rows than FEW_GROUPS, a window of up to this many occurrences (so cells) is read from its cells. */
const CELLS_AT_MOST = 10_000;

/**
 * How a window's figures are read: its groups' counts from its cells or from the kept sums
 * (`from`), and open_groups and the top ten from every such group's row or from a few (`groups`).
 * Every choice gives the same figures; each costs about what it reads.
 */
export type StatsRead = { from: "cells" | "kept"; groups: "few" | "many" };

/**
 * The cheaper read of a window of `occurrences`, for a project with kept windows (`marked`) and
 * `keptRows` kept per-group sums (counted up to FEW_GROUPS + 1, or null when not counted: a window of
 * at most FEW_GROUPS occurrences needs no count): its cells when they are fewer than the kept rows
 * (each occurrence is at most one cell; the kept sums are read whole, one row per group seen in 30
 * days), and every group's row when they are few.
 */
export function chooseRead(occurrences: number, keptRows: number | null, marked: boolean): StatsRead {
  if (!marked) return { from: "cells", groups: occurrences <= FEW_GROUPS ? "few" : "many" };
  const few = occurrences <= FEW_GROUPS || (keptRows !== null && keptRows <= FEW_GROUPS);
  const cellsAtMost = keptRows !== null && keptRows <= FEW_GROUPS ? keptRows : CELLS_AT_MOST;
  return { from: occurrences <= cellsAtMost ? "cells" : "kept", groups: few ? "few" : "many" };
}

/** How many of the project's newest cells the top ten's tie-break walks (see manyGroupsFigures). */
const TIE_WALK = 2000;
/** Up to this many groups tied at the tenth count are all read to break the tie. */
const TIE_READ_ALL = 256;

/**
 * A figures statement after its `active` (group_id, count: the groups with occurrences in the window,
 * materialized): open_groups and the top ten, reading the rows of only a few groups. For a window of
 * more than FEW_GROUPS groups (see fewGroupsFigures).
 *
 * - open_groups: every group with occurrences in the window, less those not open or merged away
 *   (error_groups_not_open, migration 141), less the open ones last seen before the window's exact
 *   `start`: a group is last seen no earlier than any of its cells, so those have cells in the first
 *   bucket only, and only the groups with a positive cell there are read for it.
 * - top ten: ranked by count; the groups above the tenth count are at most nine. The ones tied at it
 *   (often most of the window's groups when groups occur alike) rank by last_seen: when there are
 *   many, the project's newest TIE_WALK cells of the window are walked, newest first, to the bucket
 *   `edge` where `need` tied groups have been met. A group's last_seen lies in the bucket of its
 *   newest cell, so every tied group last seen from the edge's bucket on has a cell there, in the
 *   walk; the rest rank below the `need` met. When the walk does not close such a bucket, every tied
 *   group is read, as before.
 */
function manyGroupsFigures(sql: Sql, projectId: string, w: Window) {
  return sql`
    , cut as (
      select min(count) as c from (select count from active order by count desc limit 10) t
    ), walk as materialized (
      select group_id, bucket from ${sql(w.table)} where project_id = ${projectId} and bucket >= ${w.from} and count > 0
      order by bucket desc limit ${TIE_WALK}
    ), ranks as materialized (
      select count(*) as n, count(*) filter (where a.count = cut.c) as tied,
        coalesce(array_agg(a.group_id) filter (where a.count > cut.c), '{}') as above_ids,
        coalesce(array_agg(a.count) filter (where a.count > cut.c), '{}') as above_counts,
        coalesce(array_agg(a.group_id) filter (where a.count = cut.c and a.group_id in (select group_id from walk)), '{}') as walked_ids
      from active a, cut
    ), walked as materialized (
      select w.group_id, max(w.bucket) as newest from walk w join (select unnest(walked_ids) as group_id from ranks) t on t.group_id = w.group_id
      where (select tied from ranks) > ${TIE_READ_ALL} group by 1
    ), edge as (
      select e.newest as b from (
        select newest from walked order by newest desc offset greatest(9 - (select cardinality(above_ids) from ranks), 0) limit 1
      ) e where e.newest > (select min(bucket) from walk)
    ), tied as (
      select a.group_id, a.count from active a, cut
      where a.count = cut.c and ((select tied from ranks) <= ${TIE_READ_ALL} or not exists (select 1 from edge))
      union all
      select group_id, (select c from cut) from walked where newest >= (select b from edge)
    ), candidates as (
      select u.group_id, u.count from ranks, unnest(ranks.above_ids, ranks.above_counts) as u(group_id, count)
      union all
      select group_id, count from tied
    ), top as (
      select g.id, g.message, c.count, g.last_seen, g.level, g.status
      from candidates c, lateral (
        select g.id, g.message, g.last_seen, g.level, g.status from error_groups g
        where g.project_id = ${projectId} and g.id = c.group_id limit 1
      ) g
      order by c.count desc, g.last_seen desc, g.id desc limit 10
    ), opened as (
      select (select n from ranks)
        - (select count(*) from error_groups g join active a on a.group_id = g.id
           where g.project_id = ${projectId} and (g.status <> 'open' or g.merged_into is not null))
        - (select count(*) from error_groups g
           where g.project_id = ${projectId} and g.status = 'open' and g.merged_into is null and g.last_seen < ${w.start}
             and g.id in (select group_id from ${sql(w.table)} where project_id = ${projectId} and bucket = ${w.from} and count > 0)) as n
    )
    select 'open' as kind, null::uuid as id, null::text as message, n as count, null::timestamptz as last_seen,
      null::text as level, null::text as status, 0::bigint as rank
    from opened
    union all
    select 'top', id, message, count, last_seen, level, status, row_number() over (order by count desc, last_seen desc, id desc) from top
    order by kind, rank`;
}

/** The window's occurrences per level (kind 'level'), summed from its `kept` sums (keptActive with levels). */
const keptLevels = (sql: Sql) => sql`
    select 'level' as kind, null::uuid as id, null::text as message, v.n as count, null::timestamptz as last_seen,
      v.level, null::text as status, 0::bigint as rank
    from (select sum(e)::bigint as e, sum(w)::bigint as w, sum(i)::bigint as i from kept) s,
      lateral (values ('error', s.e), ('warn', s.w), ('info', s.i)) v(level, n)
    union all`;

/**
 * A figures statement after its `active`, for a window of few groups: every one of them joined with
 * its row once (`joined`), open_groups as those open and last seen from the window's exact `start`
 * on (a group last seen inside the window has occurrences there), and the top ten ranked by count,
 * last_seen and id.
 */
function fewGroupsFigures(sql: Sql, projectId: string, w: Window, levels: boolean) {
  return sql`
    , joined as materialized (
      select g.id, g.message, a.count, g.last_seen, g.level, g.status, g.status = 'open' and g.merged_into is null and g.last_seen >= ${w.start} as counted
      from active a join error_groups g on g.project_id = ${projectId} and g.id = a.group_id
    )
    ${levels ? keptLevels(sql) : sql``}
    select 'open' as kind, null::uuid as id, null::text as message, count(*) filter (where counted) as count, null::timestamptz as last_seen,
      null::text as level, null::text as status, 0::bigint as rank
    from joined
    union all
    select 'top', id, message, count, last_seen, level, status, row_number() over (order by count desc, last_seen desc, id desc)
    from (select * from joined order by count desc, last_seen desc, id desc limit 10) t
    order by kind, rank`;
}

/**
 * A figures statement's `active` (group_id, count: the groups with occurrences in the window,
 * materialized) from its kept per-group sums (stats_window_counts, the cells from the window's
 * `since` on), corrected by the cells between `since` and the window's first bucket (`start`
 * rounded down to its unit): subtracted when `since` is earlier, added when later. With `since`
 * current that correction is empty, so the read costs the window's groups' kept sums (one narrow row
 * each), not its cells. With `levels`, the per-level sums stay apart (`kept`) for keptLevels.
 */
function keptActive(sql: Sql, projectId: string, timeframe: Timeframe, w: Window, since: Date, levels: boolean) {
  // the rollup the kept sums follow (db/migrations/103_stats_windows.sql) is the window's unit's
  const { table, from } = w;
  const c = WINDOW_COLUMNS[timeframe];
  const [e, wn, i] = [sql(`${c}_error`), sql(`${c}_warn`), sql(`${c}_info`)];
  const nonZero = sql`project_id = ${projectId} and (${e} <> 0 or ${wn} <> 0 or ${i} <> 0)`;
  const [lo, hi] = since < from ? [since, from] : [from, since];
  const n = since < from ? sql`-r.count` : sql`r.count`;
  const cells = sql`from ${sql(table)} r where r.project_id = ${projectId} and r.bucket >= ${lo} and r.bucket < ${hi}`;
  // `since` current: no correction, and a plain statement that plans no rollup partition
  const current = lo.getTime() === hi.getTime();
  if (!levels) {
    // one sum per group, not three: a correction of 100,000 groups' rows sums each once
    const kept = sql`select group_id, ${e} + ${wn} + ${i} as count from stats_window_counts where ${nonZero}`;
    return current
      ? sql`
    with active as materialized (
      select group_id, count from (${kept}) k where count > 0
    )`
      : sql`
    with active as materialized (
      select group_id, sum(c)::bigint as count from (
        select group_id, count as c from (${kept}) k
        union all
        select r.group_id, ${n} ${cells}
      ) x group by 1 having sum(c) > 0
    )`;
  }
  const kept = sql`select group_id, ${e} as e, ${wn} as w, ${i} as i from stats_window_counts where ${nonZero}`;
  const sums = current
    ? kept
    : sql`
    select group_id, sum(e)::bigint as e, sum(w)::bigint as w, sum(i)::bigint as i from (
      ${kept}
      union all
      select r.group_id, case when r.level = 'error' then ${n} else 0 end, case when r.level = 'warn' then ${n} else 0 end,
        case when r.level = 'info' then ${n} else 0 end
      ${cells}
    ) x group by 1`;
  return sql`
    with kept as materialized (${sums}
    ), active as (
      select group_id, e + w + i as count from kept where e + w + i > 0
    )`;
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

/**
 * A figures statement's `active` summed from the window's rollup cells (see `cover`): for a project
 * without kept windows, and for a window whose cells are fewer than the kept sums (chooseRead).
 */
function cellActive(sql: Sql, projectId: string, w: Window, now: Date) {
  const cells = windowCells(sql, projectId, w.start.getTime(), w.unit, now.getTime());
  return sql`
    with active as materialized (
      select group_id, sum(count)::bigint as count from (${cells}) c group by 1 having sum(count) > 0
    )`;
}

/**
 * Window figures from the rollups (never from raw rows). The window ends now; its start rounds down
 * to the rollup bucket: a minute for 1h/24h, an hour for 7d/30d. A first statement reads the
 * window's mark, its occurrences per level (the project's hour rows and one hour's minute cells, see
 * levelsOf) and the project's kept rows up to FEW_GROUPS + 1; those choose the second (chooseRead):
 * the groups with occurrences in the window from its cells or its kept sums, and open_groups and the
 * top ten from all of those groups' rows or from a few (fewGroupsFigures, manyGroupsFigures). All are
 * exact: open_groups counts the open groups last seen inside the window, and the top ten break ties
 * by last_seen. So is affected_users, to the minute (each user's latest occurrence is kept to the
 * minute). `read` sets the read instead of chooseRead (each gives the same figures).
 */
export async function windowStats(sql: Sql, projectId: string, timeframe: Timeframe, now = new Date(), read?: StatsRead) {
  const { ms, unit } = WINDOWS[timeframe];
  const start = new Date(now.getTime() - ms);
  const { table, from } = windowStart(start.getTime(), unit);
  const w: Window = { start, from: new Date(from), unit, table };
  // The first statement reads what chooses the second, each part only when needed. A window in
  // minutes: its levels (an hour of minute cells and a day of project hours at most), and the kept
  // rows only past FEW_GROUPS occurrences. A window in hours: the kept rows, and its levels only past
  // FEW_GROUPS of them (a month's project hours cost more than a few kept rows, and the second
  // statement then sums the levels with the kept sums).
  const levelsFirst = read ? read.from !== "kept" || read.groups !== "few" : unit === "minute";
  const mark = sql`select since from stats_window_marks where project_id = ${projectId} and timeframe = ${timeframe}`;
  const kept = sql`select count(*) as n from (select from stats_window_counts where project_id = ${projectId} limit ${FEW_GROUPS + 1}) k`;
  const levels = sql`select coalesce(json_object_agg(level, n), '{}') as levels, coalesce(sum(n), 0) as total from (${levelsOf(sql, projectId, w)}) l`;
  const [[head], [{ affected_users }]] = await Promise.all([
    sql<{ since: Date | null; kept: string | null; levels: Record<string, number> | null }[]>`${
      levelsFirst
        ? sql`
      select m.since, l.levels, case when l.total > ${FEW_GROUPS} then (${kept}) end as kept
      from (${levels}) l left join (${mark}) m on true`
        : sql`
      select m.since, k.n as kept, case when m.since is null or k.n > ${FEW_GROUPS} then (select levels from (${levels}) l) end as levels
      from (${kept}) k left join (${mark}) m on true`
    }`,
    sql<{ affected_users: number }[]>`
      select count(*)::bigint as affected_users from project_users
      where project_id = ${projectId} and last_seen >= ${start}`,
  ]);
  const since = head.since;
  const by_level: Record<string, number> = { error: 0, warn: 0, info: 0, ...head.levels };
  const occurrences = by_level.error + by_level.warn + by_level.info;
  const how: StatsRead = !head.levels ? { from: "kept", groups: "few" } : (read ?? chooseRead(occurrences, head.kept === null ? null : Number(head.kept), Boolean(since)));
  const levelsFromKept = !head.levels;
  const active = how.from === "kept" && since ? keptActive(sql, projectId, timeframe, w, since, levelsFromKept) : cellActive(sql, projectId, w, now);
  const figures = await sql<Figure[]>`${active} ${how.groups === "few" ? fewGroupsFigures(sql, projectId, w, levelsFromKept) : manyGroupsFigures(sql, projectId, w)}`;
  for (const f of figures) if (f.kind === "level") by_level[f.level] = Number(f.count);
  const total_errors = by_level.error + by_level.warn + by_level.info;
  return {
    timeframe,
    total_errors,
    by_level,
    open_groups: Number(figures.find((f) => f.kind === "open")?.count ?? 0),
    affected_users: Number(affected_users),
    top_errors: figures
      .filter((f) => f.kind === "top")
      .map((f) => ({ id: f.id, message: f.message, count: Number(f.count), last_seen: f.last_seen, level: f.level, status: f.status })),
  };
}
