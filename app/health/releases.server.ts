import type { Sql } from "../../db/client.js";
import { AGE_BUCKETS, binValue, METRIC } from "../../db/health-cells.js";
import {
  errorOccurrences,
  histogram,
  hourSums,
  listReleaseVersions,
  liveByVersion,
  openSessions,
  playerCounts,
  versionSeries,
  type HealthFilter,
} from "../../db/health-reads.js";
import { notFound } from "~/http.server";
import { fail, integer, oneOf, text } from "~/errors/params.server";

/**
 * Release health (docs/health.md, docs/api.md): the releases list with each version's `health`
 * over a window, and one version's series. The API routes and the Release health page call these.
 */

export const HEALTH_WINDOWS = { "24h": 24, "7d": 24 * 7, "30d": 24 * 30 } as const;
export type HealthWindow = keyof typeof HEALTH_WINDOWS;

/** 0..1, or null when there is nothing to divide by. */
export type Rate = number | null;

export type ReleaseHealth = {
  servers: { live: number; started: number; ended: number; abnormal: number; out_of_memory: number };
  players: { live: number; distinct: number; error_free: number; error_free_rate: Rate };
  sessions: { open: number; ended: number; error_free: number; error_free_rate: Rate };
  player_minutes: number;
  errors_per_1000_player_minutes: number | null;
  /** shares of the live servers and of their players now */
  adoption: { servers_share: Rate; players_share: Rate };
  memory_mb: { p50: number | null; p90: number | null };
  heartbeat_ms: { p50: number | null; p90: number | null };
};

export type ReleaseItem = {
  version: string;
  first_seen: Date;
  last_seen: Date;
  occurrences: number;
  issues: number;
  new_issues: number;
  regressions: number;
  per_hour: number;
  health: ReleaseHealth;
};

export type ReleasesAnswer = {
  data: ReleaseItem[];
  total: number;
  limit: number;
  offset: number;
  window: HealthWindow;
  environment: string | null;
};

export type AdoptionPoint = { at: Date; servers_share: Rate; players_share: Rate };
export type MemoryByAge = { age_minutes_from: number; age_minutes_to: number | null; memory_mb_p50: number | null; samples: number };
export type ErrorRatePoint = { at: Date; errors: number; player_minutes: number; errors_per_1000_player_minutes: number | null };

export type ReleaseDetail = {
  version: string;
  window: HealthWindow;
  environment: string | null;
  health: ReleaseHealth;
  adoption: AdoptionPoint[];
  memory_by_age: MemoryByAge[];
  errors_per_1000_player_minutes: ErrorRatePoint[];
};

export type HealthQuery = { window: HealthWindow; environment?: string; from: Date };

/** `window` (24h default) and `environment` of a query; the window starts on the hour. */
export function healthQuery(q: URLSearchParams, now = new Date()): HealthQuery {
  const window = (oneOf(q, "window", new Set(Object.keys(HEALTH_WINDOWS))) ?? "24h") as HealthWindow;
  const environment = text(q, "environment")?.trim() || undefined;
  if (environment && environment.length > 256) fail("environment", "must be at most 256 characters");
  const start = now.getTime() - HEALTH_WINDOWS[window] * 3_600_000;
  return { window, environment, from: new Date(Math.floor(start / 3_600_000) * 3_600_000) };
}

const rate = (n: number, d: number): Rate => (d > 0 ? n / d : null);
const round = (x: number | null, digits = 2) => (x === null ? null : Math.round(x * 10 ** digits) / 10 ** digits);

/** Percentiles of binned values: the middle of the bin holding the rank ceil(q·n) (1% bins). */
export function percentiles(bins: { bin: number; n: number }[], qs: number[]): (number | null)[] {
  const total = bins.reduce((s, b) => s + b.n, 0);
  if (total === 0) return qs.map(() => null);
  const sorted = [...bins].sort((a, b) => a.bin - b.bin);
  return qs.map((q) => {
    const rank = Math.max(1, Math.ceil(q * total));
    let seen = 0;
    for (const b of sorted) {
      seen += b.n;
      if (seen >= rank) return round(binValue(b.bin), 1);
    }
    return round(binValue(sorted[sorted.length - 1].bin), 1);
  });
}

/** Each version's health over the window (versions without data get zeros and nulls). */
export async function healthOf(sql: Sql, projectId: string, versions: string[], q: HealthQuery): Promise<Map<string, ReleaseHealth>> {
  const f: HealthFilter = { from: q.from, environment: q.environment };
  const [hours, live, open, players, bins, errors] = await Promise.all([
    hourSums(sql, projectId, versions, f),
    liveByVersion(sql, projectId, q.environment),
    openSessions(sql, projectId, versions, q.environment),
    playerCounts(sql, projectId, versions, f),
    histogram(sql, projectId, versions, [METRIC.memory_mb_any_age, METRIC.heartbeat_ms], f),
    errorOccurrences(sql, projectId, versions, f),
  ]);
  const memory = bins.filter((r) => r.metric === METRIC.memory_mb_any_age);
  const heartbeat = bins.filter((r) => r.metric === METRIC.heartbeat_ms);
  const liveServers = live.reduce((s, r) => s + r.servers, 0);
  const livePlayers = live.reduce((s, r) => s + r.players, 0);
  const out = new Map<string, ReleaseHealth>();
  for (const v of versions) {
    const h = hours.find((r) => r.place_version === v);
    const l = live.find((r) => r.place_version === v);
    const p = players.find((r) => r.place_version === v);
    const e = errors.find((r) => r.place_version === v);
    const [m50, m90] = percentiles(memory.filter((r) => r.place_version === v), [0.5, 0.9]);
    const [h50, h90] = percentiles(heartbeat.filter((r) => r.place_version === v), [0.5, 0.9]);
    const pm = h?.player_minutes ?? 0;
    const ended = h?.sessions_ended ?? 0;
    const errorFree = h?.sessions_error_free ?? 0;
    out.set(v, {
      servers: {
        live: l?.servers ?? 0,
        started: h?.servers_started ?? 0,
        ended: h?.servers_ended ?? 0,
        abnormal: h?.servers_abnormal ?? 0,
        out_of_memory: h?.servers_oom ?? 0,
      },
      players: {
        live: l?.players ?? 0,
        distinct: p?.distinct ?? 0,
        error_free: p?.error_free ?? 0,
        error_free_rate: rate(p?.error_free ?? 0, p?.ended ?? 0),
      },
      sessions: {
        open: open.find((r) => r.place_version === v)?.open ?? 0,
        ended,
        error_free: errorFree,
        error_free_rate: rate(errorFree, ended),
      },
      player_minutes: pm,
      errors_per_1000_player_minutes: pm > 0 ? round(((e?.errors ?? 0) / pm) * 1000, 3) : null,
      adoption: { servers_share: rate(l?.servers ?? 0, liveServers), players_share: rate(l?.players ?? 0, livePlayers) },
      memory_mb: { p50: m50, p90: m90 },
      heartbeat_ms: { p50: h50, p90: h90 },
    });
  }
  return out;
}

/** GET /api/v1/releases: the releases list (every field it had) with `health` per version. */
export async function releasesWithHealth(sql: Sql, projectId: string, q: URLSearchParams): Promise<ReleasesAnswer> {
  const limit = Math.min(100, integer(q, "limit", 50, 1));
  const offset = integer(q, "offset", 0, 0, 1_000_000);
  const hq = healthQuery(q);
  const { data, total } = await listReleaseVersions(sql, projectId, limit, offset);
  const health = await healthOf(
    sql,
    projectId,
    data.map((r) => r.version),
    hq,
  );
  return {
    data: data.map((r) => ({
      ...r,
      occurrences: Number(r.occurrences),
      issues: Number(r.issues),
      new_issues: Number(r.new_issues),
      regressions: Number(r.regressions),
      health: health.get(r.version)!,
    })),
    total,
    limit,
    offset,
    window: hq.window,
    environment: hq.environment ?? null,
  };
}

/**
 * GET /api/v1/releases/:version: one version's health and its series over the window. `known`: its
 * health over the same window and environment, already read (the page's list has it).
 */
export async function releaseDetail(
  sql: Sql,
  projectId: string,
  version: string | undefined,
  q: URLSearchParams,
  known?: ReleaseHealth,
  stepHours = 1,
): Promise<ReleaseDetail> {
  const [detail] = await releaseDetails(sql, projectId, [version ?? ""], q, known ? new Map([[(version ?? "").trim(), known]]) : undefined, stepHours);
  if (!detail) throw notFound("No release with that version in this project.");
  return detail;
}

/**
 * Several versions' details over the same window (the Release health page's compared versions), in
 * one read of each kind for all of them: the versions the project does not know are left out.
 * `known`: health already read over the same window and environment (a version in it is known to
 * exist: the page's list read it).
 */
export async function releaseDetails(
  sql: Sql,
  projectId: string,
  versions: string[],
  q: URLSearchParams,
  known = new Map<string, ReleaseHealth>(),
  stepHours = 1,
): Promise<ReleaseDetail[]> {
  // a NUL can name no stored version (and PostgreSQL refuses it in a query)
  const asked = [...new Set(versions.map((v) => v.trim()))].filter((v) => v && v.length <= 256 && !v.includes("\u0000"));
  if (!asked.length) return [];
  const hq = healthQuery(q);
  const f: HealthFilter = { from: hq.from, environment: hq.environment };
  const unsure = asked.filter((v) => !known.has(v));
  const found = unsure.length
    ? new Set(
        (
          await sql<{ v: string }[]>`
            select place_version as v from health_versions where project_id = ${projectId} and place_version = any(${unsure}::text[])
            union select version from group_versions where project_id = ${projectId} and version = any(${unsure}::text[])`
        ).map((r) => r.v),
      )
    : new Set<string>();
  const vs = asked.filter((v) => known.has(v) || found.has(v));
  if (!vs.length) return [];
  const unknown = vs.filter((v) => !known.has(v));
  const [health, series, byAge] = await Promise.all([
    unknown.length ? healthOf(sql, projectId, unknown, hq) : new Map<string, ReleaseHealth>(),
    versionSeries(sql, projectId, vs, f, stepHours),
    histogram(sql, projectId, vs, [METRIC.memory_mb], f, true),
  ]);
  const step = stepHours * 3_600_000;
  return vs.map((v) => {
    // each point sums its hours (a share of the sums, a rate of the sums), so a coarser step loses
    // resolution, never exactness
    const points = series.filter((p) => p.place_version === v).map((p) => ({ ...p, at: new Date(hq.from.getTime() + p.k * step) }));
    const bins = byAge.filter((r) => r.place_version === v);
    return {
      version: v,
      window: hq.window,
      environment: hq.environment ?? null,
      health: known.get(v) ?? health.get(v)!,
      adoption: points.map((h) => ({
        at: h.at,
        servers_share: rate(h.samples, h.all_samples),
        players_share: rate(h.player_minutes, h.all_player_minutes),
      })),
      memory_by_age: AGE_BUCKETS.map(([from, to], i) => {
        const age = bins.filter((r) => r.age_bucket === i);
        return { age_minutes_from: from, age_minutes_to: to, memory_mb_p50: percentiles(age, [0.5])[0], samples: age.reduce((s, b) => s + b.n, 0) };
      }),
      errors_per_1000_player_minutes: points
        .filter((h) => h.reported)
        .map((h) => ({
          at: h.at,
          errors: h.errors,
          player_minutes: h.player_minutes,
          errors_per_1000_player_minutes: h.player_minutes > 0 ? round((h.errors / h.player_minutes) * 1000, 3) : null,
        })),
    };
  });
}
