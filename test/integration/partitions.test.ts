import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRetention } from "../../jobs/retention.js";
import { ensurePartitions } from "../../jobs/partitions.js";
import { createSql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { createProject, freshDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { DAY, HOUR, ingest, iso, list, repeat } from "../support/query-fixtures.js";

/**
 * Daily partitions of events and minute rollups: created ahead by the partitions job, dropped whole by
 * retention once their day is past the period, with the stored-row counters kept in step.
 */
const now = Date.now();
const dayName = (table: string, ms: number) => `${table}_p${new Date(ms).toISOString().slice(0, 10).replaceAll("-", "")}`;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function partitions(app: TestApp, parent: string) {
  return (
    await app.sql<{ name: string }[]>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${parent}::regclass order by 1`
  ).map((r) => r.name);
}
const tableExists = async (app: TestApp, name: string) => (await app.sql`select to_regclass(${name}) as t`)[0].t !== null;

describe("retention by dropping partitions", () => {
  let app: TestApp;
  let key: string;
  beforeAll(async () => {
    app = await startTestApp();
    ({ apiKey: key } = await createProject(app.sql, "partitioned"));
    // partitions for the days of the events 50, 40, 31 and 29.5 days back (as if the job had made them
    // then; 29.5 days back is the day before "29 days back" before noon UTC), and 3 days back for minute rollups
    for (const ago of [50 * DAY, 40 * DAY, 31 * DAY, 29 * DAY + 12 * HOUR]) {
      await app.sql`select ensure_day_partitions('events', 'timestamp', ${dayOf(now - ago)}::date, ${dayOf(now - ago)}::date)`;
    }
    await app.sql`select ensure_day_partitions('rollup_minute', 'bucket', ${dayOf(now - 3 * DAY)}::date, ${dayOf(now - 3 * DAY)}::date)`;
    const r = await ingest(app, key, [
      ...repeat(2, { message: "P fifty", timestamp: iso(now - 50 * DAY) }),
      ...repeat(4, { message: "P forty", timestamp: iso(now - 40 * DAY) }),
      ...repeat(3, { message: "P forty", timestamp: iso(now - 31 * DAY) }),
      ...repeat(2, { message: "P forty", timestamp: iso(now - 29 * DAY - 12 * HOUR) }),
      { message: "P default", timestamp: iso(now - 200 * DAY) },
      ...repeat(2, { message: "P recent", timestamp: iso(now - 3 * DAY) }),
      { message: "P recent", timestamp: iso(now - 60_000) },
    ]);
    expect(r.throttled).toBe(0);
    // a partition left detached by an interrupted run: its rows are still counted on the group
    await app.sql.unsafe(`alter table events detach partition ${dayName("events", now - 50 * DAY)}`);
  });
  afterAll(() => app?.close());

  it("drops whole expired days, cleans the default partition, and keeps the counters in step", async () => {
    expect((await list(app, key)).body.total).toBe(15);
    const result = await runRetention(app.sql, 30);
    // 2 (detached, -50d) + 4 (-40d) + 3 (-31d) + 1 (default, -200d)
    expect(result.events).toBe(10);
    expect(await tableExists(app, dayName("events", now - 50 * DAY))).toBe(false);
    const parts = await partitions(app, "events");
    expect(parts).not.toContain(dayName("events", now - 40 * DAY));
    expect(parts).not.toContain(dayName("events", now - 31 * DAY));
    expect(parts).toContain(dayName("events", now - 29 * DAY - 12 * HOUR));
    expect(parts).toContain(dayName("events", now));

    const raw = await list(app, key, { limit: 100 });
    expect(raw.body.total).toBe(5);
    expect(raw.body.data).toHaveLength(5);
    const counters = await app.sql<{ message: string; stored_count: number; rows: number; count: number }[]>`
      select g.message, g.stored_count::int as stored_count, g.count::int as count,
        (select count(*)::int from events e where e.project_id = g.project_id and e.group_id = g.id) as rows
      from error_groups g order by g.message`;
    expect(counters).toEqual([
      { message: "P default", stored_count: 0, count: 1, rows: 0 },
      { message: "P fifty", stored_count: 0, count: 2, rows: 0 },
      { message: "P forty", stored_count: 2, count: 9, rows: 2 },
      { message: "P recent", stored_count: 3, count: 3, rows: 3 },
    ]);
  });

  it("drops minute-rollup days older than two days and keeps the newer ones", async () => {
    expect(await partitions(app, "rollup_minute")).not.toContain(dayName("rollup_minute", now - 3 * DAY));
    const [{ old }] = await app.sql<{ old: number }[]>`select count(*)::int as old from rollup_minute where bucket < now() - interval '2 days'`;
    expect(old).toBe(0);
    const [{ recent }] = await app.sql<{ recent: number }[]>`select coalesce(sum(count), 0)::int as recent from rollup_minute where bucket > now() - interval '1 hour'`;
    expect(recent).toBe(1);
  });

  it("does nothing the second time", async () => {
    expect(await runRetention(app.sql, 30)).toEqual({ events: 0, minuteRollups: 0 });
  });

  it("keeps today to a week ahead in place (idempotent)", async () => {
    await ensurePartitions(app.sql);
    const parts = await partitions(app, "events");
    for (let d = 0; d <= 7; d++) expect(parts).toContain(dayName("events", now + d * DAY));
    expect(await ensurePartitions(app.sql)).toBe(0);
  });
});

describe("the partitions job", () => {
  it("creates a missing day ahead when the process starts with jobs enabled", async () => {
    const url = await freshDatabaseUrl();
    const sql = createSql(url, 2);
    await migrate(sql);
    const ahead = dayName("events", now + 7 * DAY);
    await sql.unsafe(`drop table ${ahead}`);
    await sql.end();
    const app = await startTestApp({ JOBS_ENABLED: "true" }, url);
    try {
      const deadline = Date.now() + 30_000;
      while (!(await tableExists(app, ahead)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      expect(await partitions(app, "events")).toContain(ahead);
    } finally {
      await app.close();
    }
  });
});
