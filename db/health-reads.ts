import type { Sql } from "./client.js";
import type { Release } from "./versions.js";

/**
 * Health reads (docs/health.md): the release list with versions from errors and from health reports,
 * per-version figures over a window from the hourly rollups, the live state from the server rows.
 * A window starts on the hour (`from`); player counts start on the UTC day of `from`.
 */

export type HealthFilter = { from: Date; environment?: string };

/**
 * The project's game versions, newest first: those with errors (by first occurrence) and those known only from health reports (by their first report), with the
 * same error figures (zero for a version without errors).
 */
export async function listReleaseVersions(sql: Sql, projectId: string, limit: number, offset: number) {
  const [data, [{ total }]] = await Promise.all([
    sql<Release[]>`
      with members as (
        select id, merged_into from error_groups where project_id = ${projectId} and merged_into is not null
      ), ev as (
        select gv.version, min(gv.first_seen) as first_seen, max(gv.last_seen) as last_seen, sum(gv.count) as occurrences,
          count(distinct coalesce(m.merged_into, gv.group_id)) as issues
        from group_versions gv left join members m on m.id = gv.group_id
        where gv.project_id = ${projectId}
        group by gv.version
      ), v as (
        select coalesce(ev.version, hv.place_version) as version,
          coalesce(ev.first_seen, hv.first_seen) as first_seen, coalesce(ev.last_seen, hv.first_seen) as last_seen,
          coalesce(ev.occurrences, 0) as occurrences, coalesce(ev.issues, 0) as issues,
          least(ev.first_seen, hv.first_seen) as sort_key
        from ev full join (select place_version, first_seen from health_versions where project_id = ${projectId}) hv
          on hv.place_version = ev.version
        order by sort_key desc, version desc
        limit ${limit} offset ${offset}
      )
      select v.version, v.first_seen, v.last_seen, v.occurrences::bigint, v.issues::bigint,
        (select count(*) from error_groups g where g.project_id = ${projectId} and g.merged_into is null and g.first_version = v.version)::bigint as new_issues,
        (select count(*) from error_groups g where g.project_id = ${projectId} and g.merged_into is null and g.regressed_version = v.version)::bigint as regressions,
        round(v.occurrences / greatest(extract(epoch from v.last_seen - v.first_seen) / 3600, 1), 2)::float8 as per_hour
      from v order by v.sort_key desc, v.version desc`,
    sql<{ total: number }[]>`
      select count(*)::bigint as total from (
        select version from group_versions where project_id = ${projectId}
        union select place_version from health_versions where project_id = ${projectId}) x`,
  ]);
  return { data, total: Number(total) };
}

const envFilter = (sql: Sql, column: string, environment?: string) =>
  environment === undefined ? sql`` : sql`and ${sql(column)} = ${environment}`;

export type HourSums = {
  place_version: string;
  samples: number;
  player_minutes: number;
  servers_started: number;
  servers_ended: number;
  servers_oom: number;
  servers_abnormal: number;
  sessions_started: number;
  sessions_ended: number;
  sessions_error_free: number;
};

/** The hourly rollups summed over the window, per version of `versions`. */
export async function hourSums(sql: Sql, projectId: string, versions: string[], f: HealthFilter): Promise<HourSums[]> {
  return sql<HourSums[]>`
    select place_version, sum(samples)::float8 as samples, sum(player_minutes)::float8 as player_minutes,
      sum(servers_started)::float8 as servers_started, sum(servers_ended)::float8 as servers_ended, sum(servers_oom)::float8 as servers_oom,
      sum(servers_abnormal)::float8 as servers_abnormal, sum(sessions_started)::float8 as sessions_started,
      sum(sessions_ended)::float8 as sessions_ended, sum(sessions_error_free)::float8 as sessions_error_free
    from health_hour
    where project_id = ${projectId} and place_version = any(${versions}::text[]) and hour >= ${f.from} ${envFilter(sql, "environment", f.environment)}
    group by place_version`;
}

/** Live servers and their players per version (all versions: the shares' denominators). */
export async function liveByVersion(sql: Sql, projectId: string, environment?: string) {
  return sql<{ place_version: string; servers: number; players: number }[]>`
    select place_version, count(*)::float8 as servers, coalesce(sum(players), 0)::float8 as players
    from health_servers
    where project_id = ${projectId} and ended_at is null and lost_at is null ${envFilter(sql, "environment", environment)}
    group by place_version`;
}

/** Player sessions open now per version of `versions` (the kept count, migration 120). */
export async function openSessions(sql: Sql, projectId: string, versions: string[], environment?: string) {
  return sql<{ place_version: string; open: number }[]>`
    select place_version, sum(n)::float8 as open from health_open
    where project_id = ${projectId} and place_version = any(${versions}::text[]) ${envFilter(sql, "environment", environment)}
    group by place_version`;
}

/**
 * Distinct players with a session started or ended in the window's days, those with a session ended
 * there, and those of them with none ended with an error, per version (from the per-version counts
 * of players' last days: a window always ends now).
 */
export async function playerCounts(sql: Sql, projectId: string, versions: string[], f: HealthFilter) {
  const day = sql`(${f.from}::timestamptz at time zone 'UTC')::date`;
  return sql<{ place_version: string; distinct: number; ended: number; error_free: number }[]>`
    select place_version, coalesce(sum(n), 0)::float8 as distinct,
      coalesce(sum(n) filter (where ended_day >= ${day}), 0)::float8 as ended,
      coalesce(sum(n) filter (where ended_day >= ${day} and errored_day < ${day}), 0)::float8 as error_free
    from health_player_counts
    where project_id = ${projectId} and place_version = any(${versions}::text[]) and active_day >= ${day}
      ${envFilter(sql, "environment", f.environment)}
    group by place_version`;
}

/**
 * Histogram bins of the metrics over the window, per version and metric (and age bucket when
 * `byAge`): the window's whole UTC days from the day histograms, the hours before its first whole day
 * from the hour ones. Both read a metric's cells through an index that leads with the metric after the
 * project (migrations 132 and 133), so the cells of the other metrics are not visited.
 */
export async function histogram(sql: Sql, projectId: string, versions: string[], metrics: number[], f: HealthFilter, byAge = false) {
  const firstDay = new Date(Math.ceil(f.from.getTime() / 86_400_000) * 86_400_000);
  const env = (column: string) => envFilter(sql, column, f.environment);
  return sql<{ place_version: string; metric: number; age_bucket: number; bin: number; n: number }[]>`
    select place_version, metric, age_bucket, bin, sum(n)::float8 as n from (
      select place_version, metric, ${byAge ? sql`age_bucket` : sql`0`}::int as age_bucket, bin, n
      from health_hist_day
      where project_id = ${projectId} and metric = any(${metrics}::smallint[]) and place_version = any(${versions}::text[])
        and day >= ${firstDay.toISOString().slice(0, 10)}::date ${env("environment")}
      union all
      select place_version, metric, ${byAge ? sql`age_bucket` : sql`0`}::int as age_bucket, bin, n
      from health_hist_hour
      where project_id = ${projectId} and metric = any(${metrics}::smallint[]) and place_version = any(${versions}::text[])
        and hour >= ${f.from} and hour < ${firstDay} ${env("environment")}
    ) b
    group by 1, 2, 3, 4 order by 1, 2, 3, 4`;
}

/**
 * Error-level occurrences per version over the window: every occurrence received, throttled ones
 * included, from the drain's per-version hour cells (migration 120).
 */
export async function errorOccurrences(sql: Sql, projectId: string, versions: string[], f: HealthFilter) {
  return sql<{ place_version: string; errors: number }[]>`
    select version as place_version, sum(count)::float8 as errors
    from rollup_version_hour
    where project_id = ${projectId} and version = any(${versions}::text[]) and bucket >= ${f.from} and level = 'error'
      ${envFilter(sql, "environment", f.environment)}
    group by 1`;
}

export type SeriesPoint = {
  place_version: string;
  /** the point's step from the window's start: it spans the hours [from + k·step, from + (k+1)·step) */
  k: number;
  samples: number;
  player_minutes: number;
  all_samples: number;
  all_player_minutes: number;
  errors: number;
  /** whether the version sent a sample or had an error-level occurrence in one of the point's hours */
  reported: boolean;
};

/**
 * The versions' series over the window in steps of `stepHours` from its start, in one read: per step,
 * the version's samples and player-minutes and every version's (the shares' denominators), and the
 * version's error-level occurrences (the drain's hour cells). A step has a point for each version once
 * any version reported in one of its hours; an error counts in its hour when some version reported
 * health in that hour, as the hourly series always counted them.
 */
export async function versionSeries(sql: Sql, projectId: string, versions: string[], f: HealthFilter, stepHours: number) {
  const env = envFilter(sql, "environment", f.environment);
  return sql<SeriesPoint[]>`
    with h as (
      select hour, place_version, sum(samples) as samples, sum(player_minutes) as player_minutes
      from health_hour where project_id = ${projectId} and hour >= ${f.from} ${env}
      group by hour, place_version
    ), hours as (
      select hour, sum(samples) as all_samples, sum(player_minutes) as all_player_minutes from h group by hour
    ), e as (
      select version, bucket as hour, sum(count) as errors from rollup_version_hour
      where project_id = ${projectId} and version = any(${versions}::text[]) and bucket >= ${f.from} and level = 'error' ${env}
      group by 1, 2
    )
    select v.version as place_version, floor(extract(epoch from hours.hour - ${f.from}::timestamptz) / ${stepHours * 3600})::int as k,
      coalesce(sum(h.samples), 0)::float8 as samples, coalesce(sum(h.player_minutes), 0)::float8 as player_minutes,
      sum(hours.all_samples)::float8 as all_samples, sum(hours.all_player_minutes)::float8 as all_player_minutes,
      coalesce(sum(e.errors), 0)::float8 as errors, bool_or(coalesce(h.samples, 0) > 0 or e.hour is not null) as reported
    from hours cross join unnest(${versions}::text[]) v(version)
      left join h on h.hour = hours.hour and h.place_version = v.version
      left join e on e.hour = hours.hour and e.version = v.version
    group by 1, 2 order by 1, 2`;
}

export type ServerState = "live" | "ended" | "abnormal";
export type ServerFilter = { state?: ServerState; version?: string; limit: number; offset: number };

const stateWhere = (sql: Sql, state?: ServerState) =>
  state === "live"
    ? sql`and ended_at is null and lost_at is null`
    : state === "ended"
      ? sql`and ended_at is not null`
      : state === "abnormal"
        ? sql`and ended_at is null and lost_at is not null`
        : sql``;

/** Servers, live first, then by last report; with their error occurrences of the last 10 minutes. */
/** One game server as /api/v1/servers and the Live servers page show it (docs/api.md). */
export type ServerRow = {
  job_id: string;
  place_version: string;
  place_id: string | null;
  environment: string;
  state: ServerState;
  started_at: Date;
  ended_at: Date | null;
  /** when the server was declared ended abnormally (null unless state = abnormal) */
  lost_at: Date | null;
  close_reason: string | null;
  /** seconds from start to the end, to the last report of an abnormal end, or to now */
  uptime_s: number;
  /** of the latest sample */
  players: number | null;
  memory_mb: number | null;
  heartbeat_ms: number | null;
  /** occurrences of events with this job_id in the last 10 minutes */
  errors_10m: number;
  /** receive time of the latest report */
  last_seen: Date;
};

export async function listServers(sql: Sql, projectId: string, f: ServerFilter) {
  const where = sql`project_id = ${projectId} ${stateWhere(sql, f.state)} ${f.version === undefined ? sql`` : sql`and place_version = ${f.version}`}`;
  const [data, [{ total }]] = await Promise.all([
    sql<ServerRow[]>`
      with page as (
        select * from health_servers where ${where}
        order by (ended_at is null and lost_at is null) desc, last_seen desc, job_id
        limit ${f.limit} offset ${f.offset}
      ), errors as (
        -- one read of the last 10 minutes' events for the whole page (by the events' time index)
        select e.job_id, sum(e.count) as n from events e
        where e.project_id = ${projectId} and e."timestamp" >= now() - interval '10 minutes' and e.job_id in (select job_id from page)
        group by e.job_id
      )
      select p.job_id, p.place_version, p.place_id::text as place_id, p.environment,
        case when p.ended_at is not null then 'ended' when p.lost_at is not null then 'abnormal' else 'live' end as state,
        p.started_at, p.ended_at, p.lost_at, p.close_reason,
        greatest(0, floor(extract(epoch from coalesce(p.ended_at, case when p.lost_at is not null then p.last_seen end, now()) - p.started_at)))::float8 as uptime_s,
        p.players, p.memory_mb, p.heartbeat_ms,
        coalesce(x.n, 0)::float8 as errors_10m,
        p.last_seen
      from page p left join errors x on x.job_id = p.job_id
      order by (p.ended_at is null and p.lost_at is null) desc, p.last_seen desc, p.job_id`,
    sql<{ total: number }[]>`select count(*)::float8 as total from health_servers where ${where}`,
  ]);
  return { data, total: Number(total) };
}
