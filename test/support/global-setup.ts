import { execSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedServer } from "../../db/embedded.js";

declare module "vitest" {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
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
    embedded = await startEmbeddedPostgres(dir, 54000 + Math.floor(Math.random() * 900));
    url = embedded.url;
  }
  project.provide("adminDatabaseUrl", url);
  return async () => {
    await embedded?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
}
