import { randomBytes, randomUUID } from "node:crypto";
import zlib from "node:zlib";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createApiKey } from "../../app/auth/api-keys.server.js";
import { revokeApiKey } from "../../db/projects.js";
import type { Sql } from "../../db/client.js";
import { connect, createProject, getJson as getJsonNow, postEncoded, postJson, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * POST /api/ingest over real HTTP against a real PostgreSQL, one block per rule of
 * seed/service-api.md (rules 1-7) and SPEC.md section 2. Every test makes its own project, so the
 * per-project throttle windows and table counts of one test never see another's events.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const MIN = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

const ingest = (body: unknown, apiKey?: string) => postJson(app, "/api/ingest", body, apiKey);

/** Rows of every table one ingest writes, for one project. */
async function tableCounts(sql: Sql, projectId: string) {
  await countersApplied(sql);
  const [row] = await sql<Record<string, number>[]>`
    select
      (select count(*) from error_groups where project_id = ${projectId})::int as error_groups,
      (select count(*) from events where project_id = ${projectId})::int as events,
      (select count(*) from traces where project_id = ${projectId})::int as traces,
      (select count(*) from group_users where project_id = ${projectId})::int as group_users,
      (select count(*) from project_users where project_id = ${projectId})::int as project_users,
      (select count(*) from rollup_minute where project_id = ${projectId})::int as rollup_minute,
      (select count(*) from rollup_hour where project_id = ${projectId})::int as rollup_hour`;
  return row;
}

/** Text that does not compress. */
const randomBytesHex = (n: number) => randomBytes(n / 2).toString("hex");

const EMPTY = { error_groups: 0, events: 0, traces: 0, group_users: 0, project_users: 0, rollup_minute: 0, rollup_hour: 0 };

async function groupsOf(projectId: string) {
  await countersApplied(app.sql);
  return app.sql<any[]>`
    select id, fingerprint, message, level, status, count::int, user_count::int, stored_count::int, first_seen, last_seen,
      culprit, environment, regressed_at, resolved_at
    from error_groups where project_id = ${projectId} order by first_seen, id`;
}

async function eventsOf(projectId: string) {
  return app.sql<any[]>`
    select id::int, group_id, message, level, stack_trace, user_id::text, player_name, trace_id::text, job_id,
      place_id::text, game_version, environment, context, tags, count, "timestamp", received_at
    from events where project_id = ${projectId} order by id`;
}

/** Events of several groups in message order (a batch's groups may commit in any order: one transaction per writer shard). */
const byMessage = <T extends { message: string }>(rows: T[]) => [...rows].sort((a, b) => (a.message < b.message ? -1 : a.message > b.message ? 1 : 0));

/** The group's public shape, through the API. */
async function apiGroup(apiKey: string, groupId: string) {
  const r = await getJson(app, `/api/v1/errors/${groupId}`, apiKey);
  expect(r.status).toBe(200);
  return r.body.group;
}

function expectErrorBody(body: any, code: string) {
  expect(body).toEqual(expect.objectContaining({ error: code, message: expect.any(String) }));
  expect(body.message.length).toBeGreaterThan(0);
}

/** `n` events of one fingerprint: the number in the message changes, the grouping does not. */
const sameGroup = (n: number, extra: Record<string, unknown> = {}, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ message: `index ${from + i} out of range`, ...extra }));

describe("response shape", () => {
  it("answers {success, count, occurrences, throttled} for a single event and a batch", async () => {
    const { apiKey } = await createProject(app.sql);
    const single = await ingest({ message: "shape single" }, apiKey);
    expect(single.status).toBe(200);
    expect(single.headers.get("content-type")).toMatch(/^application\/json/);
    expect(single.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 0 });

    const batch = await ingest({ errors: [{ message: "shape a" }, { message: "shape b", count: 4 }] }, apiKey);
    expect(batch.status).toBe(200);
    expect(batch.body).toEqual({ success: true, count: 2, occurrences: 5, throttled: 0 });
  });

  it("accepts content-type application/json with a charset", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const res = await app.request("/api/ingest", {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", "x-api-key": apiKey },
      body: JSON.stringify({ message: "with charset" }),
    });
    expect(res.status).toBe(200);
    expect((await tableCounts(app.sql, projectId)).events).toBe(1);
  });
});

describe("compressed bodies (Content-Encoding)", () => {
  const gzip = (body: unknown) => zlib.gzipSync(JSON.stringify(body));

  it("stores and counts a gzip batch, also sent as x-gzip", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const batch = { errors: [{ message: "gzip a" }, { message: "gzip b", count: 3 }] };
    const r = await postEncoded(app, "/api/ingest", gzip(batch), "gzip", apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, count: 2, occurrences: 4, throttled: 0 });
    const x = await postEncoded(app, "/api/ingest", gzip({ message: "x-gzip c" }), "x-gzip", apiKey);
    expect(x.status).toBe(200);
    expect(byMessage(await eventsOf(projectId)).map((e) => [e.message, e.count])).toEqual([
      ["gzip a", 1],
      ["gzip b", 3],
      ["x-gzip c", 1],
    ]);
    expect((await groupsOf(projectId)).map((g) => g.count).reduce((a, b) => a + b, 0)).toBe(5);
  });

  it("answers 413 to a gzip bomb, judged on the decompressed size, and writes nothing", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    // 50 MB of zeros compress to about 50 KB: far under MAX_BODY_BYTES (1 MiB) as sent
    const bomb = zlib.gzipSync(Buffer.alloc(50 * 1024 * 1024), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const r = await postEncoded(app, "/api/ingest", bomb, "gzip", apiKey);
    expect(r.status).toBe(413);
    expectErrorBody(r.body, "payload_too_large");
    expect(r.body.message).toMatch(/decompressed/);
    // the compressed bytes are held to the same limit
    const noise = zlib.gzipSync(randomBytesHex(2 * 1024 * 1024), { level: 0 });
    expect((await postEncoded(app, "/api/ingest", noise, "gzip", apiKey)).status).toBe(413);
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("answers 400 to corrupt gzip and 415 to an encoding it does not decode, writing nothing", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const good = gzip({ message: "never stored" });
    const corrupt = Buffer.concat([good.subarray(0, 12), Buffer.alloc(24, 7)]);
    const bad = await postEncoded(app, "/api/ingest", corrupt, "gzip", apiKey);
    expect(bad.status).toBe(400);
    expectErrorBody(bad.body, "invalid_payload");
    expect(bad.body.message).toMatch(/gzip/);
    const plain = await postEncoded(app, "/api/ingest", Buffer.from(JSON.stringify({ message: "plain" })), "gzip", apiKey);
    expect(plain.status).toBe(400);
    const unknown = await postEncoded(app, "/api/ingest", good, "zstd", apiKey);
    expect(unknown.status).toBe(415);
    expectErrorBody(unknown.body, "unsupported_media_type");
    expect(unknown.body.message).toMatch(/zstd.*gzip/);
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });
});

describe("rule 1: a batch of more than 100 events is a 400", () => {
  it("rejects 101 events with the error body and stores nothing; 100 are accepted", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const events = Array.from({ length: 101 }, (_, i) => ({ message: `batch item ${i}`, trace_id: randomUUID(), user_id: i }));
    const r = await ingest({ errors: events }, apiKey);
    expect(r.status).toBe(400);
    expectErrorBody(r.body, "invalid_payload");
    expect(r.body.details).toEqual([expect.objectContaining({ path: "errors", message: expect.stringContaining("100") })]);
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);

    const ok = await ingest({ errors: events.slice(0, 100) }, apiKey);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true, count: 100, occurrences: 100, throttled: 0 });
    expect((await tableCounts(app.sql, projectId)).events).toBe(100);
  });
});

describe("rule 2: an invalid payload is a 400 and nothing is written", () => {
  it("one bad event in a batch of 5 rejects all five, naming the index and field", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const events = [
      { message: "good 0", trace_id: randomUUID(), user_id: 1 },
      { message: "good 1" },
      { message: "good 2", count: 3 },
      { message: "bad 3", level: "fatal" },
      { message: "good 4" },
    ];
    const r = await ingest({ errors: events }, apiKey);
    expect(r.status).toBe(400);
    expectErrorBody(r.body, "invalid_payload");
    expect(r.body.details).toEqual([{ path: "errors[3].level", message: expect.any(String) }]);
    expect(r.body.message).toContain("errors[3].level");
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a body that is not JSON is a 400 invalid_payload, never a 500", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    for (const text of ['{"message": "unterminated"', "message=boom", "{'message': 'single quotes'}", "\u0000"]) {
      const r = await ingest(text, apiKey);
      expect(r.status, text).toBe(400);
      expectErrorBody(r.body, "invalid_payload");
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("an empty body, a JSON null and a bare string are 400", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    for (const text of ["", "   ", "null", '"boom"', "42"]) {
      const r = await ingest(text, apiKey);
      expect(r.status, JSON.stringify(text)).toBe(400);
      expectErrorBody(r.body, "invalid_payload");
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a top-level array is a 400", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const r = await ingest([{ message: "a" }, { message: "b" }], apiKey);
    expect(r.status).toBe(400);
    expectErrorBody(r.body, "invalid_payload");
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("an empty batch and a batch whose errors is not an array are 400", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    for (const body of [{ errors: [] }, { errors: { message: "x" } }]) {
      const r = await ingest(body, apiKey);
      expect(r.status).toBe(400);
      expectErrorBody(r.body, "invalid_payload");
      expect(r.body.details).toEqual([expect.objectContaining({ path: "errors" })]);
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a missing or empty message, a bad trace_id, a string count and an unparseable timestamp are 400", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const cases: [Record<string, unknown>, string][] = [
      [{ level: "error" }, "message"],
      [{ message: "   " }, "message"],
      [{ message: "x", trace_id: "not-a-uuid" }, "trace_id"],
      [{ message: "x", count: "3" }, "count"],
      [{ message: "x", timestamp: "yesterday" }, "timestamp"],
      [{ message: "x", user_id: -1 }, "user_id"],
      [{ message: "x", tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags"],
      [{ message: "x", context: { blob: "x".repeat(17 * 1024) } }, "context"],
    ];
    for (const [event, path] of cases) {
      const r = await ingest(event, apiKey);
      expect(r.status, path).toBe(400);
      expectErrorBody(r.body, "invalid_payload");
      expect(r.body.details.map((d: any) => d.path)).toContain(path);
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a content type other than JSON is a 415 unsupported_media_type", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    for (const type of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const res = await app.request("/api/ingest", {
        method: "POST",
        headers: { ...(type ? { "content-type": type } : {}), "x-api-key": apiKey },
        body: type === undefined ? new Blob([JSON.stringify({ message: "x" })]) : JSON.stringify({ message: "x" }),
      });
      expect(res.status, String(type)).toBe(415);
      expectErrorBody(await res.json(), "unsupported_media_type");
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  describe("body size limit (MAX_BODY_BYTES=2048)", () => {
    let small: TestApp;
    beforeAll(async () => {
      small = await startTestApp({ MAX_BODY_BYTES: "2048" });
    });
    afterAll(() => small?.close());

    it("a body over the limit is a 413 payload_too_large, with or without Content-Length", async () => {
      const { apiKey, projectId } = await createProject(small.sql);
      const big = JSON.stringify({ message: "x".repeat(3000) });

      const declared = await postJson(small, "/api/ingest", big, apiKey);
      expect(declared.status).toBe(413);
      expectErrorBody(declared.body, "payload_too_large");

      // chunked upload: no Content-Length, the limit is enforced while streaming, and the client
      // still gets the 413 (not a reset connection) while it is sending
      const bytes = new TextEncoder().encode(JSON.stringify({ message: "x".repeat(200_000) }));
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 500) c.enqueue(bytes.subarray(i, i + 500));
          c.close();
        },
      });
      const res = await small.request("/api/ingest", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": apiKey },
        body: stream,
        duplex: "half",
      } as RequestInit);
      expect(res.status).toBe(413);
      expectErrorBody(await res.json(), "payload_too_large");
      expect(await tableCounts(small.sql, projectId)).toEqual(EMPTY);

      // just under the limit is accepted
      const fits = JSON.stringify({ message: "y".repeat(1900) });
      expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(2048);
      const ok = await postJson(small, "/api/ingest", fits, apiKey);
      expect(ok.status).toBe(200);
      expect((await tableCounts(small.sql, projectId)).events).toBe(1);
    });
  });
});

describe("rule 3: a missing or invalid key is a 401", () => {
  it("a missing key is a 401 unauthorized, checked before the body", async () => {
    const { projectId } = await createProject(app.sql);
    const r = await ingest({ message: "no key" });
    expect(r.status).toBe(401);
    expectErrorBody(r.body, "unauthorized");
    // an invalid body without a key is still a 401: nothing about the payload is revealed
    const bad = await ingest("not json");
    expect(bad.status).toBe(401);
    expectErrorBody(bad.body, "unauthorized");
    const blank = await postJson(app, "/api/ingest", { message: "blank key" }, "   ");
    expect(blank.status).toBe(401);
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a wrong key is a 401", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    for (const key of ["rbx_not-a-real-key", apiKey.slice(0, -1), apiKey + "x", apiKey.toUpperCase()]) {
      const r = await ingest({ message: "wrong key" }, key);
      expect(r.status).toBe(401);
      expectErrorBody(r.body, "unauthorized");
    }
    expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);
  });

  it("a revoked key stops working (every instance's cache is cleared), other keys keep working", async () => {
    const { apiKey, projectId, keyId } = await createProject(app.sql);
    const second = await createApiKey(app.sql, projectId, "rotation");
    expect((await ingest({ message: "before revoke" }, apiKey)).status).toBe(200); // now cached

    // revoke from another connection, as another instance or the CLI would
    const other = connect(app.databaseUrl);
    try {
      expect(await revokeApiKey(other, keyId)).toBe(true);
    } finally {
      await other.end();
    }
    let status = 0;
    for (let i = 0; i < 40; i++) {
      const r = await ingest({ message: "after revoke" }, apiKey);
      status = r.status;
      if (status === 401) {
        expectErrorBody(r.body, "unauthorized");
        break;
      }
      expect(status).toBe(200);
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(status).toBe(401);
    expect((await ingest({ message: "still revoked" }, apiKey)).status).toBe(401);
    expect((await ingest({ message: "rotated key" }, second.apiKey)).status).toBe(200);
    const messages = (await eventsOf(projectId)).map((e) => e.message);
    expect(messages).toContain("before revoke");
    expect(messages).toContain("rotated key");
    expect(messages).not.toContain("still revoked");
  });

  it("a key only reaches its own project", async () => {
    const a = await createProject(app.sql, "Game A");
    const b = await createProject(app.sql, "Game B");
    expect((await ingest({ message: "for A" }, a.apiKey)).status).toBe(200);
    expect((await tableCounts(app.sql, a.projectId)).events).toBe(1);
    expect(await tableCounts(app.sql, b.projectId)).toEqual(EMPTY);
  });
});

describe("rule 4: a storage failure is a 500 with no internals and nothing half-written", () => {
  it("rolls back the whole batch when the events insert fails", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const fn = `fail_events_${projectId.replace(/-/g, "")}`;
    // fails only this project's inserts, with a message full of internals that must not leak
    await app.sql.unsafe(`
      create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.project_id = '${projectId}' then
          raise exception 'postgres: relation "events" insert failed (simulated) select * from secrets';
        end if;
        return new;
      end $$;
      create trigger ${fn} before insert on events for each row execute function ${fn}();`);
    try {
      const trace = randomUUID();
      const batch = {
        errors: [
          { message: "doomed a", user_id: 1, trace_id: trace },
          { message: "doomed b", user_id: 2, count: 3 },
          { message: "doomed a", user_id: 3 },
        ],
      };
      const r = await ingest(batch, apiKey);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: "internal", message: expect.any(String) });
      for (const leak of [/postgres/i, /relation/i, /events/i, /select/i, /simulated/i, /insert/i]) {
        expect(r.body.message).not.toMatch(leak);
      }
      // the group upserts, users, trace and rollups of that batch were rolled back with it
      expect(await tableCounts(app.sql, projectId)).toEqual(EMPTY);

      // the server is still up and other projects still ingest
      const other = await createProject(app.sql);
      expect((await ingest({ message: "unaffected" }, other.apiKey)).status).toBe(200);
      expect((await getJson(app, "/api/ingest")).body).toEqual({ status: "ok" });
    } finally {
      await app.sql.unsafe(`drop trigger ${fn} on events; drop function ${fn}();`);
    }
    // with storage back, the same project ingests and only the new occurrence counts
    const again = await ingest({ message: "doomed a" }, apiKey);
    expect(again.status).toBe(200);
    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(1);
    expect(groups[0].count).toBe(1);
    expect((await tableCounts(app.sql, projectId)).events).toBe(1);
  });

  it("one request's storage failure does not fail concurrent requests written in the same transaction", async () => {
    const bad = await createProject(app.sql);
    const good = await createProject(app.sql);
    const fn = `fail_events_${bad.projectId.replace(/-/g, "")}`;
    await app.sql.unsafe(`
      create function ${fn}() returns trigger language plpgsql as $$
      begin
        if new.project_id = '${bad.projectId}' then raise exception 'simulated failure'; end if;
        return new;
      end $$;
      create trigger ${fn} before insert on events for each row execute function ${fn}();`);
    try {
      // more requests at once than the writer runs in parallel, so they share transactions
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => {
          const who = i % 2 === 0 ? bad : good;
          return ingest({ errors: [{ message: `shared write ${i}`, user_id: i }] }, who.apiKey).then((r) => ({ who, r }));
        }),
      );
      for (const { who, r } of results) {
        if (who === good) expect(r.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 0 });
        else expect(r.body).toEqual({ error: "internal", message: expect.any(String) });
      }
    } finally {
      await app.sql.unsafe(`drop trigger ${fn} on events; drop function ${fn}();`);
    }
    expect(await tableCounts(app.sql, bad.projectId)).toEqual(EMPTY);
    const counts = await tableCounts(app.sql, good.projectId);
    expect(counts).toMatchObject({ error_groups: 1, events: 20, group_users: 20, project_users: 20 });
    expect((await groupsOf(good.projectId))[0]).toMatchObject({ count: 20, user_count: 20 });
  });

  it("a database that goes away is a 500, not a crash; the health check keeps answering", async () => {
    const doomed = await startTestApp();
    try {
      const { apiKey } = await createProject(doomed.sql);
      expect((await postJson(doomed, "/api/ingest", { message: "before" }, apiKey)).status).toBe(200); // key now cached

      const admin = postgres(inject("adminDatabaseUrl"), { max: 1, onnotice: () => {} });
      try {
        const name = new URL(doomed.databaseUrl).pathname.slice(1);
        await admin.unsafe(`drop database "${name}" with (force)`);
      } finally {
        await admin.end();
      }

      const r = await postJson(doomed, "/api/ingest", { message: "after" }, apiKey);
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: "internal", message: expect.any(String) });
      expect(r.body.message).not.toMatch(/postgres|database|relation|ECONN|does not exist/i);

      // a key that was never cached cannot be checked either: still a 500, not a 401
      const unknown = await postJson(doomed, "/api/ingest", { message: "after" }, "rbx_unknown-key");
      expect(unknown.status).toBe(500);
      expect(unknown.body).toEqual({ error: "internal", message: expect.any(String) });

      // validation still answers before any storage is touched
      const invalid = await postJson(doomed, "/api/ingest", { errors: [] }, apiKey);
      expect(invalid.status).toBe(400);

      expect((await getJsonNow(doomed, "/api/ingest")).body).toEqual({ status: "ok" });
      const ready = await getJsonNow(doomed, "/api/ready");
      expect(ready.status).toBe(503);
    } finally {
      await doomed.close();
    }
  });

  it("recovers after its database connections are terminated", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    expect((await ingest({ message: "before terminate" }, apiKey)).status).toBe(200);
    const admin = postgres(inject("adminDatabaseUrl"), { max: 1, onnotice: () => {} });
    try {
      const name = new URL(app.databaseUrl).pathname.slice(1);
      const killed = await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`;
      expect(killed.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    // any answer while the pool reconnects is a 200 or the clean 500, never a crash or a hang;
    // the pool reconnects, so within a few requests ingest works again
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await ingest({ message: `after terminate ${i}` }, apiKey);
      statuses.push(r.status);
      if (r.status === 500) expect(r.body).toEqual({ error: "internal", message: expect.any(String) });
      else expect(r.status).toBe(200);
    }
    expect(statuses.at(-1)).toBe(200);
    const stored = (await eventsOf(projectId)).length;
    expect(stored).toBe(1 + statuses.filter((s) => s === 200).length);
  });
});

describe("rule 5: at most 30 raw rows per project and fingerprint in a rolling 60 s", () => {
  it("stores 30 of 31 events, counts the 31st, and lets it move last_seen", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const base = Date.now() - 10 * MIN;
    for (let i = 0; i < 30; i++) {
      const r = await ingest({ message: `index ${i} out of range`, timestamp: iso(base + i * 1000) }, apiKey);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 0 });
    }
    const last = base + 5 * MIN;
    const r31 = await ingest({ message: "index 30 out of range", timestamp: iso(last), user_id: 99 }, apiKey);
    expect(r31.status).toBe(200);
    expect(r31.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 1 });

    const events = await eventsOf(projectId);
    expect(events).toHaveLength(30);
    expect(events.map((e) => e.message)).not.toContain("index 30 out of range");
    const [g] = await groupsOf(projectId);
    expect(g.count).toBe(31);
    expect(g.stored_count).toBe(30);
    expect(g.last_seen.toISOString()).toBe(iso(last));
    expect(g.user_count).toBe(1); // the throttled event's user still counts

    // the API agrees
    const api = await apiGroup(apiKey, g.id);
    expect(api).toMatchObject({ count: 31, last_seen: iso(last) });
    const raw = await getJson(app, "/api/v1/errors", apiKey);
    expect(raw.body.total).toBe(30);
  });

  it("a batch of 40 of one fingerprint stores the first 30 and throttles 10", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const r = await ingest({ errors: sameGroup(40) }, apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ success: true, count: 40, occurrences: 40, throttled: 10 });
    const events = await eventsOf(projectId);
    expect(events.map((e) => e.message)).toEqual(sameGroup(30).map((e) => e.message));
    const [g] = await groupsOf(projectId);
    expect(g.count).toBe(40);
  });

  it("the window is per fingerprint and per project", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    expect((await ingest({ errors: sameGroup(30) }, apiKey)).body.throttled).toBe(0);
    expect((await ingest({ message: "index 99 out of range" }, apiKey)).body.throttled).toBe(1);

    // another fingerprint in the same project still stores
    const b = await ingest({ errors: Array.from({ length: 5 }, (_, i) => ({ message: `key ${i} not found` })) }, apiKey);
    expect(b.body).toEqual({ success: true, count: 5, occurrences: 5, throttled: 0 });

    // a mixed batch: each fingerprint against its own window
    const mixed = await ingest({ errors: [{ message: "index 1 out of range" }, { message: "key 9 not found" }, { message: "brand new" }] }, apiKey);
    expect(mixed.body).toEqual({ success: true, count: 3, occurrences: 3, throttled: 1 });

    // the same fingerprint in another project has its own window
    const other = await createProject(app.sql);
    expect((await ingest({ errors: sameGroup(30) }, other.apiKey)).body.throttled).toBe(0);

    const groups = await groupsOf(projectId);
    const byMsg = Object.fromEntries(groups.map((g) => [g.message, g]));
    expect(byMsg["index 0 out of range"]).toMatchObject({ count: 32, stored_count: 30 });
    expect(byMsg["key 0 not found"]).toMatchObject({ count: 6, stored_count: 6 });
    expect(byMsg["brand new"]).toMatchObject({ count: 1, stored_count: 1 });
    expect((await eventsOf(projectId)).length).toBe(37);
  });

  it("an event with count n stores one row carrying n and adds n to the group, stored or throttled", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const first = await ingest({ message: "index 1 out of range", count: 5 }, apiKey);
    expect(first.body).toEqual({ success: true, count: 1, occurrences: 5, throttled: 0 });
    let events = await eventsOf(projectId);
    expect(events).toHaveLength(1);
    expect(events[0].count).toBe(5);
    expect((await groupsOf(projectId))[0].count).toBe(5);

    // count does not use up more of the window than one row
    const fill = await ingest({ errors: sameGroup(29, {}, 2) }, apiKey);
    expect(fill.body).toEqual({ success: true, count: 29, occurrences: 29, throttled: 0 });

    const over = await ingest({ message: "index 77 out of range", count: 7 }, apiKey);
    expect(over.body).toEqual({ success: true, count: 1, occurrences: 7, throttled: 1 });
    events = await eventsOf(projectId);
    expect(events).toHaveLength(30);
    const [g] = await groupsOf(projectId);
    expect(g.count).toBe(5 + 29 + 7);
  });

  it("occurrences is the sum of the clamped counts, and the group and stats count the same", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const counts = [0, 5000, 2.7, undefined, -3, 1000, 1];
    const r = await ingest({ errors: counts.map((count) => ({ message: "index 5 out of range", ...(count === undefined ? {} : { count }) })) }, apiKey);
    const clamped = [1, 1000, 2, 1, 1, 1000, 1];
    const sum = clamped.reduce((a, b) => a + b, 0);
    expect(r.body).toEqual({ success: true, count: counts.length, occurrences: sum, throttled: 0 });
    expect((await eventsOf(projectId)).map((e) => e.count)).toEqual(clamped);
    expect((await groupsOf(projectId))[0].count).toBe(sum);
    const [{ minute, hour }] = await app.sql`
      select (select sum(count) from rollup_minute where project_id = ${projectId})::int as minute,
             (select sum(count) from rollup_hour where project_id = ${projectId})::int as hour`;
    expect(minute).toBe(sum);
    expect(hour).toBe(sum);
    const stats = await getJson(app, "/api/v1/stats?timeframe=1h", apiKey);
    expect(stats.body.total_errors).toBe(sum);
  });
});

describe("rule 6: events with a trace_id are exempt from the throttle", () => {
  it("traced events are stored past the limit and do not use up the window", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const trace = randomUUID();
    // 10 traced events first: they must not count against the 30 untraced rows
    const traced = await ingest({ errors: sameGroup(10, { trace_id: trace }) }, apiKey);
    expect(traced.body).toEqual({ success: true, count: 10, occurrences: 10, throttled: 0 });

    const untraced = await ingest({ errors: sameGroup(31, {}, 100) }, apiKey);
    expect(untraced.body).toEqual({ success: true, count: 31, occurrences: 31, throttled: 1 });

    // the window is full, and traced events are still stored
    const more = await ingest({ errors: sameGroup(5, { trace_id: randomUUID() }, 200) }, apiKey);
    expect(more.body).toEqual({ success: true, count: 5, occurrences: 5, throttled: 0 });
    // in a mixed batch only the untraced one is throttled
    const mixed = await ingest({ errors: [{ message: "index 1 out of range" }, { message: "index 2 out of range", trace_id: trace }] }, apiKey);
    expect(mixed.body).toEqual({ success: true, count: 2, occurrences: 2, throttled: 1 });

    const events = await eventsOf(projectId);
    expect(events.filter((e) => e.trace_id === null)).toHaveLength(30);
    expect(events.filter((e) => e.trace_id !== null)).toHaveLength(16);
    const [g] = await groupsOf(projectId);
    expect(g.count).toBe(10 + 31 + 5 + 2);
    expect(g.stored_count).toBe(46);
    const [t] = await app.sql`select event_count::int from traces where project_id = ${projectId} and trace_id = ${trace}`;
    expect(t.event_count).toBe(11);
  });

  it("upserts the trace; GET /api/v1/traces/:id lists its events across groups in time order", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const trace = randomUUID();
    const upperBraced = `{${trace.toUpperCase()}}`;
    const t0 = Date.now() - 30 * MIN;
    // sent out of time order, with the trace id in three spellings
    const a = await ingest({ message: "Trade failed: inventory full", trace_id: upperBraced, timestamp: iso(t0 + 2000), user_id: 1 }, apiKey);
    expect(a.status).toBe(200);
    const b = await ingest(
      { errors: [{ message: "DataStore request dropped", trace_id: trace.toUpperCase(), timestamp: iso(t0), level: "warn" }] },
      apiKey,
    );
    expect(b.status).toBe(200);
    const c = await ingest({ message: "Trade failed: inventory full", trace_id: trace, timestamp: iso(t0 + 1000) }, apiKey);
    expect(c.status).toBe(200);
    // an untraced event of the same group is not part of the trace
    await ingest({ message: "Trade failed: inventory full" }, apiKey);

    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(2);
    const gTrade = groups.find((g) => g.message.startsWith("Trade"))!;
    const gStore = groups.find((g) => g.message.startsWith("DataStore"))!;

    for (const id of [trace, trace.toUpperCase(), upperBraced, encodeURIComponent(upperBraced)]) {
      const r = await getJson(app, `/api/v1/traces/${id}`, apiKey);
      expect(r.status, id).toBe(200);
      expect(r.body.trace).toMatchObject({ trace_id: trace, event_count: 3, first_seen: iso(t0), last_seen: iso(t0 + 2000) });
      expect([...r.body.trace.group_ids].sort()).toEqual([gTrade.id, gStore.id].sort());
      expect(r.body.events.map((e: any) => [e.timestamp, e.group_id, e.trace_id])).toEqual([
        [iso(t0), gStore.id, trace],
        [iso(t0 + 1000), gTrade.id, trace],
        [iso(t0 + 2000), gTrade.id, trace],
      ]);
    }

    // a second batch extends the same trace rather than creating another
    await ingest({ message: "Trade failed: inventory full", trace_id: trace, timestamp: iso(t0 - 1000) }, apiKey);
    const r = await getJson(app, `/api/v1/traces/${trace}`, apiKey);
    expect(r.body.trace).toMatchObject({ event_count: 4, first_seen: iso(t0 - 1000), last_seen: iso(t0 + 2000) });
    expect((await tableCounts(app.sql, projectId)).traces).toBe(1);

    // not visible to another project, and an unknown trace is a 404
    const other = await createProject(app.sql);
    expect((await getJson(app, `/api/v1/traces/${trace}`, other.apiKey)).status).toBe(404);
    expect((await getJson(app, `/api/v1/traces/${randomUUID()}`, apiKey)).status).toBe(404);
  });
});

describe("rule 7: groups are created and updated", () => {
  it("a new group carries the SPEC fields; later occurrences update them", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const t0 = Date.now() - 60 * MIN;
    const first = {
      message: "Players.Alice.PlayerGui.Hud:5: attempt to index nil with 'Health'",
      stack_trace: "Players.Alice.PlayerGui.Hud:5 function update\nServerScriptService.Combat:12",
      level: "warning",
      user_id: 1,
      environment: "staging",
      timestamp: iso(t0),
    };
    expect((await ingest(first, apiKey)).status).toBe(200);
    let [g] = await groupsOf(projectId);
    let api = await apiGroup(apiKey, g.id);
    expect(api).toEqual(
      expect.objectContaining({
        id: g.id,
        fingerprint: expect.stringMatching(/^[0-9a-f]{32}$/),
        message: first.message,
        level: "warn",
        status: "open",
        count: 1,
        user_count: 1,
        first_seen: iso(t0),
        last_seen: iso(t0),
        culprit: "Players.<player>.PlayerGui.Hud",
        environment: "staging",
        regressed_at: null,
      }),
    );

    // another player, same code: same group; the first message stays, the level goes to the most severe
    expect(
      (
        await ingest(
          { ...first, message: first.message.replace("Alice", "Bob"), stack_trace: first.stack_trace.replace("Alice", "Bob"), level: "ERROR", user_id: "2", environment: "production", timestamp: iso(t0 + MIN) },
          apiKey,
        )
      ).status,
    ).toBe(200);
    // an older occurrence: last_seen and environment do not move backwards, first_seen does
    expect((await ingest({ ...first, level: "info", user_id: 1, environment: "dev", timestamp: iso(t0 - MIN) }, apiKey)).status).toBe(200);

    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(1);
    g = groups[0];
    api = await apiGroup(apiKey, g.id);
    expect(api).toMatchObject({
      message: first.message,
      level: "error",
      status: "open",
      count: 3,
      user_count: 2,
      first_seen: iso(t0 - MIN),
      last_seen: iso(t0 + MIN),
      environment: "production",
      culprit: "Players.<player>.PlayerGui.Hud",
    });

    // a different script line is a different group
    expect((await ingest({ ...first, message: first.message.replace(":5:", ":6:"), stack_trace: undefined }, apiKey)).status).toBe(200);
    expect(await groupsOf(projectId)).toHaveLength(2);
  });

  it("user_count counts distinct users over all occurrences, throttled ones included", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    await ingest({ errors: sameGroup(30, { user_id: 1 }) }, apiKey);
    const over = await ingest({ errors: [{ message: "index 1 out of range", user_id: 2 }, { message: "index 2 out of range", user_id: "3" }, { message: "index 3 out of range", user_id: "2" }, { message: "index 4 out of range" }] }, apiKey);
    expect(over.body.throttled).toBe(4);
    const [g] = await groupsOf(projectId);
    expect(g).toMatchObject({ count: 34, user_count: 3, stored_count: 30 });
    const stats = await getJson(app, "/api/v1/stats?timeframe=1h", apiKey);
    expect(stats.body.affected_users).toBe(3);
  });

  it("defaults: level error, environment production, timestamp = receive time", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const before = Date.now();
    expect((await ingest({ message: "defaults please" }, apiKey)).status).toBe(200);
    const after = Date.now();
    const [e] = await eventsOf(projectId);
    expect(e).toMatchObject({ level: "error", environment: "production" });
    expect(e.timestamp.getTime()).toBeGreaterThanOrEqual(before);
    expect(e.timestamp.getTime()).toBeLessThanOrEqual(after);
    const [g] = await groupsOf(projectId);
    expect(g).toMatchObject({ level: "error", environment: "production", status: "open", culprit: null });
  });

  it("a timestamp more than 5 minutes in the future is clamped to the receive time; within 5 minutes it is kept", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const before = Date.now();
    const far = await ingest({ message: "clock far ahead", timestamp: iso(before + 60 * MIN) }, apiKey);
    const after = Date.now();
    expect(far.status).toBe(200);
    const near = before + 2 * MIN;
    expect((await ingest({ message: "clock slightly ahead", timestamp: iso(near) }, apiKey)).status).toBe(200);

    const events = await eventsOf(projectId);
    const farRow = events.find((e) => e.message === "clock far ahead")!;
    expect(farRow.timestamp.getTime()).toBeGreaterThanOrEqual(before);
    expect(farRow.timestamp.getTime()).toBeLessThanOrEqual(after);
    expect(events.find((e) => e.message === "clock slightly ahead")!.timestamp.toISOString()).toBe(iso(near));
    const farGroup = (await groupsOf(projectId)).find((g) => g.message === "clock far ahead")!;
    expect(farGroup.last_seen.getTime()).toBeLessThanOrEqual(after);
  });

  it("an occurrence in a resolved group reopens it and sets regressed_at", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    await ingest({ message: "fixed, or so we thought" }, apiKey);
    const [g0] = await groupsOf(projectId);
    await app.sql`update error_groups set status = 'resolved', resolved_at = now() where project_id = ${projectId} and id = ${g0.id}`;
    expect((await apiGroup(apiKey, g0.id)).status).toBe("resolved");

    expect((await ingest({ message: "fixed, or so we thought" }, apiKey)).status).toBe(200);
    const api = await apiGroup(apiKey, g0.id);
    expect(api).toMatchObject({ id: g0.id, status: "open", count: 2, resolved_at: null });
    expect(typeof api.regressed_at).toBe("string");
    expect(Date.parse(api.regressed_at)).not.toBeNaN();

    // a further occurrence of the open group does not move regressed_at
    await ingest({ message: "fixed, or so we thought" }, apiKey);
    expect((await apiGroup(apiKey, g0.id)).regressed_at).toBe(api.regressed_at);
  });

  it("a throttled occurrence reopens a resolved group too", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    await ingest({ errors: sameGroup(30) }, apiKey);
    const [g0] = await groupsOf(projectId);
    await app.sql`update error_groups set status = 'resolved', resolved_at = now() where project_id = ${projectId} and id = ${g0.id}`;
    const r = await ingest({ message: "index 1 out of range" }, apiKey);
    expect(r.body.throttled).toBe(1);
    expect(await apiGroup(apiKey, g0.id)).toMatchObject({ status: "open", count: 31 });
  });

  it("occurrences in an ignored group still count, and it stays ignored", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    await ingest({ message: "noisy but harmless" }, apiKey);
    const [g0] = await groupsOf(projectId);
    await app.sql`update error_groups set status = 'ignored' where project_id = ${projectId} and id = ${g0.id}`;
    const r = await ingest({ message: "noisy but harmless", count: 3, user_id: 8 }, apiKey);
    expect(r.body).toEqual({ success: true, count: 1, occurrences: 3, throttled: 0 });
    expect(await apiGroup(apiKey, g0.id)).toMatchObject({ status: "ignored", count: 4, user_count: 1, regressed_at: null });
    expect((await eventsOf(projectId)).length).toBe(2);
  });

  it("with the default single writer queue a request's events of several groups commit together, their ids in the body's order", async () => {
    expect(app.services.config.ingestShards).toBe(1);
    const { apiKey, projectId } = await createProject(app.sql);
    const messages = ["zeta failed", "alpha failed", "mid failed", "alpha failed", "zeta failed", "omega failed", "beta failed", "kappa failed"];
    const r = await ingest({ errors: messages.map((message) => ({ message })) }, apiKey);
    expect(r.status).toBe(200);
    const events = await eventsOf(projectId);
    expect(events.map((e) => e.message)).toEqual(messages);
  });

  it("a message over 8 KiB is truncated on a character boundary; a stack over 64 KiB too", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const ascii = "x".repeat(9000);
    const multibyte = "\u00e9".repeat(5000) + "tail"; // 10004 bytes
    const stack = "s".repeat(70 * 1024);
    const r = await ingest({ errors: [{ message: ascii, stack_trace: stack }, { message: multibyte }] }, apiKey);
    expect(r.status).toBe(200);
    // one transaction per writer shard: ids follow the batch's order only within a group
    const events = byMessage(await eventsOf(projectId));
    expect(events[0].message).toBe("x".repeat(8192));
    expect(events[0].stack_trace).toBe("s".repeat(64 * 1024));
    expect(events[1].message).toBe("\u00e9".repeat(4096));
    const groups = await groupsOf(projectId);
    expect(groups.map((g) => g.message).sort()).toEqual(["x".repeat(8192), "\u00e9".repeat(4096)].sort());
  });

  it("stores the event fields normalized and ignores unknown fields", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const trace = randomUUID();
    const event = {
      message: "ServerScriptService.Shop:40: purchase failed",
      level: "Info",
      stack_trace: "ServerScriptService.Shop:40 function buy",
      user_id: "123456789",
      player_name: "Builderman",
      trace_id: `{${trace.toUpperCase()}}`,
      job_id: "a1b2c3",
      place_id: 4483381587,
      game_version: 42,
      environment: "staging",
      context: { productId: 7, nested: { ok: true } },
      tags: ["shop", "robux"],
      timestamp: "2026-01-02T03:04:05.678Z",
      // unknown fields
      severity: "high",
      extra: { anything: [1, 2, 3] },
      Message: "ignored",
    };
    const r = await ingest(event, apiKey);
    expect(r.body).toEqual({ success: true, count: 1, occurrences: 1, throttled: 0 });
    const list = await getJson(app, "/api/v1/errors", apiKey);
    expect(list.body.total).toBe(1);
    const e = list.body.data[0];
    expect(e).toMatchObject({
      message: event.message,
      level: "info",
      stack_trace: event.stack_trace,
      player_name: "Builderman",
      trace_id: trace,
      job_id: "a1b2c3",
      game_version: "42",
      environment: "staging",
      context: { productId: 7, nested: { ok: true } },
      tags: ["shop", "robux"],
      count: 1,
      timestamp: "2026-01-02T03:04:05.678Z",
    });
    expect(String(e.user_id)).toBe("123456789");
    expect(String(e.place_id)).toBe("4483381587");
    expect(e).not.toHaveProperty("severity");
    expect(e).not.toHaveProperty("extra");
    const [g] = await groupsOf(projectId);
    expect(g.culprit).toBe("ServerScriptService.Shop");
  });

  it("strings PostgreSQL cannot store (NUL, lone surrogates) are stored with U+FFFD instead of failing with a 500", async () => {
    // Luau strings are bytes: an error message can carry a NUL, and a client may cut a string
    // inside a surrogate pair; both are valid JSON, so they are accepted, not a 400 or a 500
    const { apiKey, projectId } = await createProject(app.sql);
    const r = await ingest(
      {
        errors: [
          { message: "bad \u0000 byte in index 7", stack_trace: "Workspace.A:1\u0000", player_name: "p\u0000", tags: ["t\u0000"] },
          { message: "lone \ud800 surrogate", context: { "k\u0000": "v\u0000", nested: ["\udc00", { x: "ok" }] }, job_id: "j\ud800" },
        ],
      },
      apiKey,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ success: true, count: 2, occurrences: 2, throttled: 0 });
    const events = byMessage(await eventsOf(projectId));
    expect(events.map((e) => e.message)).toEqual(["bad \ufffd byte in index 7", "lone \ufffd surrogate"]);
    expect(events[0]).toMatchObject({ stack_trace: "Workspace.A:1\ufffd", player_name: "p\ufffd", tags: ["t\ufffd"] });
    expect(events[1]).toMatchObject({ context: { "k\ufffd": "v\ufffd", nested: ["\ufffd", { x: "ok" }] }, job_id: "j\ufffd" });
    // the same message with the NUL groups with itself again
    expect((await ingest({ message: "bad \u0000 byte in index 8", stack_trace: "Workspace.A:1\u0000" }, apiKey)).status).toBe(200);
    expect((await groupsOf(projectId)).map((g) => g.count).sort()).toEqual([1, 2]);
  });

  it("a custom fingerprint groups different messages together; {{ default }} keeps default grouping plus parts", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    await ingest(
      {
        errors: [
          { message: "checkout failed: card declined", fingerprint: "checkout" },
          { message: "checkout failed: timeout", fingerprint: ["checkout"] },
          { message: "index 1 out of range", fingerprint: ["{{ default }}", "place-1"] },
          { message: "index 2 out of range", fingerprint: ["{{ default }}", "place-1"] },
          { message: "index 3 out of range", fingerprint: ["{{ default }}", "place-2"] },
          { message: "index 4 out of range" },
        ],
      },
      apiKey,
    );
    const groups = await groupsOf(projectId);
    const counts = Object.fromEntries(groups.map((g) => [g.message, g.count]));
    expect(counts).toEqual({
      "checkout failed: card declined": 2,
      "index 1 out of range": 2,
      "index 3 out of range": 1,
      "index 4 out of range": 1,
    });
  });
});
