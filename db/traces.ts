/** Traces: the events that share a trace id, across issues. */
import type { Sql } from "./client.js";
import { EVENT_COLUMNS, cappedTotal, countUpTo, type ListTotal } from "./errors.js";

/**
 * The project's traces, newest first (by first event), paged. `first_message` is the issue of the
 * trace's earliest stored event, by event time and then id as the trace's page orders them
 * (`group_ids` is a set, in id order); null once the trace's events have expired. The total counts
 * traces up to TOTAL_CAP (db/errors.ts).
 */
export async function listTraces(sql: Sql, projectId: string, limit: number, offset: number): Promise<{ data: Record<string, unknown>[] } & ListTotal> {
  const [data, matches] = await Promise.all([
    sql`select t.trace_id, t.first_seen, t.last_seen, t.event_count, t.group_ids, g.message as first_message
        from (
          select * from traces where project_id = ${projectId}
          order by first_seen desc, trace_id desc limit ${limit} offset ${offset}
        ) t
        left join lateral (
          -- within the trace's span (its events' times), so only the day partitions it covers are read
          select e.group_id from events e where e.project_id = t.project_id and e.trace_id = t.trace_id
            and e."timestamp" >= t.first_seen and e."timestamp" <= t.last_seen
          order by e."timestamp", e.id limit 1
        ) fe on true
        left join error_groups g on g.project_id = t.project_id and g.id = fe.group_id
        order by t.first_seen desc, t.trace_id desc`,
    countUpTo(sql, sql`select 1 from traces where project_id = ${projectId} order by first_seen desc, trace_id desc`),
  ]);
  return { data, ...cappedTotal(matches) };
}

export async function getTrace(sql: Sql, projectId: string, traceId: string) {
  const [trace] = await sql`
    select trace_id, first_seen, last_seen, event_count, group_ids
    from traces where project_id = ${projectId} and trace_id = ${traceId}`;
  if (!trace) return undefined;
  const events = await sql`
    select ${EVENT_COLUMNS(sql)}, g.fingerprint from events e
    join error_groups g on g.project_id = e.project_id and g.id = e.group_id
    where e.project_id = ${projectId} and e.trace_id = ${traceId}
      -- the trace's span bounds its events, so only the day partitions it covers are read (a Date
      -- holds milliseconds: the stored microseconds of the last one are within the next millisecond)
      and e."timestamp" >= ${trace.first_seen} and e."timestamp" < ${trace.last_seen}::timestamptz + interval '1 millisecond'
    order by e."timestamp", e.id`;
  return { trace, events };
}
