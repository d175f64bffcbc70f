import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * The migration that partitions events and rollup_minute by day keeps what was stored before it:
 * the schema is first migrated up to the file before it, rows are written the old way, then the
 * remaining migrations run.
 */
const dir = path.resolve(import.meta.dirname, "../../db/migrations");
let sql: Sql;
let tmp: string;
const DAY = 86_400_000;
const now = Date.now();
const project = "6f1c0000-0000-4000-8000-000000000001";
const group = "6f1c0000-0000-4000-8000-000000000002";
const partitionsOf = async (parent: string) =>
  (
    await sql<{ name: string }[]>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${parent}::regclass order by 1`
  ).map((r) => r.name);

beforeAll(async () => {
  sql = createSql(await freshDatabaseUrl(), 2);
  tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
  for (const f of readdirSync(dir)) if (f < "060") cpSync(path.join(dir, f), path.join(tmp, f));
  await migrate(sql, tmp);
  await sql`insert into projects (id, name) values (${project}, 'Before partitioning')`;
  await sql`
    insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, stored_count)
    values (${project}, ${group}, 'fp', 'Old message', 'error', now(), now(), 'production', 4)`;
  // today, 3 days ago, 200 days ago (older than any partition made), and one a minute ago
  for (const ago of [0, 3 * DAY, 200 * DAY, 60_000]) {
    const ts = new Date(now - ago);
    await sql`
      insert into events (project_id, group_id, message, level, environment, "timestamp", tags, context)
      values (${project}, ${group}, ${`at -${ago}`}, 'error', 'production', ${ts}, ${["a", "b"]}, ${sql.json({ k: ago })})`;
    await sql`
      insert into rollup_minute (project_id, bucket, group_id, level, origin_id, count)
      values (${project}, date_trunc('minute', ${ts}::timestamptz), ${group}, 'error', ${group}, 1)
      on conflict (project_id, bucket, group_id, level, origin_id) do update set count = rollup_minute.count + 1`;
  }
});
afterAll(async () => {
  await sql?.end();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("partitioning migration", () => {
  it("keeps every raw event with its id and fields, and every minute rollup", async () => {
    const before = await sql`select id::text, message, "timestamp", tags, context from events order by id`;
    const rollupsBefore = await sql`select bucket, count::int from rollup_minute order by bucket`;
    expect(before).toHaveLength(4);
    expect(rollupsBefore.length).toBeGreaterThanOrEqual(3);

    await migrate(sql, dir);

    expect(await sql`select id::text, message, "timestamp", tags, context from events order by id`).toEqual(before);
    expect(await sql`select bucket, count::int from rollup_minute order by bucket`).toEqual(rollupsBefore);
    const [{ kind }] = await sql<{ kind: string }[]>`select relkind::text as kind from pg_class where relname = 'events'`;
    expect(kind).toBe("p");
  });

  it("puts recent days in their own partitions, the very old row in the default one, and makes the week ahead", async () => {
    const parts = await partitionsOf("events");
    const day = (ms: number) => `events_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`;
    expect(parts).toContain(day(now));
    expect(parts).toContain(day(now - 3 * DAY));
    expect(parts).toContain(day(now + 7 * DAY));
    expect(parts).toContain("events_default");
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from events_default`;
    expect(n).toBe(1);
    const [{ m }] = await sql<{ m: number }[]>`select count(*)::int as m from only rollup_minute_default`;
    expect(m).toBe(2); // 3 and 200 days old: minute rollups keep partitions for the last days only
    expect(await partitionsOf("rollup_minute")).toContain(`rollup_minute_p${new Date(now).toISOString().slice(0, 10).replaceAll("-", "")}`);
  });

  it("continues the ids after the copied rows", async () => {
    const [{ max }] = await sql<{ max: string }[]>`select max(id)::text as max from events`;
    const [{ id }] = await sql<{ id: string }[]>`
      insert into events (project_id, group_id, message, level, environment, "timestamp")
      values (${project}, ${group}, 'after', 'error', 'production', now()) returning id::text`;
    expect(BigInt(id)).toBeGreaterThan(BigInt(max));
  });

  it("moves a day's rows out of the default partition when that day's partition is created later", async () => {
    const old = new Date(now - 200 * DAY);
    const dayOf = old.toISOString().slice(0, 10);
    const [{ made }] = await sql<{ made: number }[]>`select ensure_day_partitions('events', 'timestamp', ${dayOf}::date, ${dayOf}::date) as made`;
    expect(made).toBe(1);
    const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from events_default`;
    expect(n).toBe(0);
    const [{ inPart }] = await sql.unsafe(`select count(*)::int as "inPart" from events_p${dayOf.replaceAll("-", "")}`);
    expect(inPart).toBe(1);
    expect((await sql`select count(*)::int as n from events`)[0].n).toBe(5);
  });
});
