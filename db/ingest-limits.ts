import { asJson, type Sql } from "./client.js";

/** A subject's usage in the current one-minute window, after adding this request's share. */
export type WindowUse = { used: number; retryAfter: number };

/**
 * Adds `n` to a subject's count in the current minute (PostgreSQL's clock, so every instance shares
 * the window) and answers the new count and the seconds until the window ends.
 */
export async function addToWindow(sql: Sql, projectId: string, subject: string, n: number): Promise<WindowUse> {
  const [r] = await sql<{ used: string; retry_after: number }[]>`
    insert into ingest_windows as w (project_id, subject, window_start, used)
    values (${projectId}, ${subject}, date_trunc('minute', now()), ${n})
    on conflict (project_id, subject, window_start) do update set used = w.used + excluded.used
    returning used, ceil(extract(epoch from window_start + interval '1 minute' - now()))::int as retry_after`;
  return { used: Number(r.used), retryAfter: Math.max(1, r.retry_after) };
}

/** Forgets windows and claims older than an hour (the hourly retention job). */
export async function pruneIngestWindows(sql: Sql): Promise<number> {
  const a = await sql`delete from ingest_windows where window_start < now() - interval '1 hour'`;
  const b = await sql`delete from new_issue_claims where window_start < now() - interval '1 hour'`;
  return a.count + b.count;
}

/**
 * Of these fingerprints (each would create a new issue), those allowed to in the project's current
 * minute: the ones already claimed in it, then new claims while fewer than `limit` exist. Runs under
 * a per-project advisory lock, so concurrent requests of one new error share its claim and no
 * window ever holds more than `limit`.
 */
export async function claimNewIssues(
  sql: Sql,
  projectId: string,
  fingerprints: string[],
  limit: number,
): Promise<{ granted: Set<string>; windowEnds: number }> {
  return sql.begin(async (tx) => {
    // pipelined: the lock, then the read, which runs once the lock is granted
    const locked = tx`select pg_advisory_xact_lock(hashtextextended(${`new-issues:${projectId}`}, 0))`.execute();
    const [, rows] = await Promise.all([
      locked,
      tx<{ fingerprint: string | null; claimed: number; window_start: Date }[]>`
        select c.fingerprint, n.claimed, m.window_start
        from (select date_trunc('minute', now()) as window_start) m
        cross join lateral (select count(*)::int as claimed from new_issue_claims
                            where project_id = ${projectId} and window_start = m.window_start) n
        left join new_issue_claims c on c.project_id = ${projectId} and c.window_start = m.window_start
          and c.fingerprint = any(${fingerprints}::text[])`,
    ]);
    const { claimed, window_start: windowStart } = rows[0];
    const granted = new Set(rows.flatMap((r) => (r.fingerprint === null ? [] : [r.fingerprint])));
    const room = Math.max(0, limit - claimed);
    const fresh = fingerprints.filter((fp) => !granted.has(fp)).slice(0, room);
    if (fresh.length > 0) {
      await tx`
        insert into new_issue_claims (project_id, window_start, fingerprint)
        select ${projectId}, ${windowStart}, fp from unnest(${fresh}::text[]) fp
        order by fp`;
      for (const fp of fresh) granted.add(fp);
    }
    return { granted, windowEnds: new Date(windowStart).getTime() + 60_000 };
  });
}

/**
 * Which of these fingerprints already reach a group of the project: their own, one they were
 * aliased to, or the group of one of their earlier grouping versions' fingerprints or of its alias (as
 * the write resolves them). The others would create a new issue.
 */
export async function existingFingerprints(sql: Sql, projectId: string, items: { fp: string; older: string[] }[]): Promise<Set<string>> {
  const rows = await sql<{ fp: string }[]>`
    select i.fp from json_to_recordset(${asJson(sql, items)}::json) as i(fp text, older text[])
    where exists (select 1 from error_groups g where g.project_id = ${projectId} and g.fingerprint = any(i.fp || i.older))
       or exists (select 1 from group_aliases a where a.project_id = ${projectId} and a.fingerprint = any(i.fp || i.older))`;
  return new Set(rows.map((r) => r.fp));
}

/**
 * Makes the project's catch-all group with its fixed message unless it exists, so events written
 * into it later only add to its counters (the write keeps a group's message).
 */
export async function ensureGroup(
  sql: Sql,
  g: { projectId: string; fingerprint: string; message: string; level: string; environment: string; timestamp: number },
): Promise<void> {
  const at = new Date(g.timestamp);
  await sql`
    insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment)
    values (${g.projectId}, ${g.fingerprint}, ${g.message}, ${g.level}, ${at}, ${at}, ${g.environment})
    on conflict (project_id, fingerprint) do nothing`;
}
