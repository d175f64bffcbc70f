import { mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
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
import { configureLogging } from "../../log/logger.js";
import { RECORD_SECRET, recordSecrets, runLogDir } from "./log-audit.js";

/**
 * The log lines of this test process (its servers', and whatever db/ and jobs/ log) go to a file in
 * the run's log directory, which the global teardown audits for secrets (test/support/log-audit.ts).
 */
const logDir = runLogDir(inject("testRunId"));
mkdirSync(logDir, { recursive: true });
const logFd = openSync(path.join(logDir, `server-${process.pid}.log`), "a");
configureLogging({ sink: { write: (line: string) => writeSync(logFd, line) } });

/** Records secrets this process created or sent, for the log audit at the end of the run. */
export const recordSecret = (kind: string, ...values: (string | undefined | null)[]) => recordSecrets(logDir, kind, values);
// helpers the browser suite shares (test/support/team.ts) record through this, without importing vitest
(globalThis as { [RECORD_SECRET]?: typeof recordSecret })[RECORD_SECRET] = recordSecret;

/** The path of this process's log file (a test may read the lines its requests made). */
export const logFile = () => path.join(logDir, `server-${process.pid}.log`);

/** Fields of a JSON body that hold secrets (a new key, a share token, a TOTP secret, recovery codes…). */
const SECRET_FIELDS = new Set(["api_key", "apiKey", "public_key", "secret_key", "token", "secret", "otpauth_url", "recovery_codes", "codes", "password", "new_password", "current_password", "client_secret"]);

function secretsInJson(value: unknown, found: string[], field?: string): void {
  if (typeof value === "string") {
    if (field && SECRET_FIELDS.has(field)) found.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) secretsInJson(v, found, field);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) secretsInJson(v, found, k);
  }
}

const jsonSecrets = (text: string): string[] => {
  const found: string[] = [];
  try {
    secretsInJson(JSON.parse(text), found);
  } catch {
    // not JSON
  }
  return found;
};

/** The secrets a request sends (its key, cookie, credentials, a share token or DSN key in the URL, a JSON body's secret fields). */
function recordRequestSecrets(pathname: string, init: RequestInit | undefined) {
  const headers = new Headers(init?.headers);
  const cookies = (headers.get("cookie") ?? "").split(";").map((c) => c.slice(c.indexOf("=") + 1).trim());
  const sentryKey = /sentry_key=([^&,\s]+)/.exec(`${pathname} ${headers.get("x-sentry-auth") ?? ""}`)?.[1];
  const share = /\/share\/([^/?#]+)/.exec(pathname)?.[1];
  const bearer = /^Bearer\s+(\S+)/i.exec(headers.get("authorization") ?? "")?.[1];
  recordSecret("request credential", headers.get("x-api-key"), sentryKey, share, bearer, ...cookies);
  if (typeof init?.body === "string") recordSecret("request body secret", ...jsonSecrets(init.body));
}

/** The secrets an answer hands out: its cookies and its JSON body's secret fields. */
async function recordResponseSecrets(res: Response) {
  const cookies = res.headers.getSetCookie().map((c) => c.split(";")[0].slice(c.indexOf("=") + 1));
  recordSecret("cookie", ...cookies);
  if (!(res.headers.get("content-type") ?? "").includes("json")) return;
  recordSecret("answer secret", ...jsonSecrets(await res.clone().text()));
}

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
    // every request's line is written (and audited)
    LOG_LEVEL: "debug",
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
  recordSecret("config secret", config.appSecret, config.notificationSecret, ...config.oidcProviders.map((p) => p.clientSecret));
  recordSecret("environment secret", ...Object.entries(env).filter(([k]) => /SECRET|PASSWORD|TOKEN/.test(k)).map(([, v]) => v));
  const database = await openDatabase({ databaseUrl: url, dataDir: config.dataDir, embeddedPort: 0, poolSize: config.dbPoolSize, timeoutMs: config.dbTimeoutMs });
  const running = await startServer(config, { database });
  return {
    ...running,
    sql: database.sql,
    databaseUrl: url,
    request: async (pathname, init) => {
      recordRequestSecrets(pathname, init);
      const res = await fetch(running.url + pathname, init);
      // read from a copy, beside the test's own reading
      void recordResponseSecrets(res).catch(() => {});
      return res;
    },
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
  recordSecret("api key", apiKey);
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
