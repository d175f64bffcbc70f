import type { Sql } from "../db/client.js";
import { holdDrainLock } from "../db/counter-deltas.js";
import { addToMessages, pruneMessages } from "../db/event-messages.js";
import { dropExpiredPartitions } from "./partitions.js";
import { pruneHealth } from "../db/health.js";

/**
 * Raw events older than the retention period go: whole days at a time by dropping their daily
 * partitions (no row deletes, no vacuum work), and the few rows in the default partition (late events
 * older than every partition) by deletes in bounded batches. Each group's stored-row counter follows.
 * Groups, traces, hourly and daily rollups stay; minute rollups older than two days are dropped the same way,
 * because only the 1h and 24h windows read them.
 *
 * Pending deferred counters (db/counter-deltas.ts) need nothing from it: retention moves no counter
 * between groups, and a minute cell older than two days that a drain applies after a run is what a
 * late event written just after it would leave (in the default partition): the next run deletes it,
 * and no read looks that far back in minute rollups. Each transaction that changes rows the drain
 * also writes (group rows' stored counts, texts) takes the drain's lock first, in the drain's lock order.
 *
 * A day's partition goes once the whole day is past the period, so raw events are kept for the
 * period plus at most one day.
 */
export async function runRetention(sql: Sql, retentionDays: number, batchSize = 5000): Promise<{ events: number; minuteRollups: number }> {
  const [{ now }] = await sql<{ now: Date }[]>`select now()`;
  const eventCutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let events = await dropExpiredPartitions(sql, "events", eventCutoff, async (tx, partition) => {
    // the detached day read once, before the drain's lock: a drain waits only for the updates
    await tx`
      create temporary table dropped_events on commit drop as
      select project_id, group_id, coalesce(origin_group_id, group_id) as own_id, message, count(*) as n
      from ${tx(partition)} group by 1, 2, 3, 4`;
    await holdDrainLock(tx);
    await tx`
      with per_group as (
        select project_id, group_id, sum(n) as n from dropped_events group by 1, 2
      ), locked as (
        -- lock in ingest's order (project, fingerprint) so retention and ingest cannot deadlock
        select g.project_id, g.id, p.n from error_groups g
        join per_group p on g.project_id = p.project_id and g.id = p.group_id
        order by g.project_id, g.fingerprint
        for update of g
      )
      update error_groups g set stored_count = greatest(g.stored_count - l.n, 0)
      from locked l
      where g.project_id = l.project_id and g.id = l.id`;
    await tx`${addToMessages(tx, tx`select project_id, own_id as group_id, message, -n as n from dropped_events`)}`;
  });
  for (;;) {
    const [{ n }] = await sql.begin(async (tx) => {
      await holdDrainLock(tx);
      return tx<{ n: number }[]>`
        with doomed as (
          select project_id, id, "timestamp" from events_default
          where "timestamp" < ${eventCutoff}
          limit ${batchSize}
        ), del as (
          delete from events_default e using doomed d
          where e.project_id = d.project_id and e.id = d.id and e."timestamp" = d."timestamp"
          returning e.project_id, e.group_id, e.origin_group_id, e.message
        ), texts as (${addToMessages(tx, tx`select project_id, coalesce(origin_group_id, group_id) as group_id, message, -1 as n from del`)}
        ), per_group as (
          select project_id, group_id, count(*) as n from del group by 1, 2
        ), locked as (
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
    });
    events += n;
    if (n < batchSize) break;
  }
  // texts whose last stored event went (the default partition's deletes leave them at zero)
  await sql.begin(async (tx) => {
    await holdDrainLock(tx);
    await pruneMessages(tx);
  });
  const minuteCutoff = new Date(now.getTime() - 2 * 86_400_000);
  let minuteRollups = await dropExpiredPartitions(sql, "rollup_minute", minuteCutoff);
  minuteRollups += (await sql`delete from rollup_minute_default where bucket < ${minuteCutoff}`).count;
  return { events, minuteRollups };
}

/**
 * Release health data older than the retention period goes like raw events (docs/health.md): health
 * samples by whole days (their daily partitions), and the default partition's samples, player
 * sessions, servers and the health rollups in bounded batches (db/health.ts pruneHealth).
 */
export async function runHealthRetention(sql: Sql, retentionDays: number, batchSize = 5000): Promise<Record<string, number>> {
  const [{ cutoff }] = await sql<{ cutoff: Date }[]>`select now() - make_interval(days => ${retentionDays}) as cutoff`;
  const partitions = await dropExpiredPartitions(sql, "health_samples", cutoff);
  const deleted = await pruneHealth(sql, retentionDays, batchSize);
  return { ...deleted, samples: deleted.samples + partitions };
}
