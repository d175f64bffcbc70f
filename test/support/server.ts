import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.js";
import { openDatabase } from "../../db/connect.js";
import { migrate } from "../../db/migrate.js";
import { insertProject } from "../../db/projects.js";
import { loadConfig } from "../../app/env.server.js";
import { createApiKey } from "../../app/auth/api-keys.server.js";
import { startServer, type RunningServer } from "../../server.js";

/** A new, empty database on the test server; returns its URL. */
export async function freshDatabaseUrl(): Promise<string> {
  return newDatabase();
}

/**
 * A new database with every migration applied, copied from a template that the run migrates once:
 * migrating an empty database costs seconds, a copy a fraction of one. The server still runs
 * `migrate` when it starts (it finds nothing pending). Tests of the migrations themselves start
 * from `freshDatabaseUrl`.
 */
export async function migratedDatabaseUrl(): Promise<string> {
  return newDatabase(await migratedTemplate());
}

// named after the run, so the global teardown drops every database this run made
const runDatabaseName = (suffix: string) => `t_${inject("testRunId")}_${suffix}`;

function urlOf(name: string) {
  const u = new URL(inject("adminDatabaseUrl"));
  u.pathname = `/${name}`;
  return u.toString();
}

async function newDatabase(template?: string): Promise<string> {
  const name = runDatabaseName(randomBytes(5).toString("hex"));
  const sql = postgres(inject("adminDatabaseUrl"), { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`create database ${name}${template ? ` template ${template}` : ""}`);
  } finally {
    await sql.end();
  }
  return urlOf(name);
}

/** Held while a test process makes the run's template, so the processes of one run make it once. */
const TEMPLATE_LOCK = 727275;
let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= (async () => {
    const name = runDatabaseName("template");
    const admin = postgres(inject("adminDatabaseUrl"), { max: 1, onnotice: () => {} });
    try {
      await admin`select pg_advisory_lock(${TEMPLATE_LOCK})`;
      const [{ made }] = await admin<{ made: boolean }[]>`select exists (select 1 from pg_database where datname = ${name}) as made`;
      if (!made) {
        // made under another name and renamed when complete, so no process copies a half-migrated one
        const building = runDatabaseName(`template_${randomBytes(3).toString("hex")}`);
        await admin.unsafe(`create database ${building}`);
        const sql = createSql(urlOf(building), 1);
        try {
          await migrate(sql);
        } finally {
          await sql.end();
        }
        await admin.unsafe(`alter database ${building} rename to ${name}`);
      }
      await admin`select pg_advisory_unlock(${TEMPLATE_LOCK})`;
    } finally {
      await admin.end();
    }
    return name;
  })();
  return template;
}

export function testConfig(databaseUrl: string, env: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: "test",
    DATABASE_URL: databaseUrl,
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-data-")),
    JOBS_ENABLED: "false",
    ...env,
  });
}

export type TestApp = RunningServer & {
  sql: Sql;
  databaseUrl: string;
  /** fetch relative to the server */
  request: (pathname: string, init?: RequestInit) => Promise<Response>;
};

/** Starts the real server (production build, real HTTP) on a new database (migrated, see `migratedDatabaseUrl`), or on `databaseUrl`. */
export async function startTestApp(env: Record<string, string> = {}, databaseUrl?: string): Promise<TestApp> {
  const url = databaseUrl ?? (await migratedDatabaseUrl());
  const config = testConfig(url, env);
  const database = await openDatabase({ databaseUrl: url, dataDir: config.dataDir, embeddedPort: 0, poolSize: config.dbPoolSize, timeoutMs: config.dbTimeoutMs });
  const running = await startServer(config, { database });
  return {
    ...running,
    sql: database.sql,
    databaseUrl: url,
    request: (pathname, init) => fetch(running.url + pathname, init),
    close: async () => {
      const report = await running.close();
      await database.close();
      rmSync(config.dataDir, { recursive: true, force: true });
      return report;
    },
  };
}

/** Factory: a project with one API key. */
export async function createProject(sql: Sql, name = "Test Game") {
  const project = await insertProject(sql, name);
  const { apiKey, key } = await createApiKey(sql, project.id, "test");
  return { projectId: project.id, apiKey, keyId: key.id };
}

/** A separate client on the same database, for assertions that read tables directly. */
export const connect = (url: string) => createSql(url, 4);

export const jsonHeaders = (apiKey?: string): Record<string, string> => ({
  "content-type": "application/json",
  ...(apiKey ? { "x-api-key": apiKey } : {}),
});

export async function postJson(app: TestApp, pathname: string, body: unknown, apiKey?: string) {
  const res = await app.request(pathname, {
    method: "POST",
    headers: jsonHeaders(apiKey),
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: parseJsonText(text), text, headers: res.headers };
}

/** A JSON body compressed by the caller, sent with the given Content-Encoding. */
export async function postEncoded(app: TestApp, pathname: string, body: Buffer, encoding: string, apiKey?: string) {
  const res = await app.request(pathname, {
    method: "POST",
    headers: { ...jsonHeaders(apiKey), "content-encoding": encoding },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  return { status: res.status, body: parseJsonText(text), text, headers: res.headers };
}

/** A response text parsed as JSON, or undefined when it is not JSON. */
export function parseJsonText(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function getJson(app: TestApp, pathname: string, apiKey?: string) {
  const res = await app.request(pathname, { headers: apiKey ? { "x-api-key": apiKey } : {} });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}
