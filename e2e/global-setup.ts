import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { startEmbeddedPostgres } from "../db/embedded.js";
import { loadConfig } from "../app/env.server.js";
import { startServer } from "../server.js";
import { LocalSmtp } from "../test/support/smtp-server.js";

/**
 * Starts the service (production build) on a fresh database: on TEST_DATABASE_URL's server when set,
 * otherwise on an embedded PostgreSQL. Exposes the URL as E2E_BASE_URL and E2E_DATABASE_URL.
 */
export default async function globalSetup() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-e2e-"));
  let adminUrl = process.env.TEST_DATABASE_URL;
  // a folder of its own: startEmbeddedPostgres opens it to the `postgres` user (when run as root),
  // which could not pass through dataDir (mkdtemp makes it private)
  const pgDir = adminUrl ? null : mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-e2e-pg-"));
  const embedded = pgDir ? await startEmbeddedPostgres(pgDir, "free") : null;
  adminUrl ??= embedded!.url;
  const name = `e2e_${randomBytes(5).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  // the specs preview currency maps as one user on one project more often than a person would in a
  // minute; the preview's own limit is covered by test/integration/economy-preview-bounds.test.ts
  // email alert channels send through a local SMTP server
  const smtp = await new LocalSmtp().start();
  const config = loadConfig({
    NODE_ENV: "production",
    DATABASE_URL: u.toString(),
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    JOBS_ENABLED: "false",
    WEBHOOK_ALLOW_PRIVATE: "true",
    ECONOMY_PREVIEW_RATE_LIMIT: "100",
    SMTP_URL: smtp.url(),
    SMTP_FROM: "alerts@monitor.example.com",
  });
  const server = await startServer(config);
  process.env.E2E_BASE_URL = server.url;
  process.env.E2E_DATABASE_URL = u.toString();
  return async () => {
    await server.close();
    await smtp.close();
    if (!embedded) {
      const cleanup = postgres(adminUrl!, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists ${name} with (force)`);
      await cleanup.end();
    }
    await embedded?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  };
}
