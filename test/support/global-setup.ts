import { execSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import postgres from "postgres";
import { startEmbeddedPostgres, type EmbeddedServer } from "../../db/embedded.js";
import { auditRunLogs } from "./log-audit.js";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    testRunId: string;
  }
}

/**
 * Tests talk to a real PostgreSQL: TEST_DATABASE_URL when given (any database on a server the
 * tests may create databases on), otherwise an embedded server started here for the run.
 * Integration tests serve the production Remix build, so it is built when missing.
 */
export default async function setup(project: TestProject) {
  const root = path.resolve(import.meta.dirname, "../..");
  if (!existsSync(path.join(root, "build/server/index.js"))) {
    // vitest sets VITEST in this process, and vite.config.ts leaves the Remix plugin out when it is set
    const { VITEST: _, ...env } = process.env;
    execSync("npx remix vite:build", { cwd: root, stdio: "inherit", env });
  }
  let embedded: EmbeddedServer | undefined;
  let dir: string | undefined;
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    dir = mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-test-"));
    embedded = await startEmbeddedPostgres(dir, "free");
    url = embedded.url;
  }
  const runId = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  project.provide("adminDatabaseUrl", url);
  project.provide("testRunId", runId);
  return async () => {
    if (!embedded) await dropRunDatabases(url!, runId);
    await embedded?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    // both audits run; either failing fails the run
    const audits = [() => auditRunLogs(runId), async () => (await import("./contract-audit.js")).auditContract(runId)];
    const failed: unknown[] = [];
    for (const audit of audits) await Promise.resolve().then(audit).catch((err: unknown) => failed.push(err));
    if (failed.length === 1) throw failed[0];
    if (failed.length > 1) throw new AggregateError(failed, failed.map((e) => (e as Error).message).join("\n\n"));
  };
}

/**
 * Drops the databases this run created on a shared server, so repeated runs leave nothing behind.
 * Several at once: each DROP DATABASE waits for a checkpoint, and drops waiting together share one
 * (one at a time, a run's few hundred databases took minutes on a busy server).
 */
async function dropRunDatabases(adminUrl: string, runId: string) {
  const sql = postgres(adminUrl, { max: 8, onnotice: () => {} });
  try {
    const rows = await sql<{ datname: string }[]>`select datname from pg_database where datname like ${`t\_${runId}\_%`}`;
    await Promise.all(rows.map(({ datname }) => sql.unsafe(`drop database if exists "${datname}" with (force)`)));
  } finally {
    await sql.end();
  }
}
