import { execFile } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";

/**
 * Backups (docs/operations.md#backups): PostgreSQL's own pg_dump in its custom format, and
 * pg_restore into an empty database. The tools come from PG_BIN_DIR, or the PATH. A pg_dump older
 * than the server cannot read it (PostgreSQL refuses), so the versions are checked first and a
 * mismatch says which tools to install.
 */

const run = promisify(execFile);

export class BackupError extends Error {
  constructor(
    message: string,
    /** the caller's to fix (tools, an occupied database), rather than a failure */
    readonly usage = true,
  ) {
    super(message);
    this.name = "BackupError";
  }
}

const tool = (name: "pg_dump" | "pg_restore", binDir = process.env.PG_BIN_DIR) => (binDir ? path.join(binDir, name) : name);

/**
 * The tools' connection: the URL without its password, which goes in PGPASSWORD instead, so it is not
 * on a command line other local users can list.
 */
function connection(url: string): { dbname: string; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = "";
  return { dbname: u.toString(), env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) } };
}

/** A tool's major version, or null when it cannot be run. */
export async function toolMajor(name: "pg_dump" | "pg_restore", binDir?: string): Promise<number | null> {
  try {
    const { stdout } = await run(tool(name, binDir), ["--version"]);
    const m = /\(PostgreSQL\)\s+(\d+)/.exec(stdout);
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function serverMajor(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [{ v }] = await sql<{ v: string }[]>`select current_setting('server_version_num') as v`;
    return Math.floor(Number(v) / 10_000);
  } finally {
    await sql.end();
  }
}

/** Why `name` cannot work on a server of major version `server`, or null when it can. */
function unfit(name: "pg_dump" | "pg_restore", major: number | null, server: number): string | null {
  if (major === null) {
    return `${name} was not found (PG_BIN_DIR=${process.env.PG_BIN_DIR ?? "unset"}, else the PATH). Install PostgreSQL ${server}'s client tools (Debian: postgresql-client-${server}) or point PG_BIN_DIR at their bin folder.`;
  }
  if (major < server) {
    return `${name} ${major} cannot work with this PostgreSQL ${server} server (${name} must be at least the server's version). Install PostgreSQL ${server}'s client tools (Debian: postgresql-client-${server}) and point PG_BIN_DIR at their bin folder.`;
  }
  return null;
}

export type BackupResult = { file: string; bytes: number; server_version: number; pg_dump_version: number; migration: string | null };

/** Dumps the whole database at `url` (every schema: the service's and its job queue's) to `file`. */
export async function backupDatabase(url: string, file: string, binDir?: string): Promise<BackupResult> {
  const server = await serverMajor(url);
  const major = await toolMajor("pg_dump", binDir);
  const why = unfit("pg_dump", major, server);
  if (why) throw new BackupError(why);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  let migration: string | null = null;
  try {
    const [row] = await sql<{ name: string | null }[]>`
      select (select max(name) from schema_migrations) as name where to_regclass('schema_migrations') is not null`;
    migration = row?.name ?? null;
  } finally {
    await sql.end();
  }
  try {
    const c = connection(url);
    await run(tool("pg_dump", binDir), ["--format=custom", "--no-owner", "--no-privileges", `--file=${file}`, `--dbname=${c.dbname}`], { maxBuffer: 16 * 1024 * 1024, env: c.env });
  } catch (err) {
    throw new BackupError(`pg_dump failed: ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`, false);
  }
  return { file, bytes: statSync(file).size, server_version: server, pg_dump_version: major!, migration };
}

export type RestoreResult = { file: string; server_version: number; pg_restore_version: number; tables: number };

/**
 * Restores `file` into the database at `url`, which must hold no table of its own (a new database,
 * or a new DATA_DIR for the embedded one): a restore over live data would mix two histories. One
 * transaction: a failed restore leaves the database empty.
 */
export async function restoreDatabase(url: string, file: string, binDir?: string): Promise<RestoreResult> {
  const server = await serverMajor(url);
  const major = await toolMajor("pg_restore", binDir);
  const why = unfit("pg_restore", major, server);
  if (why) throw new BackupError(why);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`;
    if (n > 0) {
      throw new BackupError(
        `The target database already holds ${n} tables. Restore into a new, empty database (createdb, then DATABASE_URL pointing at it), or for the embedded database a new DATA_DIR.`,
      );
    }
    try {
      const c = connection(url);
      await run(tool("pg_restore", binDir), ["--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction", `--dbname=${c.dbname}`, file], {
        maxBuffer: 16 * 1024 * 1024,
        env: c.env,
      });
    } catch (err) {
      throw new BackupError(`pg_restore failed (nothing was restored): ${(err as { stderr?: string }).stderr?.trim() || (err as Error).message}`, false);
    }
    const [{ tables }] = await sql<{ tables: number }[]>`
      select count(*)::int as tables from pg_tables where schemaname not in ('pg_catalog', 'information_schema')`;
    return { file, server_version: server, pg_restore_version: major!, tables };
  } finally {
    await sql.end();
  }
}
