import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { loadConfig } from "../../app/env.server.js";
import { startServer } from "../../server.js";

/**
 * A second server on its own empty database (on the same PostgreSQL as the shared e2e server), for
 * specs that must see a first run: other specs create users in the shared database, and the setup
 * page exists only while there is none.
 */
export async function startFreshServer(env: Record<string, string> = {}): Promise<{ url: string; databaseUrl: string; close: () => Promise<void> }> {
  const shared = process.env.E2E_DATABASE_URL;
  if (!shared) throw new Error("E2E_DATABASE_URL is not set; run through playwright.config.ts (global setup)");
  const name = `e2e_fresh_${randomBytes(5).toString("hex")}`;
  const admin = postgres(shared, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const u = new URL(shared);
  u.pathname = `/${name}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-e2e-fresh-"));
  const config = loadConfig({ NODE_ENV: "production", DATABASE_URL: u.toString(), PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, JOBS_ENABLED: "false", ...env });
  const server = await startServer(config);
  return {
    url: server.url,
    databaseUrl: u.toString(),
    close: async () => {
      await server.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`).catch(() => {});
      await admin.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
