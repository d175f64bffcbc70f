import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { freeLoopbackPort } from "../../db/embedded.js";
import { runLogDir } from "./log-audit.js";

/** A free TCP port on loopback (closed again before use). */
export const freePort = freeLoopbackPort;

export type Instance = {
  child: ChildProcess;
  url: string;
  dataDir: string;
  output: () => string;
  stderr: () => string;
  /** resolves with the exit code (null when ended by a signal) and the signal */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
};

/**
 * `node --import tsx server.ts` with the production build: the process a deployment runs, with its
 * own signal handling. `DATABASE_URL: ""` in `env` makes it start its embedded PostgreSQL.
 *
 * It listens on a port the system gives it (PORT=0) and `url` is read from the line it logs once
 * listening (waitHealthy waits for it). A port picked here and bound by the child later could be
 * picked for another instance meanwhile; the second one then exited on "address in use" while its
 * health checks were answered by the first.
 */
export async function spawnInstance(databaseUrl: string, env: Record<string, string> = {}): Promise<Instance> {
  const root = path.resolve(import.meta.dirname, "../..");
  const dataDir = env.DATA_DIR ?? mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-instance-"));
  const child = spawn(process.execPath, ["--import", "tsx", "server.ts"], {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      PORT: "0",
      HOST: "127.0.0.1",
      JOBS_ENABLED: "false",
      DATA_DIR: dataDir,
      DB_POOL_SIZE: "10",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  let url = "";
  // in a test run, its log lines also go to the run's log directory, which the log audit reads
  // (test/support/log-audit.ts); scripts outside vitest use this too
  const logDir = process.env.VITEST ? runLogDir((await import("vitest")).inject("testRunId")) : undefined;
  if (logDir) mkdirSync(logDir, { recursive: true });
  const logFile = logDir ? createWriteStream(path.join(logDir, `instance-${process.pid}-${child.pid}.log`)) : undefined;
  child.stdout!.on("data", (d) => {
    out += d;
    logFile?.write(d);
    url ||= /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1] ?? "";
  });
  child.stderr!.on("data", (d) => {
    err += d;
    logFile?.write(d);
  });
  child.once("exit", () => logFile?.end());
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    get url() {
      return url;
    },
    dataDir,
    output: () => out + err,
    stderr: () => err,
    exited,
  };
}

const alive = (i: Instance) => i.child.exitCode === null && i.child.signalCode === null;

export async function waitHealthy(instance: Instance, deadlineMs = 120_000) {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (!alive(instance)) throw new Error(`instance exited with ${instance.child.exitCode ?? instance.child.signalCode}:\n${instance.output()}`);
    try {
      if (!instance.url) throw new Error("not listening yet");
      const res = await fetch(`${instance.url}/api/ingest`);
      if (res.status === 200 && (await res.json()).status === "ok") return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`instance at ${instance.url} did not become healthy:\n${instance.output()}`);
}

/** SIGTERM, then SIGKILL if it has not exited after 30 s; resolves with how it ended. */
export async function stopInstance(instance: Instance | undefined) {
  if (!instance) return undefined;
  if (alive(instance)) instance.child.kill("SIGTERM");
  const timer = setTimeout(() => alive(instance) && instance.child.kill("SIGKILL"), 30_000);
  const how = await instance.exited;
  clearTimeout(timer);
  return how;
}
