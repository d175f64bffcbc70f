import type { Sql, TxSql } from "../db/client.js";

/** The day-partitioned tables: raw events by occurrence time, minute rollups by bucket. */
export const PARTITIONED = { events: "timestamp", rollup_minute: "bucket", health_samples: "at" } as const;
export type PartitionedTable = keyof typeof PARTITIONED;

/** How many days ahead of today the job keeps partitions ready. */
export const DAYS_AHEAD = 7;

// DDL on a partitioned table waits for the transactions using it; give up rather than hold ingest
// behind the lock queue, and try again on the next run
const LOCK_TIMEOUT = "5s";

/**
 * Creates the missing daily partitions from today to DAYS_AHEAD days ahead (UTC), so new rows never
 * land in the default partition. Idempotent; safe to run from several instances.
 */
export async function ensurePartitions(sql: Sql, daysAhead = DAYS_AHEAD): Promise<number> {
  let made = 0;
  for (const [table, column] of Object.entries(PARTITIONED)) {
    await sql.begin(async (tx) => {
      await tx`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`;
      const [{ n }] = await tx<{ n: number }[]>`
        select ensure_day_partitions(${table}, ${column}, (now() at time zone 'UTC')::date,
          (now() at time zone 'UTC')::date + ${daysAhead}::int) as n`;
      made += n;
    });
  }
  return made;
}

type DayPartition = { name: string; upper: Date; attached: boolean };

/**
 * The daily partitions of `table` (and tables left detached by an interrupted drop) whose whole day
 * is older than `cutoff`.
 */
async function expiredPartitions(sql: Sql, table: PartitionedTable, cutoff: Date): Promise<DayPartition[]> {
  const rows = await sql<{ name: string; attached: boolean }[]>`
    select c.relname as name, exists (select 1 from pg_inherits i where i.inhrelid = c.oid) as attached
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind = 'r' and c.relname ~ ${`^${table}_p[0-9]{8}$`}`;
  return rows
    .map((r) => {
      const d = r.name.slice(-8);
      const lower = Date.UTC(Number(d.slice(0, 4)), Number(d.slice(4, 6)) - 1, Number(d.slice(6, 8)));
      return { ...r, upper: new Date(lower + 86_400_000) };
    })
    .filter((p) => p.upper.getTime() <= cutoff.getTime())
    .sort((a, b) => a.name.localeCompare(b.name));
}

const isLockTimeout = (err: unknown) => (err as { code?: string }).code === "55P03";

/**
 * Drops the whole-day partitions of `table` older than `cutoff`. Each is first detached (a short
 * lock on the parent, holding nothing else), so no new row can reach it; then, in a second
 * transaction, `onDrop` sees its rows (to keep counters in step) and the table is dropped. A table
 * left detached by a crash between the two is finished on the next run. Returns the rows dropped.
 */
export async function dropExpiredPartitions(
  sql: Sql,
  table: PartitionedTable,
  cutoff: Date,
  onDrop?: (tx: TxSql, partition: string) => Promise<void>,
): Promise<number> {
  let rows = 0;
  for (const p of await expiredPartitions(sql, table, cutoff)) {
    if (p.attached) {
      try {
        await sql.begin(async (tx) => {
          await tx`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`;
          await tx.unsafe(`alter table ${table} detach partition ${p.name}`);
        });
      } catch (err) {
        if (isLockTimeout(err)) continue;
        throw err;
      }
    }
    await sql.begin(async (tx) => {
      const [{ n }] = await tx.unsafe<{ n: number }[]>(`select count(*)::int as n from ${p.name}`);
      if (onDrop) await onDrop(tx, p.name);
      await tx.unsafe(`drop table ${p.name}`);
      rows += n;
    });
  }
  return rows;
}
