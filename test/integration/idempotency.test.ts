import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { groupEvent } from "../../app/ingest/fingerprint.server.js";
import { shardOf } from "../../app/ingest/writer.server.js";
import { pruneIdempotencyKeys } from "../../db/idempotency.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";

/**
 * The Idempotency-Key header on POST /api/ingest, over real HTTP on a real PostgreSQL, with two
 * writer shards so that one request is written in two transactions. A failure of one shard's
 * transaction is injected with a trigger that refuses one group while a flag row exists.
 */

const SHARDS = 2;
let app: TestApp;
let second: TestApp;

beforeAll(async () => {
  app = await startTestApp({ INGEST_SHARDS: String(SHARDS), INGEST_CONCURRENCY: "1" });
  second = await startTestApp({ INGEST_SHARDS: String(SHARDS), INGEST_CONCURRENCY: "1" }, app.databaseUrl);
  await app.sql.unsafe(`
    create table test_faults (message text primary key);
    create function test_fail_flagged() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from test_faults f where f.message = new.message) then
        raise exception 'injected failure for %', new.message;
      end if;
      return new;
    end $$;
    create trigger test_fail_flagged before insert or update on error_groups
      for each row execute function test_fail_flagged();`);
});
afterAll(async () => {
  await second?.close();
  await app?.close();
});

/** A message whose group falls in the given shard of the project (names in letters: grouping drops numbers). */
function messageInShard(projectId: string, shard: number, prefix: string): string {
  for (let i = 0; i < 1000; i++) {
    const message = `${prefix}${i.toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)))}: attempt to index nil`;
    if (shardOf(projectId, groupEvent(message, null).fingerprint, SHARDS) === shard) return message;
  }
  throw new Error("no message found for the shard");
}

async function post(target: TestApp, apiKey: string, body: unknown, key?: string) {
  const res = await target.request("/api/ingest", {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, ...(key === undefined ? {} : { "idempotency-key": key }) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function state(projectId: string) {
  await countersApplied(app.sql);
  const groups = await app.sql<{ message: string; count: number; stored_count: number; user_count: number }[]>`
    select message, count::int, stored_count::int, user_count::int from error_groups where project_id = ${projectId} order by message`;
  const [totals] = await app.sql<{ events: number; rollup: number; keys: number }[]>`
    select (select count(*) from events where project_id = ${projectId})::int as events,
      (select coalesce(sum(count), 0) from rollup_minute where project_id = ${projectId})::int as rollup,
      (select count(*) from ingest_idempotency where project_id = ${projectId})::int as keys`;
  return { groups, ...totals };
}

/** 40 events of a group in shard 0 (10 over the throttle) and 5 of a group in shard 1 with count 3, users on both. */
function twoShardBatch(projectId: string) {
  const a = messageInShard(projectId, 0, "ServerScriptService.Alpha");
  const b = messageInShard(projectId, 1, "ServerScriptService.Beta");
  const errors = [
    ...Array.from({ length: 40 }, (_, i) => ({ message: a, user_id: 100 + (i % 4) })),
    ...Array.from({ length: 5 }, (_, i) => ({ message: b, count: 3, user_id: 200 + i })),
  ];
  return { a, b, body: { errors } };
}

const EXPECTED = { success: true, count: 45, occurrences: 55, throttled: 10 };

describe("Idempotency-Key on POST /api/ingest", () => {
  it("after a partial commit (one shard failed), a retry with the key writes only the missing part and answers the full totals", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const { a, b, body } = twoShardBatch(projectId);
    const key = randomUUID();
    await app.sql`insert into test_faults (message) values (${b})`;
    const failed = await post(app, apiKey, body, key);
    await app.sql`delete from test_faults where message = ${b}`;
    expect(failed.status).toBe(500);
    // shard 0 committed its part (and recorded it), shard 1 rolled back
    const partial = await state(projectId);
    expect(partial.groups).toEqual([{ message: a, count: 40, stored_count: 30, user_count: 4 }]);
    expect(partial.keys).toBe(1);

    const retried = await post(app, apiKey, body, key);
    expect(retried).toEqual({ status: 200, body: EXPECTED });
    const after = await state(projectId);
    expect(after.groups).toEqual([
      { message: a, count: 40, stored_count: 30, user_count: 4 },
      { message: b, count: 15, stored_count: 5, user_count: 5 },
    ]);
    expect(after).toMatchObject({ events: 35, rollup: 55, keys: 2 });

    // the same failure without a key: the client's retry counts the committed part twice
    const { projectId: p2, apiKey: k2 } = await createProject(app.sql);
    const unkeyed = twoShardBatch(p2);
    await app.sql`insert into test_faults (message) values (${unkeyed.b})`;
    expect((await post(app, k2, unkeyed.body)).status).toBe(500);
    await app.sql`delete from test_faults where message = ${unkeyed.b}`;
    expect((await post(app, k2, unkeyed.body)).status).toBe(200);
    expect((await state(p2)).groups.map((g) => g.count)).toEqual([80, 15]);
  });

  it("a repeat after a full commit answers the same body and writes nothing, on any instance and in either header form", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const { body } = twoShardBatch(projectId);
    const key = `batch-${randomUUID()}`;
    const first = await post(app, apiKey, body, key);
    expect(first).toEqual({ status: 200, body: EXPECTED });
    const before = await state(projectId);
    expect(before.keys).toBe(2);
    expect(await post(app, apiKey, body, key)).toEqual(first);
    expect(await post(second, apiKey, body, `"${key}"`)).toEqual(first);
    expect(await state(projectId)).toEqual(before);
    // the key belongs to the project: another project's request with it is written
    const other = await createProject(app.sql);
    expect(await post(app, other.apiKey, twoShardBatch(other.projectId).body, key)).toEqual({ status: 200, body: EXPECTED });
  });

  it("the same key with a different body is a 409 that writes nothing", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const { a, body } = twoShardBatch(projectId);
    const key = randomUUID();
    expect((await post(app, apiKey, body, key)).status).toBe(200);
    const before = await state(projectId);
    const changed = await post(app, apiKey, { errors: [...body.errors, { message: a }] }, key);
    expect(changed).toEqual({ status: 409, body: { error: "conflict", message: expect.stringContaining("different body") } });
    expect(await state(projectId)).toEqual(before);
  });

  it("concurrent identical requests with one key, on two instances, count once and all answer the same", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const { a, b, body } = twoShardBatch(projectId);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => post(i % 2 ? second : app, apiKey, body, key)));
    for (const r of answers) expect(r).toEqual({ status: 200, body: EXPECTED });
    const after = await state(projectId);
    expect(after.groups).toEqual([
      { message: a, count: 40, stored_count: 30, user_count: 4 },
      { message: b, count: 15, stored_count: 5, user_count: 5 },
    ]);
    expect(after).toMatchObject({ events: 35, rollup: 55, keys: 2 });
    expect(await post(app, apiKey, body, key)).toEqual({ status: 200, body: EXPECTED });
  });

  it("refuses a malformed key with 400 before writing anything", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    // too long, a byte outside ASCII (sent as Latin-1), an empty quoted string
    for (const bad of ["x".repeat(256), "\u00fc", '""']) {
      const res = await app.request("/api/ingest", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey, "idempotency-key": bad },
        body: JSON.stringify({ message: "ServerScriptService.A:1: x" }),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: "invalid_payload", message: expect.stringContaining("Idempotency-Key") });
    }
    expect((await state(projectId)).groups).toEqual([]);
  });

  it("keys expire after a day: the retention prune removes them and the key is free again", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const body = { message: "ServerScriptService.Old:1: expired" };
    const key = randomUUID();
    expect((await post(app, apiKey, body, key)).status).toBe(200);
    const fresh = randomUUID();
    expect((await post(app, apiKey, body, fresh)).status).toBe(200);
    await app.sql`update ingest_idempotency set created_at = now() - interval '25 hours' where project_id = ${projectId} and key = ${key}`;
    expect(await pruneIdempotencyKeys(app.sql)).toBeGreaterThanOrEqual(1);
    const keys = await app.sql`select key from ingest_idempotency where project_id = ${projectId}`;
    expect(keys.map((k) => k.key)).toEqual([fresh]);
    expect((await post(app, apiKey, body, key)).status).toBe(200);
    expect((await state(projectId)).groups[0].count).toBe(3);
  });
});
