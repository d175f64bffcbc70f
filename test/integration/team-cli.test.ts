import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login } from "../support/team.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
let databaseUrl: string;
let app: TestApp;

async function cli(...args: string[]): Promise<{ code: number; out: any }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "rbx-cli-")), NODE_ENV: "test" };
  try {
    const { stdout } = await run(path.join(root, "node_modules/.bin/tsx"), ["scripts/cli.ts", ...args], { cwd: root, env, encoding: "utf8" });
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: JSON.parse(e.stdout.trim().split("\n").at(-1)!) };
  }
}

beforeAll(async () => {
  databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({}, databaseUrl);
});
afterAll(() => app?.close());

describe("CLI: user:create and project:create --owner", () => {
  it("creates a user who can sign in, and a project they own whose key ingests", async () => {
    const user = await cli("user:create", "--email", "Ops@Studio.test", "--password", "long enough password");
    expect(user.code).toBe(0);
    expect(user.out).toEqual({ user_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

    const project = await cli("project:create", "--name", "Headless Game", "--owner", "ops@studio.test");
    expect(project.code).toBe(0);
    expect(project.out).toEqual({ project_id: expect.any(String), api_key: expect.stringMatching(/^rbx_/) });

    const cookie = await login(app, "ops@studio.test", "long enough password");
    const me = await call(app, "GET", "/api/auth/me", { cookie });
    expect(me.body.user.id).toBe(user.out.user_id);
    expect(me.body.projects).toEqual([expect.objectContaining({ id: project.out.project_id, name: "Headless Game", role: "owner" })]);
    await ingest(app, project.out.api_key, { message: "from the CLI project" });

    const key = await cli("key:create", "--project", project.out.project_id);
    expect(key.code).toBe(0);
    const revoked = await cli("key:revoke", "--key-id", key.out.key_id);
    expect(revoked.out).toEqual({ revoked: true });
  });

  it("refuses a taken email, a short password and an unknown owner with exit code 2 and a JSON error", async () => {
    await cli("user:create", "--email", "taken@studio.test", "--password", "long enough password");
    const taken = await cli("user:create", "--email", "TAKEN@studio.test", "--password", "long enough password");
    expect(taken).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("already exists") } });
    const short = await cli("user:create", "--email", "short@studio.test", "--password", "short");
    expect(short).toMatchObject({ code: 2, out: { error: "usage" } });
    const noOwner = await cli("project:create", "--name", "Orphan", "--owner", "nobody@studio.test");
    expect(noOwner).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("nobody@studio.test") } });
    const [{ n }] = await app.sql`select count(*)::int as n from projects where name = 'Orphan'`;
    expect(n).toBe(0);
  });

  it("still creates an ownerless project without --owner", async () => {
    const project = await cli("project:create", "--name", "No Owner Yet");
    expect(project.code).toBe(0);
    const members = await app.sql`select 1 from project_members where project_id = ${project.out.project_id}`;
    expect(members).toHaveLength(0);
  });
});
