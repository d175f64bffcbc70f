import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, NewerSchemaError } from "../../db/migrate.js";
import { freshDatabaseUrl, getJson, postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login } from "../support/team.js";
import { fixtureFiles, readFixture, restoreFixture } from "../support/upgrade-fixtures.js";

/**
 * Upgrades: a database an earlier release populated through its API (test/fixtures/upgrade, made by
 * scripts/upgrade-fixture.ts) is migrated by this release as it starts, and everything the API
 * answered then it answers now: issues and their exact counts, keys that still authenticate, the
 * economy's balances, the team's settings, sign-in, share links. New fields may appear; none may go
 * or change. A database a newer release migrated is refused.
 */
const MIGRATIONS = path.resolve(import.meta.dirname, "../../db/migrations");

/**
 * An answer without what depends on when and where it is read: uptime, a key's last use (this test
 * uses the keys), and the address the server happens to listen on inside URLs.
 */
const steady = (answer: any) =>
  JSON.parse(JSON.stringify(answer), (k, v) =>
    k === "uptime_s" || k === "last_used_at" ? undefined : typeof v === "string" ? v.replace(/(http:\/\/(?:[^@/]+@)?)127\.0\.0\.1:\d+/g, "$1ORIGIN") : v,
  );

describe.each(fixtureFiles())("upgrading the database of release %s", (file) => {
  const fixture = readFixture(file);
  let app: TestApp;
  let cookie: string;

  beforeAll(async () => {
    const url = await freshDatabaseUrl();
    await restoreFixture(url, fixture);
    app = await startTestApp({}, url);
    cookie = await login(app, fixture.email, fixture.password);
  });
  afterAll(() => app?.close());

  const team = (p: string) => call(app, "GET", `/api/team/projects/${fixture.project_id}${p}`, { cookie });

  it("applies every later migration", async () => {
    const applied = (await app.sql<{ name: string }[]>`select name from schema_migrations order by name`).map((r) => r.name);
    const files = readdirSync(MIGRATIONS).filter((f) => f.endsWith(".sql")).sort();
    expect(applied).toEqual(files);
    expect(applied).toContain(`${fixture.release_migration}.sql`);
  });

  it("answers what the release answered: issues and counts, balances, servers, through the old API key", async () => {
    const errors = await getJson(app, "/api/v1/errors?grouped=true&sort=count&limit=100", fixture.api_key);
    expect(errors.status).toBe(200);
    expect(errors.body).toMatchObject(fixture.answers.errors);
    const players = await getJson(app, "/api/v1/economy/players?limit=100", fixture.api_key);
    expect(players.body).toMatchObject(fixture.answers.economy_players);
    const servers = await getJson(app, "/api/v1/servers", fixture.api_key);
    expect(steady(servers.body)).toMatchObject(steady(fixture.answers.servers));
  });

  it("keeps the team's settings: keys, DSN keys, channels, rules, members, share links", async () => {
    for (const [name, p] of [
      ["keys", "/keys"],
      ["dsn_keys", "/dsn-keys"],
      ["channels", "/channels"],
      ["rules", "/rules"],
      ["members", "/members"],
      ["share_links", "/share-links"],
    ] as const) {
      const r = await team(p);
      expect(r.status, name).toBe(200);
      expect(steady(r.body), name).toMatchObject(steady(fixture.answers[name]));
    }
    const shared = await call(app, "GET", `/api/share/${fixture.share_token}`);
    expect(shared.status).toBe(200);
  });

  it("groups a new occurrence of an old issue into it, counted exactly", async () => {
    const [top] = fixture.answers.errors.data as { id: string; message: string; count: number }[];
    const r = await postJson(app, "/api/ingest", { errors: [{ message: top.message, level: "error", user_id: 100, game_version: "43" }] }, fixture.api_key);
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    let after: any;
    for (let i = 0; i < 200; i++) {
      after = (await getJson(app, "/api/v1/errors?grouped=true&sort=count&limit=100", fixture.api_key)).body;
      if (after.data.find((g: any) => g.id === top.id)?.count === top.count + 1) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(after.total).toBe(fixture.answers.errors.total);
    expect(after.data.find((g: any) => g.id === top.id).count).toBe(top.count + 1);
  });
});

describe("migrations", () => {
  it("refuse a database a newer release migrated, and change nothing in it", async () => {
    const url = await freshDatabaseUrl();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migrate(sql);
      await sql`insert into schema_migrations (name) values ('999_from_a_newer_release.sql')`;
      const before = await sql`select name from schema_migrations order by name`;
      const err = await migrate(sql).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NewerSchemaError);
      expect((err as Error).message).toContain("999_from_a_newer_release.sql");
      expect(await sql`select name from schema_migrations order by name`).toEqual(before);
    } finally {
      await sql.end();
    }
  });

  it("apply all of a start's migrations or none: a failing one leaves the schema as it was", async () => {
    const url = await freshDatabaseUrl();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const dir = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
    writeFileSync(path.join(dir, "001_first.sql"), "create table upgrade_first (id int);");
    writeFileSync(path.join(dir, "002_broken.sql"), "create table upgrade_second (id int); select 1 / 0;");
    try {
      await expect(migrate(sql, dir)).rejects.toThrow(/Migration 002_broken.sql failed/);
      expect(await sql`select to_regclass('upgrade_first') as t`).toEqual([{ t: null }]);
      expect(await sql`select to_regclass('schema_migrations') as t`).toEqual([{ t: null }]);
    } finally {
      await sql.end();
    }
  });
});
