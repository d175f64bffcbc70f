import { mkdtempSync, readdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { toolMajor } from "../../db/backup.js";
import { freshDatabaseUrl, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { runCli } from "../support/cli.js";
import { latestFixture, restoreFixture } from "../support/upgrade-fixtures.js";

/**
 * `npm run cli -- backup` and `restore` (docs/operations.md#backups): a populated database (an
 * earlier release's fixture, migrated and written to by this one) is backed up, restored into a new
 * database, and every table's row count and the API's figures are the same there. A pg_dump older
 * than the server is refused with what to install, before anything is written; a restore into a
 * database that holds tables is refused.
 */
const fixture = latestFixture();

let source: string;
let serverMajor: number;
let dumpMajor: number | null;
let restoreMajor: number | null;
let answers: unknown;
const dir = mkdtempSync(path.join(os.tmpdir(), "rbx-backup-"));

async function tableCounts(url: string): Promise<Record<string, number>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const tables = await sql<{ name: string }[]>`
      select format('%I.%I', schemaname, tablename) as name from pg_tables
      where schemaname not in ('pg_catalog', 'information_schema') order by 1`;
    const out: Record<string, number> = {};
    for (const { name } of tables) out[name] = Number((await sql.unsafe(`select count(*) as n from ${name}`))[0].n);
    return out;
  } finally {
    await sql.end();
  }
}

const figures = async (app: TestApp) => ({
  errors: (await getJson(app, "/api/v1/errors?grouped=true&sort=count&limit=100", fixture.api_key)).body,
  players: (await getJson(app, "/api/v1/economy/players?limit=100", fixture.api_key)).body,
});

beforeAll(async () => {
  source = await freshDatabaseUrl();
  await restoreFixture(source, fixture);
  const one = postgres(source, { max: 1, onnotice: () => {} });
  const [{ v }] = await one<{ v: string }[]>`select current_setting('server_version_num') as v`;
  await one.end();
  serverMajor = Math.floor(Number(v) / 10_000);
  dumpMajor = await toolMajor("pg_dump");
  restoreMajor = await toolMajor("pg_restore");
  // this release migrates it and writes to it
  const app = await startTestApp({}, source);
  const r = await postJson(app, "/api/ingest", { errors: [{ message: "written after the upgrade", user_id: 9 }] }, fixture.api_key);
  expect(r.status).toBeLessThan(300);
  for (let i = 0; i < 200; i++) {
    answers = await figures(app);
    // its count is written with the event, its player by the deferred counters
    if ((answers as any).errors.data.some((g: any) => g.message === "written after the upgrade" && g.count === 1 && g.user_count === 1)) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  await app.close();
});

describe("backup and restore", () => {
  it("round trip: every table's rows and the API's figures are the same in the restored database", async (ctx) => {
    if (dumpMajor === null || dumpMajor < serverMajor || restoreMajor === null) {
      // the next test covers this machine's case: the tools cannot read this server
      ctx.skip();
    }
    const file = path.join(dir, "monitor.dump");
    const backup = await runCli(source, "backup", "--out", file);
    expect(backup, JSON.stringify(backup.out)).toMatchObject({ code: 0, out: { file, server_version: serverMajor, pg_dump_version: dumpMajor } });
    expect(backup.out.bytes).toBeGreaterThan(1000);
    expect(backup.out.migration).toMatch(/^\d+_.*\.sql$/);

    const target = await freshDatabaseUrl();
    const restore = await runCli(target, "restore", "--in", file);
    expect(restore, JSON.stringify(restore.out)).toMatchObject({ code: 0, out: { file, server_version: serverMajor } });
    const [before, after] = [await tableCounts(source), await tableCounts(target)];
    expect(Object.keys(after).length).toBeGreaterThan(50);
    expect(after).toEqual(before);

    const app = await startTestApp({}, target);
    try {
      expect(await figures(app)).toEqual(answers);
    } finally {
      await app.close();
    }

    // a database that holds tables is not restored over
    const again = await runCli(target, "restore", "--in", file);
    expect(again.code).toBe(2);
    expect(again.out.message).toMatch(/already holds \d+ tables/);
    expect(await tableCounts(target)).toEqual(before);
  });

  it("refuses a pg_dump older than the server, saying what to install, and writes no file", async () => {
    const file = path.join(dir, "refused.dump");
    // an empty PG_BIN_DIR finds no tool at all; a machine whose pg_dump is older than the server gets the same kind of answer
    const empty = mkdtempSync(path.join(os.tmpdir(), "rbx-no-tools-"));
    const prev = process.env.PG_BIN_DIR;
    process.env.PG_BIN_DIR = empty;
    try {
      const r = await runCli(source, "backup", "--out", file);
      expect(r.code).toBe(2);
      expect(r.out.message).toContain("pg_dump was not found");
      expect(r.out.message).toContain(`postgresql-client-${serverMajor}`);
    } finally {
      if (prev === undefined) delete process.env.PG_BIN_DIR;
      else process.env.PG_BIN_DIR = prev;
    }
    if (dumpMajor !== null && dumpMajor < serverMajor) {
      const r = await runCli(source, "backup", "--out", file);
      expect(r.code).toBe(2);
      expect(r.out.message).toContain(`pg_dump ${dumpMajor} cannot work with this PostgreSQL ${serverMajor} server`);
    }
    expect(readdirSync(dir)).not.toContain("refused.dump");
  });
});

