import type { Sql } from "../db/client.js";
import { compactHealthShards, loseServerTx, SAMPLE_INTERVAL_MS, silentServers, SILENT_INTERVALS } from "../db/health.js";
import { transaction } from "../db/transaction.js";

/** Held (session-level, try-only) while a run declares silent servers: one run at a time across instances. */
const HEALTH_JOB_LOCK = 727341;
/** Held while a run compacts the rollups' shards (its first run after an upgrade may take a minute or more). */
const COMPACTION_LOCK = 727342;

/**
 * Declares the servers that sent nothing for SILENT_INTERVALS sample intervals (and never an end)
 * ended abnormally, and ends their open player sessions with exit reason ServerLost
 * (db/health.ts loseServerTx). Runs every minute; a run that finds another one holding the lock
 * returns at once (each server is also re-checked under its own lock, so overlapping runs could not
 * count one twice either). Returns how many servers it declared, or null when another run held the lock.
 */
export async function runHealthJob(sql: Sql, opts: { now?: Date; batch?: number } = {}): Promise<number | null> {
  const conn = await sql.reserve();
  try {
    const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${HEALTH_JOB_LOCK}) as locked`;
    if (!locked) return null;
    try {
      const [{ now }] = opts.now ? [{ now: opts.now }] : await sql<{ now: Date }[]>`select now()`;
      const silentSince = new Date(now.getTime() - SILENT_INTERVALS * SAMPLE_INTERVAL_MS);
      let lost = 0;
      for (;;) {
        const servers = await silentServers(sql, silentSince, opts.batch ?? 1000);
        for (const s of servers) {
          if (await transaction(sql, (tx) => loseServerTx(tx, s.project_id, s.job_id, silentSince), { attempts: 3 })) lost++;
        }
        if (servers.length < (opts.batch ?? 1000)) break;
      }
      return lost;
    } finally {
      await conn`select pg_advisory_unlock(${HEALTH_JOB_LOCK})`;
    }
  } finally {
    conn.release();
  }
}

/**
 * Merges the shard rows of the closed hours and days of the health rollups (db/health.ts
 * compactHealthShards), one run at a time across instances; runs after each health job. Returns the
 * rows merged away, or null when another run held the lock.
 */
export async function runHealthCompaction(sql: Sql, now?: Date): Promise<number | null> {
  const conn = await sql.reserve();
  try {
    const [{ locked }] = await conn<{ locked: boolean }[]>`select pg_try_advisory_lock(${COMPACTION_LOCK}) as locked`;
    if (!locked) return null;
    try {
      return await compactHealthShards(sql, now);
    } finally {
      await conn`select pg_advisory_unlock(${COMPACTION_LOCK})`;
    }
  } finally {
    conn.release();
  }
}
