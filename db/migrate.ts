import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Sql } from "./client.js";

const migrationsDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");

/** Held while an instance changes the schema: its own migrations, then pg-boss's set-up. */
const SETUP_LOCK = 727274;

/** The database was migrated by a newer release than this one: starting could corrupt what it wrote. */
export class NewerSchemaError extends Error {
  constructor(readonly unknown: string[]) {
    super(
      `The database's schema is newer than this release: it has ${unknown.length === 1 ? "migration" : "migrations"} ${unknown.join(", ")}, ` +
        "which this release does not know. Run the release that applied them (or a newer one), or restore a backup taken before that upgrade.",
    );
    this.name = "NewerSchemaError";
  }
}

/**
 * Applies the ordered SQL files in db/migrations that have not run yet, all in one transaction: when
 * one fails, none of this start's migrations is applied and the schema is as it was.
 * An advisory lock keeps two instances starting at once from applying the same file twice. A
 * database that holds a migration this release does not have is refused (NewerSchemaError) and left
 * as it is: an older release must not write to a schema it does not know.
 */
/** The migration files this release has, in the order they apply. */
export function migrationFiles(dir = migrationsDir): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d+[-_.].*\.sql$/.test(f))
    .sort();
}

export async function migrate(sql: Sql, dir = migrationsDir): Promise<string[]> {
  const files = migrationFiles(dir);
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    // a migration may rewrite a large table: the pool's statement and lock timeouts do not apply
    await tx`set local statement_timeout = 0`;
    await tx`set local lock_timeout = 0`;
    await tx`select pg_advisory_xact_lock(${SETUP_LOCK})`;
    await tx`create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())`;
    const done = new Set((await tx<{ name: string }[]>`select name from schema_migrations`).map((r) => r.name));
    const unknown = [...done].filter((name) => !files.includes(name)).sort();
    if (unknown.length > 0) throw new NewerSchemaError(unknown);
    for (const file of files) {
      if (done.has(file)) continue;
      const text = readFileSync(path.join(dir, file), "utf8");
      try {
        await tx.unsafe(text);
      } catch (err) {
        throw new Error(`Migration ${file} failed: ${(err as Error).message}`, { cause: err });
      }
      await tx`insert into schema_migrations (name) values (${file})`;
      applied.push(file);
    }
  });
  return applied;
}

/**
 * Runs `fn` while holding the set-up lock on one connection, so instances starting together take
 * turns: pg-boss creates its schema, queues and partitions in statements that deadlock each other
 * when two processes run them at once on an empty database.
 */
export async function withSetupLock<T>(sql: Sql, fn: () => Promise<T>): Promise<T> {
  const conn = await sql.reserve();
  try {
    // the other instance's set-up may take longer than the pool's lock timeout
    await conn`set lock_timeout = 0`;
    await conn`select pg_advisory_lock(${SETUP_LOCK})`;
    try {
      return await fn();
    } finally {
      await conn`select pg_advisory_unlock(${SETUP_LOCK})`;
      await conn`reset lock_timeout`;
    }
  } finally {
    conn.release();
  }
}
