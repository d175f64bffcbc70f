import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asJson, createSql, type Sql } from "../../db/client.js";
import { likePattern, listEvents } from "../../db/errors.js";
import { deleteGroup } from "../../db/groups.js";
import { mergeGroups } from "../../db/merge.js";
import { migrate } from "../../db/migrate.js";
import { deleteProject } from "../../db/projects.js";
import { runRetention } from "../../jobs/retention.js";
import { countersApplied } from "../support/counters.js";
import { DAY, HOUR, MINUTE, ingest, iso, repeat } from "../support/query-fixtures.js";
import { createProject, freshDatabaseUrl, postJson, startTestApp, type TestApp } from "../support/server.js";
import { sleep } from "../support/wait.js";

/**
 * The stored events' distinct texts behind raw and issue search (db/event-messages.ts), per the group
 * each event was written for: their counts equal the stored events through ingest (throttled events
 * are not stored), merges, a group's delete, retention (a dropped partition and the default
 * partition's deletes, even before the drain of the events it drops, and while a drain runs) and a
 * project's delete; a pending row of the previous version's shape is applied; the migrations count
 * what was stored before them; and both ways of reading a search's page answer what a scan of every
 * event answers.
 */
let app: TestApp;
const now = Date.now();
const ago = (ms: number) => iso(now - ms);

/** Per project, own group and text: the stored events, and the count kept for the text. Empty when they agree. */
async function mismatches(sql: Sql) {
  await countersApplied(sql);
  return sql`
    select coalesce(e.project_id, m.project_id) as project_id, coalesce(e.group_id, m.group_id) as group_id,
      coalesce(e.message, m.message) as message, coalesce(e.n, 0)::int as events, coalesce(m.stored_count, 0)::int as counted
    from (select project_id, coalesce(origin_group_id, group_id) as group_id, message, count(*) as n from events group by 1, 2, 3) e
    full join event_messages m on m.project_id = e.project_id and m.group_id = e.group_id and m.hash = md5(e.message)::uuid
    where coalesce(e.n, 0) <> coalesce(m.stored_count, 0) or m.message is distinct from e.message`;
}

/** A project's texts, each with its count over the groups that hold it. */
const texts = async (projectId: string) =>
  (await app.sql<{ message: string; n: number }[]>`
    select message, sum(stored_count)::int as n from event_messages where project_id = ${projectId} group by message order by message`).map((r) => [
    r.message,
    r.n,
  ]);

/** A project's texts per group: [group id, message, count]. */
const groupTexts = async (projectId: string) =>
  (await app.sql<{ group_id: string; message: string; n: number }[]>`
    select group_id, message, stored_count::int as n from event_messages where project_id = ${projectId} order by message, stored_count`).map((r) => [
    r.group_id,
    r.message,
    r.n,
  ]);

/** Waits until at least `n` sessions of the test database wait for a lock. */
async function lockWaiters(n: number) {
  for (let tries = 0; ; tries++) {
    const [{ waiting }] = await app.sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    if (waiting >= n) return;
    if (tries > 400) throw new Error(`${waiting} sessions wait for a lock, not ${n}`);
    await sleep(25);
  }
}

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe("the texts' counts", () => {
  it("count the stored events of each text, not the throttled ones", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts stored");
    // untraced events of one group past the throttle's limit are counted, not stored
    const r = await ingest(app, apiKey, [...repeat(40, { message: "Storm text" }), ...repeat(3, { message: "Calm text" }, true)]);
    expect(r.throttled).toBeGreaterThan(0);
    const [{ stored }] = await app.sql<{ stored: number }[]>`
      select count(*)::int as stored from events where project_id = ${projectId} and message = 'Storm text'`;
    expect(stored).toBeLessThan(40);
    expect(await texts(projectId)).toEqual([["Calm text", 3], ["Storm text", stored]]);
    expect(await mismatches(app.sql)).toEqual([]);
  });

  it("stay with the texts through a merge and lose a deleted group's events", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts deleted");
    await ingest(app, apiKey, [
      ...repeat(2, { message: "Shared text", stack_trace: "ServerScriptService.A:1" }, true),
      ...repeat(3, { message: "Shared text", stack_trace: "ServerScriptService.B:2" }, true),
      ...repeat(4, { message: "Own text", stack_trace: "ServerScriptService.C:3" }, true),
    ]);
    const groups = await app.sql<{ id: string; message: string; stored_count: number }[]>`
      select id, message, stored_count::int from error_groups where project_id = ${projectId} order by stored_count`;
    expect(groups.map((g) => g.stored_count)).toEqual([2, 3, 4]);
    expect(await groupTexts(projectId)).toEqual([
      [groups[2].id, "Own text", 4],
      [groups[0].id, "Shared text", 2],
      [groups[1].id, "Shared text", 3],
    ]);
    // each text stays with the group its events were written for: a merge moves no row
    await mergeGroups(app.sql, projectId, groups[1].id, [groups[2].id]);
    expect(await groupTexts(projectId)).toEqual([
      [groups[2].id, "Own text", 4],
      [groups[0].id, "Shared text", 2],
      [groups[1].id, "Shared text", 3],
    ]);
    expect(await texts(projectId)).toEqual([["Own text", 4], ["Shared text", 5]]);
    // the merged issue goes with its member's events: "Own text" has none left, "Shared text" keeps 2
    expect(await deleteGroup(app.sql, projectId, groups[1].id)).toBe(true);
    expect(await groupTexts(projectId)).toEqual([[groups[0].id, "Shared text", 2]]);
    expect(await mismatches(app.sql)).toEqual([]);
  });

  it("take a text an instance of the previous version left pending to the group of its newest event", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts of a previous version");
    await ingest(app, apiKey, [
      ...repeat(2, { message: "Legacy text", stack_trace: "ServerScriptService.Old:1", timestamp: ago(2 * HOUR) }, true),
      { message: "Legacy text", stack_trace: "ServerScriptService.New:2", timestamp: ago(HOUR), trace_id: crypto.randomUUID() },
    ]);
    await countersApplied(app.sql);
    const [older, newer] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} order by first_seen`;
    // before migration 106 a pending row carried its texts per project ("t"); a text with no stored event is left out
    await app.sql`insert into counter_deltas (project_id, payload)
      values (${projectId}, ${asJson(app.sql, { r: [], s: [], t: [["Legacy text", 2], ["Never stored", 1]] })})`;
    await countersApplied(app.sql);
    expect(await groupTexts(projectId)).toEqual([
      [older.id, "Legacy text", 2],
      [newer.id, "Legacy text", 3],
    ]);
    // its counts now differ from the events on purpose: the project goes, so the other tests' checks hold
    expect(await deleteProject(app.sql, projectId)).toBe(true);
  });

  it("lose what retention drops, from a partition and from the default partition, also before the drain of those events", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts retained");
    // the day 40 days ago gets a partition, which retention drops whole; older days are in the default one
    await app.sql`select ensure_day_partitions('events', 'timestamp', ${ago(40 * DAY)}::date, ${ago(40 * DAY)}::date)`;
    await ingest(app, apiKey, [
      ...repeat(3, { message: "Retained old", timestamp: ago(40 * DAY) }, true),
      ...repeat(2, { message: "Retained mixed", timestamp: ago(35 * DAY) }, true),
      ...repeat(2, { message: "Retained mixed", timestamp: ago(2 * HOUR) }, true),
    ]);
    // No drain runs while `first` holds the drain lock, so these events stay pending; retention
    // queues for the lock, then `second` behind it. PostgreSQL grants a released lock to its queue in
    // order (a drain only tries the lock), so retention drops the partition before the drain of
    // these events, and `second` then holds the lock between the partition and the default partition.
    const first = await app.sql.reserve();
    const second = await app.sql.reserve();
    let retention: Promise<{ events: number }> | undefined;
    try {
      await first`begin`;
      await first`select pg_advisory_xact_lock(hashtextextended('counter-deltas', 0))`;
      const r = await postJson(app, "/api/ingest", { errors: repeat(4, { message: "Retained late", timestamp: ago(40 * DAY) }, true) }, apiKey);
      expect(r.status).toBe(200);
      const [{ pending }] = await app.sql<{ pending: number }[]>`select count(*)::int as pending from counter_deltas where project_id = ${projectId}`;
      expect(pending).toBe(1);
      const [where] = await app.sql<{ partitioned: number; default: number }[]>`
        select count(*) filter (where tableoid <> 'events_default'::regclass)::int as partitioned,
          count(*) filter (where tableoid = 'events_default'::regclass)::int as default
        from events where project_id = ${projectId} and "timestamp" < now() - interval '30 days'`;
      expect(where).toEqual({ partitioned: 7, default: 2 });
      retention = runRetention(app.sql, 30);
      retention.catch(() => {});
      await lockWaiters(1);
      await second`begin`;
      const secondHolds = second`select pg_advisory_xact_lock(hashtextextended('counter-deltas', 0))`.execute();
      await lockWaiters(2);
      await first`commit`;
      await secondHolds;
      // the partition is gone and taken away first: the late text stands at minus its events until the drain adds them
      expect(await texts(projectId)).toEqual([["Retained late", -4], ["Retained mixed", 4], ["Retained old", 0]]);
      await second`commit`;
      expect((await retention).events).toBe(9);
    } finally {
      await first`rollback`;
      await second`rollback`;
      first.release();
      second.release();
    }
    await countersApplied(app.sql);
    // a text whose events all went has no row: the run removes those at zero, the next one what the drain left at zero
    await runRetention(app.sql, 30);
    expect(await texts(projectId)).toEqual([["Retained mixed", 2]]);
    expect(await mismatches(app.sql)).toEqual([]);
  });

  it("are kept by retention and a drain at once without a deadlock", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts dropped while drained");
    await app.sql`select ensure_day_partitions('events', 'timestamp', ${ago(40 * DAY)}::date, ${ago(40 * DAY)}::date)`;
    await ingest(app, apiKey, repeat(3, { message: "Dropped while drained", timestamp: ago(40 * DAY) }, true));
    await countersApplied(app.sql);
    const [group] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId}`;
    // a drain in progress holds its lock and the text's row, and comes to the group's row next (its lock order)
    const drain = await app.sql.reserve();
    let retention: Promise<{ events: number }> | undefined;
    try {
      await drain`begin`;
      await drain`select pg_advisory_xact_lock(hashtextextended('counter-deltas', 0))`;
      await drain`update event_messages set stored_count = stored_count + 0 where project_id = ${projectId} and hash = md5('Dropped while drained')::uuid`;
      retention = runRetention(app.sql, 30);
      retention.catch(() => {});
      await lockWaiters(1);
      // a retention holding the group's row while it waits for the text's would make this a deadlock
      await drain`update error_groups set stored_count = stored_count + 0 where project_id = ${projectId} and id = ${group.id}`;
      await drain`commit`;
      expect((await retention).events).toBe(3);
    } finally {
      await drain`rollback`;
      drain.release();
    }
    expect(await texts(projectId)).toEqual([]);
    const [{ stored }] = await app.sql<{ stored: number }[]>`select stored_count::int as stored from error_groups where id = ${group.id}`;
    expect(stored).toBe(0);
    expect(await mismatches(app.sql)).toEqual([]);
  });

  it("go with their project", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts of a deleted project");
    await ingest(app, apiKey, repeat(2, { message: "Doomed text" }, true));
    expect(await texts(projectId)).toEqual([["Doomed text", 2]]);
    expect(await deleteProject(app.sql, projectId)).toBe(true);
    expect(await texts(projectId)).toEqual([]);
    expect(await mismatches(app.sql)).toEqual([]);
  });
});

describe("raw search through the texts", () => {
  let projectId: string;
  // 12 texts over 3 days: a common word, a rare one, case and LIKE characters, old and new events
  beforeAll(async () => {
    const created = await createProject(app.sql, "texts searched");
    projectId = created.projectId;
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 240; i++) {
      const k = (i * 7) % 12;
      const message = k < 8 ? `Script${k}:${10 + k}: attempt to index nil with 'Damage'` : k < 11 ? `Rare_${k}% of CASH lost` : "Once in a while";
      events.push({ message, timestamp: ago(3 * DAY - i * 17 * MINUTE), trace_id: crypto.randomUUID() });
    }
    await ingest(app, created.apiKey, events);
  });

  /** What a scan of every stored event answers (lower() and LIKE match as ILIKE does). */
  async function reference(search: string, limit: number, offset: number) {
    const p = likePattern(search);
    const rows = await app.sql<{ id: string }[]>`
      select id::text from events where project_id = ${projectId} and lower(message) like lower(${p})
      order by "timestamp" desc, id desc`;
    return { total: rows.length, ids: rows.slice(offset, offset + limit).map((r) => r.id) };
  }

  it("answers every page as a scan of every event does, both ways", async () => {
    const cases: [string, number, number][] = [
      ["damage", 50, 0], ["DAMAGE", 7, 100], ["Script3:", 5, 0], ["Script3:", 5, 18], ["% of cash", 10, 0],
      ["rare_", 100, 40], ["_1", 3, 0], ["once in", 1, 19], ["once in", 5, 20], ["no such text", 10, 0], ["a", 100, 200],
    ];
    for (const [search, limit, offset] of cases) {
      const want = await reference(search, limit, offset);
      // each way; the newest-first read with the matching texts handed over as a list and found again itself
      for (const way of ["per-text", "newest-first", undefined] as const) {
        for (const listedTexts of [undefined, 0]) {
          const got = await listEvents(app.sql, projectId, { search, limit, offset }, { searchRead: { way, listedTexts } });
          expect({ search, limit, offset, way, listedTexts, total: got.total, ids: got.data.map((e) => e.id) }).toEqual({ search, limit, offset, way, listedTexts, ...want });
        }
      }
    }
    // the cases matched something, most of them more than a page
    expect((await reference("damage", 1, 0)).total).toBe(160);
    expect((await reference("% of cash", 1, 0)).total).toBe(60);
  });
});

describe("raw search reading newest first", () => {
  it("reads past the newer events without the term to older matches", async () => {
    const { apiKey, projectId } = await createProject(app.sql, "texts searched in steps");
    // 300 matches, then 900 newer events without the term: the newest events hold no match
    const events = [
      ...repeat(300, { message: "Deep needle in ServerScriptService.Vault" }, true).map((e, i) => ({ ...e, timestamp: ago(2 * DAY - i * MINUTE) })),
      ...repeat(900, { message: "Surface hay" }, true).map((e, i) => ({ ...e, timestamp: ago(DAY - i * MINUTE) })),
    ];
    await ingest(app, apiKey, events);
    for (const [limit, offset] of [[50, 0], [100, 250], [10, 295]]) {
      const r = await listEvents(app.sql, projectId, { search: "deep NEEDLE", limit, offset }, { searchRead: { way: "newest-first" } });
      const want = await app.sql<{ id: string }[]>`
        select id::text from events where project_id = ${projectId} and message ilike '%deep needle%'
        order by "timestamp" desc, id desc limit ${limit} offset ${offset}`;
      expect(r.total).toBe(300);
      expect(r.data.map((e) => e.id)).toEqual(want.map((w) => w.id));
    }
  });
});

describe("raw search over events with microseconds", () => {
  it("finds the page's events by their exact timestamps, both ways", async () => {
    const { projectId } = await createProject(app.sql, "texts with microseconds");
    // written directly, as the bench's generated data is: ingest keeps milliseconds, PostgreSQL keeps microseconds
    await app.sql`
      with g as (
        insert into error_groups (project_id, fingerprint, message, level, first_seen, last_seen, environment, stored_count)
        values (${projectId}, 'micro', 'Micro needle', 'error', now(), now(), 'production', 500) returning id
      )
      insert into events (project_id, group_id, message, level, environment, "timestamp")
      select ${projectId}, g.id, case when i % 5 = 0 then 'Micro needle ' || (i % 3) else 'Micro hay' end, 'error', 'production',
        now() - make_interval(secs => i * 1.234567)
      from g, generate_series(1, 500) i`;
    await app.sql`
      insert into event_messages (project_id, group_id, hash, message, stored_count)
      select project_id, group_id, md5(message)::uuid, message, count(*) from events where project_id = ${projectId} group by 1, 2, message`;
    const want = await app.sql<{ id: string }[]>`
      select id::text from events where project_id = ${projectId} and message ilike '%needle%' order by "timestamp" desc, id desc`;
    expect(want).toHaveLength(100);
    for (const way of ["per-text", "newest-first"] as const) {
      for (const [limit, offset] of [[50, 0], [30, 60]]) {
        const r = await listEvents(app.sql, projectId, { search: "needle", limit, offset }, { searchRead: { way } });
        expect({ way, total: r.total, ids: r.data.map((e) => e.id) }).toEqual({ way, total: 100, ids: want.slice(offset, offset + limit).map((w) => w.id) });
      }
    }
    expect(await mismatches(app.sql)).toEqual([]);
  });
});

describe("migrations 105 and 106", () => {
  const dir = path.resolve(import.meta.dirname, "../../db/migrations");
  let sql: Sql;
  let tmp: string;
  beforeAll(async () => {
    sql = createSql(await freshDatabaseUrl(), 2);
    tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
    for (const f of readdirSync(dir)) if (f < "105") cpSync(path.join(dir, f), path.join(tmp, f));
    await migrate(sql, tmp);
  });
  afterAll(async () => {
    await sql?.end();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("count the texts of the events stored before them, per own group, and drop the pending rows' texts", async () => {
    const project = "6f1c0000-0000-4000-8000-000000000105";
    const issue = "6f1c0000-0000-4000-8000-000000000106";
    const member = "6f1c0000-0000-4000-8000-000000000107";
    await sql`insert into projects (id, name) values (${project}, 'Before texts')`;
    await sql`
      insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, stored_count, merged_into)
      values (${project}, ${issue}, 'fp', 'Old text', 'error', now(), now(), 'production', 5, null),
        (${project}, ${member}, 'fp2', 'Other text', 'error', now(), now(), 'production', 2, ${issue})`;
    // the member's events are stored in the issue it is merged into, with their own group beside
    for (const [message, ms, origin] of [
      ["Old text", 0, null],
      ["Old text", HOUR, null],
      ["Old text", 200 * DAY, null],
      ["Other text", 0, null],
      ["Other text", MINUTE, member],
      ["Other text", 2 * MINUTE, member],
    ] as const) {
      await sql`insert into events (project_id, group_id, origin_group_id, message, level, environment, "timestamp")
        values (${project}, ${issue}, ${origin}, ${message}, 'error', 'production', ${new Date(now - ms)})`;
    }
    // a pending drain row of the events above: they are counted from the events table
    await sql`insert into counter_deltas (project_id, payload)
      values (${project}, ${asJson(sql, { r: [], s: [], t: [["Other text", 2]] })})`;
    await migrate(sql);
    expect(await sql`select group_id, message, stored_count::int as n from event_messages order by message, group_id`).toEqual([
      { group_id: issue, message: "Old text", n: 3 },
      { group_id: issue, message: "Other text", n: 1 },
      { group_id: member, message: "Other text", n: 2 },
    ]);
    expect(await sql`select payload::jsonb as payload from counter_deltas`).toEqual([{ payload: { r: [], s: [] } }]);
    await sql`delete from counter_deltas`;
    expect(await mismatches(sql)).toEqual([]);
  });
});
