import type { Sql } from "../db/client.js";

/**
 * Deletes raw events older than the retention period in bounded batches, keeping each group's
 * stored-row counter in step. Groups, traces and hourly rollups stay; minute rollups older than
 * two days are dropped because only the 1h and 24h windows read them.
 */
export async function runRetention(sql: Sql, retentionDays: number, batchSize = 5000): Promise<{ events: number; minuteRollups: number }> {
  let events = 0;
  for (;;) {
    const [{ n }] = await sql<{ n: number }[]>`
      with doomed as (
        select project_id, id, group_id from events
        where "timestamp" < now() - make_interval(days => ${retentionDays})
        limit ${batchSize}
      ), del as (
        delete from events e using doomed d
        where e.project_id = d.project_id and e.id = d.id
        returning e.project_id, e.group_id
      ), per_group as (
        select project_id, group_id, count(*) as n from del group by 1, 2
      ), locked as (
        -- lock in ingest's order (project, fingerprint) so retention and ingest cannot deadlock
        select g.project_id, g.id, p.n from error_groups g
        join per_group p on g.project_id = p.project_id and g.id = p.group_id
        order by g.project_id, g.fingerprint
        for update of g
      ), upd as (
        update error_groups g set stored_count = greatest(g.stored_count - l.n, 0)
        from locked l
        where g.project_id = l.project_id and g.id = l.id
      )
      select coalesce(sum(n), 0)::int as n from per_group`;
    events += n;
    if (n < batchSize) break;
  }
  const minute = await sql`delete from rollup_minute where bucket < now() - interval '2 days'`;
  return { events, minuteRollups: minute.count };
}
