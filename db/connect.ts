import { createSql, type Sql } from "./client.js";
import { startEmbeddedPostgres, type EmbeddedServer } from "./embedded.js";
import { migrate } from "./migrate.js";

export type Database = {
  sql: Sql;
  url: string;
  embedded: EmbeddedServer | null;
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
}): Promise<Database> {
  const embedded = opts.databaseUrl ? null : await startEmbeddedPostgres(opts.dataDir, opts.embeddedPort);
  const url = opts.databaseUrl ?? embedded!.url;
  const sql = createSql(url, opts.poolSize, { timeoutMs: opts.timeoutMs });
  try {
    await migrate(sql);
  } catch (err) {
    await sql.end({ timeout: 5 }).catch(() => {});
    await embedded?.stop().catch(() => {});
    throw err;
  }
  return {
    sql,
    url,
    embedded,
    close: async ({ waitSeconds = 5 } = {}) => {
      await sql.end({ timeout: waitSeconds });
      await embedded?.stop();
    },
  };
}
