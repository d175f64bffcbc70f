import { asJson, type Sql, type TxSql } from "./client.js";
import { listEnvironments } from "./dashboard.js";

/** Queries for alert channels, rules, per-(rule, group) state and the delivery log. All scoped by project. */

export type ChannelKind = "discord" | "slack" | "webhook" | "email";
export type Trigger =
  | "new_group"
  | "regression"
  | "frequency"
  | "economy_anomaly"
  | "supply_growth"
  | "error_rate"
  | "error_free_sessions"
  | "server_memory"
  | "server_heartbeat"
  | "out_of_memory"
  | "servers_drop";
/** the triggers about error groups (the others are about the economy: app/alerts/economy.server.ts) */
export const ERROR_TRIGGERS = ["new_group", "regression", "frequency"] as const;
export const ECONOMY_TRIGGERS = ["economy_anomaly", "supply_growth"] as const;
/** the triggers about release health (app/alerts/health.server.ts) */
export { HEALTH_TRIGGERS } from "./health-alerts.js";

export type ChannelRow = {
  project_id: string;
  id: string;
  name: string;
  kind: ChannelKind;
  /** null for email channels (they have recipients instead; migration 125) */
  url_sealed: Buffer | null;
  url_hint: string | null;
  secret_sealed: Buffer | null;
  /** email channels: the addresses alerts go to; empty for every other kind */
  recipients: string[];
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
};

export type RuleRow = RuleFields & { project_id: string; id: string; created_at: Date; updated_at: Date };

export type DeliveryRow = {
  id: number;
  created_at: Date;
  rule_id: string | null;
  rule_name: string | null;
  channel_id: string | null;
  channel_name: string | null;
  group_id: string | null;
  /** the issue's message, null for test sends and deleted issues */
  group_message: string | null;
  /** what an economy alert was about: `rise:<id>`, `unexplained:<id>`, `supply:<currency>:<day>`, or a summary's count */
  subject: string | null;
  /** the player and currency of an economy subject about one player (a rise, an unexplained gain) */
  subject_user_id: string | null;
  subject_currency: string | null;
  trigger: string;
  status: "sent" | "failed";
  response_code: number | null;
  error: string | null;
  attempts: number;
};

// ---- channels

export const listChannels = (sql: Sql, projectId: string) =>
  sql<ChannelRow[]>`select * from alert_channels where project_id = ${projectId} order by created_at, id`;

export async function getChannel(sql: Sql, projectId: string, id: string): Promise<ChannelRow | undefined> {
  const [c] = await sql<ChannelRow[]>`select * from alert_channels where project_id = ${projectId} and id = ${id}`;
  return c;
}

/** A channel by id alone (the test endpoint names only the channel; the caller checks the role). */
export async function findChannel(sql: Sql, id: string): Promise<ChannelRow | undefined> {
  const [c] = await sql<ChannelRow[]>`select * from alert_channels where id = ${id}`;
  return c;
}

export async function insertChannel(
  sql: Sql,
  c: { projectId: string; name: string; kind: ChannelKind; urlSealed: Buffer | null; urlHint: string | null; secretSealed: Buffer | null; recipients?: string[]; enabled: boolean },
): Promise<ChannelRow> {
  const [row] = await sql<ChannelRow[]>`
    insert into alert_channels (project_id, name, kind, url_sealed, url_hint, secret_sealed, recipients, enabled)
    values (${c.projectId}, ${c.name}, ${c.kind}, ${c.urlSealed}, ${c.urlHint}, ${c.secretSealed}, ${c.recipients ?? []}::text[], ${c.enabled})
    returning *`;
  return row;
}

export async function updateChannel(
  sql: Sql,
  projectId: string,
  id: string,
  patch: { name?: string; urlSealed?: Buffer; urlHint?: string; secretSealed?: Buffer; recipients?: string[]; enabled?: boolean },
): Promise<ChannelRow | undefined> {
  const [row] = await sql<ChannelRow[]>`
    update alert_channels set
      name = coalesce(${patch.name ?? null}, name),
      url_sealed = coalesce(${patch.urlSealed ?? null}::bytea, url_sealed),
      url_hint = coalesce(${patch.urlHint ?? null}, url_hint),
      secret_sealed = coalesce(${patch.secretSealed ?? null}::bytea, secret_sealed),
      recipients = coalesce(${patch.recipients ?? null}::text[], recipients),
      enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
      updated_at = now()
    where project_id = ${projectId} and id = ${id}
    returning *`;
  return row;
}

/** Deletes the channel and takes it out of every rule of the project, in one transaction. */
export async function deleteChannel(sql: Sql, projectId: string, id: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const del = await tx`delete from alert_channels where project_id = ${projectId} and id = ${id}`;
    if (del.count === 0) return false;
    await tx`update alert_rules set channel_ids = array_remove(channel_ids, ${id}::uuid), updated_at = now()
             where project_id = ${projectId} and ${id}::uuid = any(channel_ids)`;
    return true;
  });
}

/** How many of `ids` are channels of the project (rule targets must be). */
export async function countChannels(sql: Sql, projectId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const [{ n }] = await sql<{ n: number }[]>`
    select count(*)::int as n from alert_channels where project_id = ${projectId} and id = any(${ids}::uuid[])`;
  return n;
}

// ---- rules

export const listRules = (sql: Sql, projectId: string) =>
  sql<RuleRow[]>`select * from alert_rules where project_id = ${projectId} order by created_at, id`;

export const listEnabledRules = (sql: Sql, projectId: string, triggers: readonly Trigger[] = ERROR_TRIGGERS) =>
  sql<RuleRow[]>`select * from alert_rules where project_id = ${projectId} and enabled and cardinality(channel_ids) > 0
    and trigger = any(${triggers as Trigger[]}::text[]) order by id`;

/**
 * What the ingest trigger must enqueue for a project: nothing (no enabled rule with a channel),
 * only created or regressed groups (new_group/regression rules), or every touched group (frequency,
 * and rules with a player minimum or limited to server-origin issues: a group may pass them on any
 * later occurrence, when its Nth player or its first server event arrives).
 */
export async function enqueueMode(sql: Sql, projectId: string): Promise<"none" | "changes" | "all"> {
  const [r] = await sql<{ any: boolean; every: boolean }[]>`
    select count(*) > 0 as any, coalesce(bool_or(trigger = 'frequency' or min_players > 0 or server_only), false) as every
    from alert_rules where project_id = ${projectId} and enabled and cardinality(channel_ids) > 0
      and trigger = any(${ERROR_TRIGGERS as unknown as string[]}::text[])`;
  return !r.any ? "none" : r.every ? "all" : "changes";
}

export type RuleFields = {
  name: string;
  trigger: Trigger;
  threshold_count: number | null;
  window_minutes: number | null;
  levels: string[];
  environments: string[];
  message_contains: string | null;
  channel_ids: string[];
  cooldown_minutes: number;
  enabled: boolean;
  /** leave out issues every event of which was reported by a game client */
  server_only: boolean;
  /** fire only once the issue has this many distinct players (its user_count); 0: no minimum */
  min_players: number;
  /** economy triggers: a key of the project's currency map, null for any (each, for supply_growth) */
  currency: string | null;
  /** economy_anomaly: the smallest rise or unexplained gain that alerts (a decimal string), null for none */
  min_amount: string | null;
  /** supply_growth: alert when a currency's supply grows more than this percentage in a UTC day */
  growth_pct: string | null;
} & HealthRuleFields;

/** The thresholds of the health triggers (migration 119); null on every other rule. */
export type HealthRuleFields = {
  /** error_rate: errors per 1,000 player-minutes above this over `window_minutes` */
  errors_per_1000: number | null;
  /** error_rate: no verdict on a version with fewer player-minutes than this in the window */
  min_player_minutes: number | null;
  /** error_free_sessions: a new version's error-free session rate below this percentage */
  error_free_pct: number | null;
  /** error_free_sessions: once at least this many of its sessions ended */
  min_sessions: number | null;
  /** server_memory: a server's memory above this for `window_minutes` */
  memory_mb: number | null;
  /** server_heartbeat: a version's p90 heartbeat time above this for `window_minutes` */
  heartbeat_ms: number | null;
  /** servers_drop: the live server count down this percentage in 10 minutes */
  drop_pct: number | null;
  /** servers_drop: from at least this many live servers */
  min_servers: number | null;
};

export async function insertRule(sql: Sql, projectId: string, r: RuleFields): Promise<RuleRow> {
  const [row] = await sql<RuleRow[]>`
    insert into alert_rules (project_id, name, trigger, threshold_count, window_minutes, levels, environments,
      message_contains, channel_ids, cooldown_minutes, enabled, server_only, min_players, currency, min_amount, growth_pct,
      errors_per_1000, min_player_minutes, error_free_pct, min_sessions, memory_mb, heartbeat_ms, drop_pct, min_servers)
    values (${projectId}, ${r.name}, ${r.trigger}, ${r.threshold_count}, ${r.window_minutes}, ${r.levels}::text[],
      ${r.environments}::text[], ${r.message_contains}, ${r.channel_ids}::uuid[], ${r.cooldown_minutes}, ${r.enabled},
      ${r.server_only}, ${r.min_players}, ${r.currency}, ${r.min_amount}::numeric, ${r.growth_pct}::numeric,
      ${r.errors_per_1000}::float8, ${r.min_player_minutes}::int, ${r.error_free_pct}::float8, ${r.min_sessions}::int,
      ${r.memory_mb}::float8, ${r.heartbeat_ms}::float8, ${r.drop_pct}::float8, ${r.min_servers}::int)
    returning *`;
  return row;
}

export async function getRule(sql: Sql, projectId: string, id: string): Promise<RuleRow | undefined> {
  const [r] = await sql<RuleRow[]>`select * from alert_rules where project_id = ${projectId} and id = ${id}`;
  return r;
}

/**
 * What a health rule's open alerts were fired on: when any of these changes (or the rule is
 * disabled), the open alerts end without a message and what is still bad fires again under the new
 * condition (docs/health.md#alerts). Name, channels and cooldown leave them open.
 */
export const HEALTH_CONDITION_FIELDS = [
  "trigger",
  "threshold_count",
  "window_minutes",
  "environments",
  "errors_per_1000",
  "min_player_minutes",
  "error_free_pct",
  "min_sessions",
  "memory_mb",
  "heartbeat_ms",
  "drop_pct",
  "min_servers",
] as const satisfies readonly (keyof RuleFields)[];

/** A field's value as compared: PostgreSQL's numeric comes back as a string. */
const conditionValue = (v: unknown) => JSON.stringify(typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : (v ?? null));
const sameCondition = (a: RuleFields, b: RuleFields) => HEALTH_CONDITION_FIELDS.every((f) => conditionValue(a[f]) === conditionValue(b[f]));

/**
 * Replaces every field (the caller merged the patch into the current row and validated the result).
 * A rule disabled or given another condition loses its open health alerts in the same transaction.
 */
export async function replaceRule(sql: Sql, projectId: string, id: string, r: RuleFields): Promise<RuleRow | undefined> {
  return sql.begin(async (tx) => {
    const [before] = await tx<RuleRow[]>`select * from alert_rules where project_id = ${projectId} and id = ${id} for update`;
    if (!before) return undefined;
    const row = await updateRule(tx, projectId, id, r);
    if (row && (!row.enabled || !sameCondition(before, row))) {
      await tx`delete from health_alert_state where project_id = ${projectId} and rule_id = ${id} and recovered_at is null`;
    }
    return row;
  });
}

async function updateRule(sql: TxSql, projectId: string, id: string, r: RuleFields): Promise<RuleRow | undefined> {
  const [row] = await sql<RuleRow[]>`
    update alert_rules set name = ${r.name}, trigger = ${r.trigger}, threshold_count = ${r.threshold_count},
      window_minutes = ${r.window_minutes}, levels = ${r.levels}::text[], environments = ${r.environments}::text[],
      message_contains = ${r.message_contains}, channel_ids = ${r.channel_ids}::uuid[],
      cooldown_minutes = ${r.cooldown_minutes}, enabled = ${r.enabled}, server_only = ${r.server_only},
      min_players = ${r.min_players}, currency = ${r.currency}, min_amount = ${r.min_amount}::numeric,
      growth_pct = ${r.growth_pct}::numeric, errors_per_1000 = ${r.errors_per_1000}::float8,
      min_player_minutes = ${r.min_player_minutes}::int, error_free_pct = ${r.error_free_pct}::float8, min_sessions = ${r.min_sessions}::int,
      memory_mb = ${r.memory_mb}::float8, heartbeat_ms = ${r.heartbeat_ms}::float8, drop_pct = ${r.drop_pct}::float8,
      min_servers = ${r.min_servers}::int, updated_at = now()
    where project_id = ${projectId} and id = ${id}
    returning *`;
  return row;
}

export async function deleteRule(sql: Sql, projectId: string, id: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const del = await tx`delete from alert_rules where project_id = ${projectId} and id = ${id}`;
    await tx`delete from alert_state where project_id = ${projectId} and rule_id = ${id}`;
    await tx`delete from economy_alert_claims where project_id = ${projectId} and rule_id = ${id}`;
    await tx`delete from health_alert_state where project_id = ${projectId} and rule_id = ${id}`;
    return del.count > 0;
  });
}

// ---- evaluation

export type AlertGroup = {
  id: string;
  fingerprint: string;
  message: string;
  level: string;
  status: string;
  environment: string;
  culprit: string | null;
  count: number;
  /** distinct players over all occurrences */
  user_count: number;
  /** every event was reported by a game client */
  client_only: boolean;
  first_seen: Date;
  last_seen: Date;
  created_at: Date;
  regressed_at: Date | null;
  /** a named grouping rule's title for its issue, else null */
  title: string | null;
  /** the email of the member the issue is assigned to (a merged group: the issue it is in), else null */
  assignee: string | null;
};

export const groupsByFingerprint = (sql: Sql, projectId: string, fingerprints: string[]) =>
  sql<AlertGroup[]>`
    select g.id, g.fingerprint, g.message, g.level, g.status, g.environment, g.culprit, g.count, g.user_count::int, g.client_only,
      g.first_seen, g.last_seen, g.created_at, g.regressed_at, g.title, u.email as assignee
    from error_groups g
    left join error_groups p on p.project_id = g.project_id and p.id = g.merged_into
    left join users u on u.id = coalesce(p.assignee_id, g.assignee_id)
    where g.project_id = ${projectId} and g.fingerprint = any(${fingerprints}::text[])
    order by g.fingerprint`;

/** Occurrences per group within the last `minutes` minutes (by occurrence time, from the minute rollups). */
export async function windowCounts(sql: Sql, projectId: string, groupIds: string[], minutes: number): Promise<Map<string, number>> {
  const rows = await sql<{ group_id: string; n: number }[]>`
    select group_id, sum(count)::bigint as n from rollup_minute
    where project_id = ${projectId} and group_id = any(${groupIds}::uuid[])
      and bucket >= date_trunc('minute', now()) - make_interval(mins => ${minutes - 1})
    group by group_id`;
  return new Map(rows.map((r) => [r.group_id, Number(r.n)]));
}

/**
 * Claims the right to send `rule`'s alert for these groups, atomically: a first alert inserts the
 * state row; a later one updates it only when the cooldown has passed and (regressions) the
 * regression is newer than the one last alerted. new_group never re-fires. Returns the claimed ids.
 */
export async function claimAlerts(
  sql: Sql,
  projectId: string,
  rule: { id: string; trigger: Trigger; cooldown_minutes: number },
  claims: { groupId: string; mark: Date | null }[],
): Promise<Set<string>> {
  if (claims.length === 0) return new Set();
  const sorted = [...claims].sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
  const rows = await sql<{ group_id: string }[]>`
    insert into alert_state as s (project_id, rule_id, group_id, last_sent, mark)
    select ${projectId}, ${rule.id}, g, now(), m
    from unnest(${sorted.map((c) => c.groupId)}::uuid[], ${sorted.map((c) => c.mark?.toISOString() ?? null)}::timestamptz[]) as t(g, m)
    order by g
    on conflict (project_id, rule_id, group_id) do update set last_sent = now(), mark = excluded.mark
    where ${rule.trigger !== "new_group"}
      and s.last_sent <= now() - make_interval(mins => ${rule.cooldown_minutes})
      and (excluded.mark is null or s.mark is null or s.mark < excluded.mark)
    returning group_id`;
  return new Set(rows.map((r) => r.group_id));
}

/**
 * Regressions that were not claimed (inside the cooldown) are still recorded as seen, so the alert
 * does not go out late, on some later event after the cooldown, for a regression long past.
 */
export async function markRegressionsSeen(sql: Sql, projectId: string, ruleId: string, seen: { groupId: string; mark: Date }[]): Promise<void> {
  if (seen.length === 0) return;
  const sorted = [...seen].sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
  await sql`
    update alert_state s set mark = t.m
    from unnest(${sorted.map((c) => c.groupId)}::uuid[], ${sorted.map((c) => c.mark.toISOString())}::timestamptz[]) as t(g, m)
    where s.project_id = ${projectId} and s.rule_id = ${ruleId} and s.group_id = t.g and (s.mark is null or s.mark < t.m)`;
}

/** The newest stored event's stack trace per group, for the alert body. */
export async function latestStackTraces(sql: Sql, projectId: string, groupIds: string[]): Promise<Map<string, string>> {
  if (groupIds.length === 0) return new Map();
  const rows = await sql<{ group_id: string; stack_trace: string | null }[]>`
    select g.id as group_id, e.stack_trace
    from unnest(${groupIds}::uuid[]) as g(id)
    cross join lateral (
      select stack_trace from events where project_id = ${projectId} and group_id = g.id
      order by "timestamp" desc, id desc limit 1) e`;
  return new Map(rows.filter((r) => r.stack_trace).map((r) => [r.group_id, r.stack_trace!]));
}

export async function projectName(sql: Sql, projectId: string): Promise<string | undefined> {
  const [p] = await sql<{ name: string }[]>`select name from projects where id = ${projectId}`;
  return p?.name;
}

// ---- delivery log

export type NewDelivery = {
  projectId: string;
  ruleId: string | null;
  channelId: string;
  groupId: string | null;
  /** economy alerts: what the alert was about (see DeliveryRow) */
  subject?: string | null;
  trigger: string;
  status: "sent" | "failed";
  responseCode: number | null;
  error: string | null;
  attempts: number;
};

export async function insertDeliveries(sql: Sql, rows: NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into alert_deliveries (project_id, rule_id, channel_id, group_id, subject, trigger, status, response_code, error, attempts)
    select "projectId", "ruleId", "channelId", "groupId", subject, trigger, status, "responseCode", error, attempts
    from json_to_recordset(${asJson(sql, rows)}::json) as t(
      "projectId" uuid, "ruleId" uuid, "channelId" uuid, "groupId" uuid, subject text, trigger text, status text,
      "responseCode" int, error text, attempts int)`;
}

export const listDeliveries = (sql: Sql, projectId: string, limit: number, beforeId?: number) =>
  sql<DeliveryRow[]>`
    select d.id, d.created_at, d.rule_id, r.name as rule_name, d.channel_id, c.name as channel_name, d.group_id,
      g.message as group_message, d.subject, e.user_id as subject_user_id, e.currency as subject_currency, d.trigger, d.status, d.response_code, d.error, d.attempts
    from alert_deliveries d
    left join error_groups g on g.project_id = d.project_id and g.id = d.group_id
    left join alert_rules r on r.project_id = d.project_id and r.id = d.rule_id
    left join alert_channels c on c.project_id = d.project_id and c.id = d.channel_id
    left join lateral (
      select r.user_id::text as user_id, r.currency from economy_rises r
      where r.project_id = d.project_id and r.id = case when d.subject like 'rise:%' then substr(d.subject, 6)::bigint end
      union all
      select u.user_id::text, u.currency from economy_unexplained u
      where u.project_id = d.project_id and u.id = case when d.subject like 'unexplained:%' then substr(d.subject, 13)::bigint end
      limit 1) e on true
    where d.project_id = ${projectId} ${beforeId ? sql`and d.id < ${beforeId}` : sql``}
    order by d.id desc
    limit ${limit}`;

// ---- what a rule's environment filter can pick from

/**
 * The environments the project's data has seen: those of its issues (every event's, by name) and
 * those of its game servers' health reports in the last 30 days, sorted, at most `limit`.
 */
export async function knownEnvironments(sql: Sql, projectId: string, limit = 100): Promise<string[]> {
  const [errors, health] = await Promise.all([
    listEnvironments(sql, projectId, limit),
    sql<{ environment: string }[]>`
      select distinct environment from health_servers
      where project_id = ${projectId} and last_seen > now() - interval '30 days'
      order by environment limit ${limit}`,
  ]);
  return [...new Set([...errors, ...health.map((r) => r.environment)])].sort().slice(0, limit);
}
