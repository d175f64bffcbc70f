import { asJson, type Sql } from "./client.js";

/**
 * Queries of the health alerts (app/alerts/health.server.ts): the figures each trigger watches, read
 * from the health tables of migration 118, and the per-(rule, subject) state of migration 119 that
 * makes each condition fire once and recover once. All scoped by project; `envs` empty means every
 * environment. Minute ranges are [from, to): whole minutes by the samples' own time.
 */

export const HEALTH_TRIGGERS = ["error_rate", "error_free_sessions", "server_memory", "server_heartbeat", "out_of_memory", "servers_drop"] as const;
export type HealthTrigger = (typeof HEALTH_TRIGGERS)[number];

const envIn = (sql: Sql, column: string, envs: string[]) => (envs.length === 0 ? sql`` : sql`and ${sql(column)} = any(${envs}::text[])`);

/** Projects with an enabled health rule that has a channel (what the minute's pass evaluates). */
export async function projectsWithHealthRules(sql: Sql): Promise<string[]> {
  const rows = await sql<{ project_id: string }[]>`
    select distinct project_id from alert_rules
    where enabled and cardinality(channel_ids) > 0 and trigger = any(${HEALTH_TRIGGERS as unknown as string[]}::text[])`;
  return rows.map((r) => r.project_id);
}

/**
 * Per version over [from, to): player-minutes (the samples' players) and error-level occurrences, every
 * one received, throttled ones included (rollup_version_minute, kept by the counter drain: a read
 * sees what was received up to the staleness bound before it, and the minute job reads a minute
 * behind).
 */
export async function errorRates(sql: Sql, projectId: string, from: Date, to: Date, envs: string[]) {
  return sql<{ place_version: string; player_minutes: number; errors: number }[]>`
    with pm as (
      select place_version, sum(player_minutes)::float8 as player_minutes from health_minute
      where project_id = ${projectId} and minute >= ${from} and minute < ${to} ${envIn(sql, "environment", envs)}
      group by place_version
    ), ev as (
      select version as place_version, sum(count)::float8 as errors from rollup_version_minute
      where project_id = ${projectId} and bucket >= ${from} and bucket < ${to}
        and version = any(select place_version from pm) ${envIn(sql, "environment", envs)}
      group by version
    )
    select pm.place_version, pm.player_minutes, coalesce(ev.errors, 0)::float8 as errors
    from pm left join ev on ev.place_version = pm.place_version`;
}

/**
 * Sessions ended and error-free per version over its whole life (every hour of its rollups),
 * for the versions first seen at or after `newSince` and the `also` versions (open alerts).
 */
export async function versionSessions(sql: Sql, projectId: string, newSince: Date, also: string[], envs: string[]) {
  return sql<{ place_version: string; first_seen: Date; ended: number; error_free: number }[]>`
    select v.place_version, v.first_seen, coalesce(sum(h.sessions_ended), 0)::float8 as ended,
      coalesce(sum(h.sessions_error_free), 0)::float8 as error_free
    from health_versions v
    left join health_hour h on h.project_id = v.project_id and h.place_version = v.place_version ${envIn(sql, "h.environment", envs)}
    where v.project_id = ${projectId} and (v.first_seen >= ${newSince} or v.place_version = any(${also}::text[]))
    group by v.place_version, v.first_seen`;
}

export type ServerMemory = {
  job_id: string;
  place_version: string;
  environment: string;
  live: boolean;
  close_reason: string | null;
  /** minutes of [from, to) with a sample, the lowest and highest memory there, and the latest sample's */
  minutes: number;
  min_mb: number | null;
  max_mb: number | null;
  last_mb: number | null;
};

/** Per server with a sample in [from, to), or named in `also` (open alerts): its memory over the range and whether it is live. */
export async function serverMemory(sql: Sql, projectId: string, from: Date, to: Date, also: string[], envs: string[]) {
  return sql<ServerMemory[]>`
    with s as (
      select job_id, count(distinct date_trunc('minute', at))::int as minutes, min(memory_mb)::float8 as min_mb,
        max(memory_mb)::float8 as max_mb, (array_agg(memory_mb order by at desc))[1]::float8 as last_mb
      from health_samples
      where project_id = ${projectId} and at >= ${from} and at < ${to} ${envIn(sql, "environment", envs)}
      group by job_id
    )
    select v.job_id, v.place_version, v.environment, (v.ended_at is null and v.lost_at is null) as live, v.close_reason,
      coalesce(s.minutes, 0) as minutes, s.min_mb, s.max_mb, s.last_mb
    from health_servers v left join s on s.job_id = v.job_id
    where v.project_id = ${projectId} and (s.job_id is not null or v.job_id = any(${also}::text[]))`;
}

/** Per version and minute of [from, to): the p90 of the samples' heartbeat time (nearest rank) and how many samples. */
export async function heartbeatP90(sql: Sql, projectId: string, from: Date, to: Date, envs: string[]) {
  return sql<{ place_version: string; minute: Date; p90: number; samples: number }[]>`
    select place_version, date_trunc('minute', at) as minute,
      percentile_disc(0.9) within group (order by heartbeat_ms)::float8 as p90, count(*)::int as samples
    from health_samples
    where project_id = ${projectId} and at >= ${from} and at < ${to} ${envIn(sql, "environment", envs)}
    group by 1, 2 order by 1, 2`;
}

/** Per version: servers that closed with OutOfMemory at or after `since` (the newest first, up to 10 named). */
export async function outOfMemoryCloses(sql: Sql, projectId: string, since: Date, envs: string[]) {
  return sql<{ place_version: string; closes: number; job_ids: string[]; last_at: Date }[]>`
    select place_version, count(*)::int as closes, (array_agg(job_id order by ended_at desc, job_id))[1:10] as job_ids, max(ended_at) as last_at
    from health_servers
    where project_id = ${projectId} and close_reason = 'OutOfMemory' and ended_at >= ${since} ${envIn(sql, "environment", envs)}
    group by place_version`;
}

/** Live servers per minute of [from, to): servers with a sample in that minute (docs/health.md, adoption). */
export async function liveServersPerMinute(sql: Sql, projectId: string, from: Date, to: Date, envs: string[]) {
  return sql<{ minute: Date; servers: number }[]>`
    select date_trunc('minute', at) as minute, count(distinct job_id)::int as servers
    from health_samples
    where project_id = ${projectId} and at >= ${from} and at < ${to} ${envIn(sql, "environment", envs)}
    group by 1 order by 1`;
}

// ---- state

export type HealthAlertState = { subject: string; fired_at: Date; recovered_at: Date | null; fired: Record<string, unknown> };

/** The subjects a rule has fired on and not recovered from. */
export async function openStates(sql: Sql, projectId: string, ruleIds: string[]): Promise<Map<string, HealthAlertState[]>> {
  const out = new Map<string, HealthAlertState[]>();
  if (ruleIds.length === 0) return out;
  const rows = await sql<(HealthAlertState & { rule_id: string })[]>`
    select rule_id, subject, fired_at, recovered_at, fired from health_alert_state
    where project_id = ${projectId} and rule_id = any(${ruleIds}::uuid[]) and recovered_at is null`;
  for (const r of rows) out.set(r.rule_id, [...(out.get(r.rule_id) ?? []), r]);
  return out;
}

/**
 * Claims the "fired" message of each subject: a first firing inserts the row; a subject that
 * recovered fires again only once the rule's cooldown has passed since the recovery; an open one never.
 * One statement, so of two passes at once only one gets each subject. Returns the claimed subjects.
 */
export async function claimFired(
  sql: Sql,
  projectId: string,
  rule: { id: string; cooldown_minutes: number },
  at: Date,
  fired: { subject: string; facts: Record<string, unknown> }[],
): Promise<Set<string>> {
  if (fired.length === 0) return new Set();
  const sorted = [...fired].sort((a, b) => (a.subject < b.subject ? -1 : 1));
  const rows = await sql<{ subject: string }[]>`
    insert into health_alert_state as s (project_id, rule_id, subject, fired_at, fired)
    select ${projectId}, ${rule.id}, subject, ${at}, facts
    from jsonb_to_recordset(${asJson(sql, sorted)}::jsonb) as t(subject text, facts jsonb)
    order by subject
    on conflict (project_id, rule_id, subject) do update set fired_at = excluded.fired_at, recovered_at = null, fired = excluded.fired
    where s.recovered_at is not null and s.recovered_at <= excluded.fired_at - make_interval(mins => ${rule.cooldown_minutes})
    returning subject`;
  return new Set(rows.map((r) => r.subject));
}

/** Claims the "recovered" message of each open subject; returns what each had fired with, and when. */
export async function claimRecovered(sql: Sql, projectId: string, ruleId: string, at: Date, subjects: string[]): Promise<HealthAlertState[]> {
  if (subjects.length === 0) return [];
  return sql<HealthAlertState[]>`
    update health_alert_state set recovered_at = ${at}
    where project_id = ${projectId} and rule_id = ${ruleId} and subject = any(${[...new Set(subjects)].sort()}::text[]) and recovered_at is null
    returning subject, fired_at, recovered_at, fired`;
}

