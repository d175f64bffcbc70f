import { asJson, type Sql, type TxSql } from "./client.js";

/**
 * A project's grouping rules (migration 117; matching in app/ingest/rules.server.ts).
 *
 * Invariant: a project's rules hold positions 0..n-1 without gaps or repeats, and a project holds at
 * most `max` rules. Every write that adds, moves or removes a rule runs under the project's
 * grouping-rules lock (a transaction-scoped advisory lock), counts and renumbers inside it, so two
 * concurrent creates cannot both take the 100th place and a move never leaves two rules at one
 * position.
 */

export type RuleMatch = { message?: string; message_regex?: string; path?: string; level?: "error" | "warn" | "info"; tag?: string };
export type RuleAction = "group" | "ignore";

export type RuleDefinition = { id: string; position: number; name: string | null; match: RuleMatch; action: RuleAction; fingerprint: string };

export type RuleRow = RuleDefinition & {
  created_at: Date;
  updated_at: Date;
  /** events the rule dropped (ignore rules), over the days kept */
  hits: number;
  hits_today: number;
  last_hit_at: Date | null;
};

const lock = (tx: TxSql, projectId: string) => tx`select pg_advisory_xact_lock(hashtextextended(${`grouping_rules:${projectId}`}, 0))`;

/** What ingest needs, in order. */
export function listRuleDefinitions(sql: Sql, projectId: string) {
  return sql<RuleDefinition[]>`
    select id, position, name, match, action, fingerprint from grouping_rules
    where project_id = ${projectId} order by position, id`;
}

const ruleColumns = (sql: Sql | TxSql, projectId: string) => sql`
  r.id, r.position, r.name, r.match, r.action, r.fingerprint, r.created_at, r.updated_at,
  coalesce(h.hits, 0)::int8 as hits, coalesce(h.hits_today, 0)::int8 as hits_today, h.last_hit_at
  from grouping_rules r
  left join lateral (
    select sum(x.hits) as hits, sum(x.hits) filter (where x.day = (now() at time zone 'utc')::date) as hits_today, max(x.last_hit) as last_hit_at
    from grouping_rule_hits x where x.project_id = ${projectId} and x.rule_id = r.id
  ) h on true`;

const numeric = (r: RuleRow): RuleRow => ({ ...r, hits: Number(r.hits), hits_today: Number(r.hits_today) });

export async function listRules(sql: Sql, projectId: string): Promise<RuleRow[]> {
  const rows = await sql<RuleRow[]>`select ${ruleColumns(sql, projectId)} where r.project_id = ${projectId} order by r.position, r.id`;
  return rows.map(numeric);
}

export async function getRule(sql: Sql | TxSql, projectId: string, id: string): Promise<RuleRow | undefined> {
  const [r] = await sql<RuleRow[]>`select ${ruleColumns(sql, projectId)} where r.project_id = ${projectId} and r.id = ${id}`;
  return r && numeric(r);
}

export class TooManyRules extends Error {
  constructor(readonly max: number) {
    super(`at most ${max} rules`);
  }
}

export type NewRule = { id: string; name: string | null; match: RuleMatch; action: RuleAction; fingerprint: string; position?: number };

/** Inserts a rule at `position` (default: last; past the end is last), moving later ones down; TooManyRules at `max`. */
export async function insertRule(sql: Sql, projectId: string, r: NewRule, max: number): Promise<RuleRow> {
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from grouping_rules where project_id = ${projectId}`;
    if (n >= max) throw new TooManyRules(max);
    const position = Math.min(r.position ?? n, n);
    await tx`update grouping_rules set position = position + 1 where project_id = ${projectId} and position >= ${position}`;
    await tx`
      insert into grouping_rules (project_id, id, position, name, match, action, fingerprint)
      values (${projectId}, ${r.id}, ${position}, ${r.name}, ${asJson(tx, r.match)}::jsonb, ${r.action}, ${r.fingerprint})`;
    return (await getRule(tx, projectId, r.id))!;
  });
}

/** Moves the rule to `to` (clamped to the list) within an open transaction holding the lock. */
async function move(tx: TxSql, projectId: string, id: string, to: number) {
  const [cur] = await tx<{ position: number; n: number }[]>`
    select position, (select count(*)::int from grouping_rules where project_id = ${projectId}) as n
    from grouping_rules where project_id = ${projectId} and id = ${id}`;
  if (!cur) return false;
  const target = Math.min(to, cur.n - 1);
  if (target === cur.position) return true;
  if (target < cur.position) {
    await tx`update grouping_rules set position = position + 1 where project_id = ${projectId} and position >= ${target} and position < ${cur.position}`;
  } else {
    await tx`update grouping_rules set position = position - 1 where project_id = ${projectId} and position > ${cur.position} and position <= ${target}`;
  }
  await tx`update grouping_rules set position = ${target} where project_id = ${projectId} and id = ${id}`;
  return true;
}

export type RuleChange = { name: string | null; match: RuleMatch; action: RuleAction; position?: number };

/** Replaces the rule's fields (and moves it when `position` is given); undefined when it is not in the project. */
export async function updateRule(sql: Sql, projectId: string, id: string, c: RuleChange): Promise<RuleRow | undefined> {
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    const updated = await tx`
      update grouping_rules set name = ${c.name}, match = ${asJson(tx, c.match)}::jsonb, action = ${c.action}, updated_at = now()
      where project_id = ${projectId} and id = ${id} returning id`;
    if (updated.length === 0) return undefined;
    if (c.position !== undefined) await move(tx, projectId, id, c.position);
    return getRule(tx, projectId, id);
  });
}

/** Puts the rules in the order of `ids`, which must name every rule of the project once; false otherwise. */
export async function reorderRules(sql: Sql, projectId: string, ids: string[]): Promise<boolean> {
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    const all = await tx<{ id: string }[]>`select id from grouping_rules where project_id = ${projectId}`;
    const have = new Set(all.map((r) => r.id));
    if (ids.length !== have.size || new Set(ids).size !== ids.length || !ids.every((id) => have.has(id))) return false;
    await tx`
      update grouping_rules r set position = o.ord - 1, updated_at = now()
      from unnest(${ids}::uuid[]) with ordinality as o(id, ord)
      where r.project_id = ${projectId} and r.id = o.id`;
    return true;
  });
}

/** Deletes the rule (its hit counts go with it) and closes the gap; false when it is not in the project. */
export async function deleteRule(sql: Sql, projectId: string, id: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    await lock(tx, projectId);
    const [gone] = await tx<{ position: number }[]>`delete from grouping_rules where project_id = ${projectId} and id = ${id} returning position`;
    if (!gone) return false;
    await tx`update grouping_rules set position = position - 1 where project_id = ${projectId} and position > ${gone.position}`;
    return true;
  });
}

/**
 * Adds ignore hits (per rule, at the request's receive time) to the rules' daily counts. A rule
 * deleted meanwhile is skipped (its counts are gone with it).
 */
export async function addRuleHits(sql: Sql, projectId: string, hits: { rule_id: string; n: number }[], at: Date): Promise<void> {
  if (hits.length === 0) return;
  await sql`
    insert into grouping_rule_hits as h (project_id, rule_id, day, hits, last_hit)
    select ${projectId}, i.rule_id, (${at}::timestamptz at time zone 'utc')::date, i.n, ${at}
    from json_to_recordset(${asJson(sql, hits)}::json) as i(rule_id uuid, n int)
    join grouping_rules r on r.project_id = ${projectId} and r.id = i.rule_id
    order by i.rule_id
    on conflict (project_id, rule_id, day) do update set hits = h.hits + excluded.hits, last_hit = greatest(h.last_hit, excluded.last_hit)`;
}

/**
 * The visible issue a fingerprint reaches: the group that has it (or the issue that group is merged
 * into), else the group it is an alias of; undefined when none has it yet.
 */
export async function issueOf(sql: Sql | TxSql, projectId: string, fingerprint: string): Promise<string | undefined> {
  const [r] = await sql<{ id: string }[]>`
    (select coalesce(g.merged_into, g.id) as id from error_groups g where g.project_id = ${projectId} and g.fingerprint = ${fingerprint})
    union all
    (select coalesce(g.merged_into, g.id) from group_aliases a join error_groups g on g.project_id = a.project_id and g.id = a.group_id
     where a.project_id = ${projectId} and a.fingerprint = ${fingerprint})
    limit 1`;
  return r?.id;
}

/** Titles the issue a rule's fingerprint reaches with the rule's name (null: the message's template again). */
export async function titleRuleIssue(sql: Sql, projectId: string, fingerprint: string, name: string | null): Promise<void> {
  await sql`
    update error_groups set title = ${name}
    where project_id = ${projectId} and title is distinct from ${name} and id = (
      (select coalesce(g.merged_into, g.id) from error_groups g where g.project_id = ${projectId} and g.fingerprint = ${fingerprint})
      union all
      (select coalesce(g.merged_into, g.id) from group_aliases a join error_groups g on g.project_id = a.project_id and g.id = a.group_id
       where a.project_id = ${projectId} and a.fingerprint = ${fingerprint})
      limit 1)`;
}

/** Sends a fingerprint's future events to `groupId` (a rule's issue made of an existing one). */
export async function aliasFingerprint(sql: Sql, projectId: string, fingerprint: string, groupId: string): Promise<void> {
  await sql`
    insert into group_aliases (project_id, fingerprint, group_id) values (${projectId}, ${fingerprint}, ${groupId})
    on conflict (project_id, fingerprint) do nothing`;
}

export type StoredEvent = { id: string; group_id: string; message: string; level: string; stack_trace: string | null; player_name: string | null; tags: string[] | null };

/** The project's latest stored events (by event time), what a rule's preview and apply look at. */
export function latestEvents(sql: Sql, projectId: string, limit: number) {
  return sql<StoredEvent[]>`
    select id::text as id, group_id, message, level, stack_trace, player_name, tags from events
    where project_id = ${projectId} order by "timestamp" desc, id desc limit ${limit}`;
}

export type IssueSummary = { id: string; message: string; title: string | null; status: string; count: number; first_seen: Date; created_at: Date; members: number };

/** The visible issues among `ids`, oldest first (first seen, then made). */
export async function issueSummaries(sql: Sql, projectId: string, ids: string[]): Promise<IssueSummary[]> {
  if (ids.length === 0) return [];
  const rows = await sql<IssueSummary[]>`
    select g.id, g.message, g.title, g.status, g.count::int8 as count, g.first_seen, g.created_at,
      (select count(*)::int from error_groups m where m.project_id = g.project_id and m.merged_into = g.id and not m.merged_own) as members
    from error_groups g
    where g.project_id = ${projectId} and g.id = any(${ids}::uuid[]) and g.merged_into is null
    order by g.first_seen, g.created_at, g.id`;
  return rows.map((r) => ({ ...r, count: Number(r.count) }));
}
