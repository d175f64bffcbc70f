import { asJson, type Sql, type TxSql } from "./client.js";

/**
 * The activity of an issue: what people did to it, written in the transaction that did it
 * (issue_activity), beside what the product already knows and is read where it lies: the first
 * occurrence (error_groups.first_seen), the latest regression (regressed_at, regressed_version), the
 * alerts sent (alert_deliveries), share links (share_links) and comments (issue_comments). Ingest
 * writes none of it.
 */
export type ActivityKind = "status" | "assigned" | "merged" | "unmerged";

/** Who did it: a user, or nobody (the product: a snooze that ran out, a grouping rule, a share link's editor). */
export type By = { actorId: string | null; via?: "share_link" | "grouping_rule" | "learned_template" | "snooze_ended" | "member_removed" | "merge" };

export type ActivityRow = { groupId: string; kind: ActivityKind; details: Record<string, unknown> };

export const NOBODY: By = { actorId: null };

/** Writes activity rows of one actor (in the caller's transaction: they stand or fall with the change). */
export async function recordActivity(sql: Sql | TxSql, projectId: string, by: By, rows: ActivityRow[]) {
  if (rows.length === 0) return;
  const via = by.via ? { via: by.via } : {};
  const items = rows.map((r) => ({ group_id: r.groupId, kind: r.kind, details: { ...r.details, ...via } }));
  await sql`
    insert into issue_activity (project_id, group_id, actor_id, kind, details)
    select ${projectId}, x.group_id, ${by.actorId}, x.kind, x.details
    from json_to_recordset(${asJson(sql as Sql, items)}::json) as x(group_id uuid, kind text, details jsonb)`;
}

export type Person = { id: string; email: string | null };

/** One entry of an issue's timeline, oldest first. `group_id` differs from the issue's own id for items of an issue merged into it. */
export type TimelineItem = { at: Date; group_id: string; actor: Person | null } & (
  | { type: "created"; version: string | null }
  | { type: "regressed"; version: string | null }
  | { type: "status"; from: string | null; to: string; version: string | null; snooze: Record<string, unknown> | null; via: string | null }
  | { type: "assigned"; to: Person | null; from: Person | null; via: string | null }
  | { type: "merged"; into: string | null; ids: string[]; via: string | null }
  | { type: "unmerged"; from: string | null; ids: string[] }
  | { type: "comment"; id: string; body: string; edited_at: Date | null }
  | { type: "share_created"; link_id: string; role: string }
  | { type: "share_revoked"; link_id: string; role: string }
  | { type: "alert_sent"; trigger: string; rule: string | null; channel: string | null }
);

/** The timeline keeps the newest this many entries of each kind of source. */
export const TIMELINE_LIMIT = 200;

/** What a timeline needs of its group's row (any read of the group that has these columns will do). */
export type TimelineGroup = { id: string; first_seen: Date; first_version: string | null; regressed_at: Date | null; regressed_version: string | null };

/**
 * One issue's timeline: its own entries and those of the issues merged into it, oldest first; of a
 * group already read from this project (the issue page and the timeline API have read it to check it).
 */
export async function timelineOf(sql: Sql, projectId: string, group: TimelineGroup): Promise<TimelineItem[]> {
  const groupId = group.id;
  const family = sql`(select ${groupId}::uuid union all select id from error_groups where project_id = ${projectId} and merged_into = ${groupId} and not merged_own)`;
  const newest = <T extends { at: Date }>(rows: T[]) => rows.reverse();
  const [activity, comments, links, alerts] = await Promise.all([
    sql<{ at: Date; group_id: string; actor_id: string | null; kind: ActivityKind; details: Record<string, any> }[]>`
      select created_at as at, group_id, actor_id, kind, details from issue_activity
      where project_id = ${projectId} and group_id in ${family} order by created_at desc, id desc limit ${TIMELINE_LIMIT}`,
    sql<{ at: Date; group_id: string; actor_id: string | null; id: string; body: string; edited_at: Date | null }[]>`
      select created_at as at, group_id, author_id as actor_id, id, body, edited_at from issue_comments
      where project_id = ${projectId} and group_id in ${family} order by created_at desc, id desc limit ${TIMELINE_LIMIT}`,
    sql<{ id: string; group_id: string; role: string; created_at: Date; created_by: string | null; revoked_at: Date | null; revoked_by: string | null }[]>`
      select id, group_id, role, created_at, created_by, revoked_at, revoked_by from share_links
      where project_id = ${projectId} and group_id in ${family} order by created_at desc, id limit ${TIMELINE_LIMIT}`,
    sql<{ at: Date; group_id: string; trigger: string; rule: string | null; channel: string | null }[]>`
      select d.created_at as at, d.group_id, d.trigger, r.name as rule, c.name as channel from alert_deliveries d
      left join alert_rules r on r.project_id = d.project_id and r.id = d.rule_id
      left join alert_channels c on c.project_id = d.project_id and c.id = d.channel_id
      where d.project_id = ${projectId} and d.group_id in ${family} and d.status = 'sent'
      order by d.created_at desc, d.id desc limit ${TIMELINE_LIMIT}`,
  ]);
  // every person named, read once
  const ids = new Set<string>();
  const add = (id: unknown) => typeof id === "string" && ids.add(id);
  for (const a of activity) {
    add(a.actor_id);
    // only an assignment's to and from are people (a status change's are statuses)
    if (a.kind === "assigned") {
      add(a.details.to);
      add(a.details.from);
    }
  }
  for (const c of comments) add(c.actor_id);
  for (const l of links) {
    add(l.created_by);
    add(l.revoked_by);
  }
  const emails = new Map(
    ids.size === 0 ? [] : (await sql<{ id: string; email: string }[]>`select id, email from users where id = any(${[...ids]}::uuid[])`).map((u) => [u.id, u.email]),
  );
  const person = (id: unknown): Person | null => (typeof id === "string" ? { id, email: emails.get(id) ?? null } : null);
  const str = (v: unknown) => (typeof v === "string" ? v : null);

  const items: TimelineItem[] = [{ type: "created", at: group.first_seen, group_id: groupId, actor: null, version: group.first_version }];
  if (group.regressed_at) items.push({ type: "regressed", at: group.regressed_at, group_id: groupId, actor: null, version: group.regressed_version });
  for (const a of newest(activity)) {
    const base = { at: a.at, group_id: a.group_id, actor: person(a.actor_id) };
    const d = a.details;
    if (a.kind === "status") items.push({ ...base, type: "status", from: str(d.from), to: String(d.to), version: str(d.version), snooze: d.snooze ?? null, via: str(d.via) });
    else if (a.kind === "assigned") items.push({ ...base, type: "assigned", to: person(d.to), from: person(d.from), via: str(d.via) });
    else if (a.kind === "merged") items.push({ ...base, type: "merged", into: str(d.into), ids: Array.isArray(d.ids) ? d.ids : [], via: str(d.via) });
    else items.push({ ...base, type: "unmerged", from: str(d.from), ids: Array.isArray(d.ids) ? d.ids : [] });
  }
  for (const c of newest(comments)) items.push({ type: "comment", at: c.at, group_id: c.group_id, actor: person(c.actor_id), id: c.id, body: c.body, edited_at: c.edited_at });
  for (const l of links) {
    items.push({ type: "share_created", at: l.created_at, group_id: l.group_id, actor: person(l.created_by), link_id: l.id, role: l.role });
    if (l.revoked_at) items.push({ type: "share_revoked", at: l.revoked_at, group_id: l.group_id, actor: person(l.revoked_by), link_id: l.id, role: l.role });
  }
  for (const d of newest(alerts)) items.push({ type: "alert_sent", at: d.at, group_id: d.group_id, actor: null, trigger: d.trigger, rule: d.rule, channel: d.channel });
  // stable: entries of the same instant keep the order above (created first)
  return items.map((x, i) => [x, i] as const).sort((a, b) => a[0].at.getTime() - b[0].at.getTime() || a[1] - b[1]).map(([x]) => x);
}
