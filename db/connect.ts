import { createSql, type Sql } from "./client.js";
import { startEmbeddedPostgres, type EmbeddedServer } from "./embedded.js";
import { migrate } from "./migrate.js";
import { Replica } from "./replica.js";

/** The replica pool's `application_name`: how its sessions show in the standby's pg_stat_activity. */
export const REPLICA_APPLICATION_NAME = "roblox-monitor reads";

export type Database = {
  sql: Sql;
  url: string;
  embedded: EmbeddedServer | null;
  /** the streaming replica reads may go to (DATABASE_REPLICA_URL), or null: everything on `sql` */
  replica: Replica | null;
  /** Ends the pool (queries still running get `waitSeconds`, then their connections are closed) and stops the embedded server. */
  close: (opts?: { waitSeconds?: number }) => Promise<void>;
};

/**
 * Connects to DATABASE_URL, or starts the embedded server under the data directory when it is unset,
 * then applies pending migrations. A failed migration rejects, and the caller exits non-zero.
 */
export async function openDatabase(opts: {
  databaseUrl: string | undefined;
  dataDir: string;
  embeddedPort: number;
  poolSize: number;
  /** statement and lock timeout of the pool's connections (see createSql) */
  timeoutMs?: number;
  /** a streaming replica of `databaseUrl` for reads, and the lag past which it serves none */
  replica?: { url: string; maxLagMs: number };
}): Promise<Database> {
  const embedded = opts.databaseUrl ? null : await startEmbeddedPostgres(opts.dataDir, opts.embeddedPort === 0 ? "free" : opts.embeddedPort);
  const url = opts.databaseUrl ?? embedded!.url;
  const sql = createSql(url, opts.poolSize, { timeoutMs: opts.timeoutMs });
  try {
    await migrate(sql);
  } catch (err) {
    await sql.end({ timeout: 5 }).catch(() => {});
    await embedded?.stop().catch(() => {});
    throw err;
  }
  // Migrations ran on the primary above; the replica receives them by replication. An unreachable
  // replica does not stop the start: reads go to the primary until it answers.
  let replica: Replica | null = null;
  if (opts.replica) {
    const replicaSql = createSql(opts.replica.url, opts.poolSize, {
      timeoutMs: opts.timeoutMs,
      // a replica that does not answer is left for the primary soon, not after the primary's 10 s
      connectTimeoutSeconds: 3,
      applicationName: REPLICA_APPLICATION_NAME,
    });
    replica = new Replica(sql, replicaSql, opts.replica.maxLagMs);
    await replica.start();
  }
  return {
    sql,
    url,
    embedded,
    replica,
    close: async ({ waitSeconds = 5 } = {}) => {
      await replica?.close(waitSeconds);
      await sql.end({ timeout: waitSeconds });
      await embedded?.stop();
    },
  };
}

/** Whether the server runs autovacuum, which keeps the tables' planner statistics fresh. */
export async function autovacuumOn(sql: Sql): Promise<boolean> {
  const [{ on }] = await sql<{ on: boolean }[]>`select current_setting('autovacuum') = 'on' as on`;
  return on;
}
