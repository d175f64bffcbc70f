import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteProject } from "../../db/projects.js";
import { pruneClientReports, SDK_HEALTH_MAX_DAYS } from "../../db/client-reports.js";
import { insertDsnKey, projectDsnId } from "../../db/sentry.js";
import { createProject, getJson, startTestApp, type TestApp } from "../support/server.js";

/**
 * Client reports over real HTTP on a real PostgreSQL: the `client_report` of a native batch and
 * POST /api/client-reports, added per project × UTC day × category × reason, exactly once under an
 * Idempotency-Key, never for a request whose events were refused or not written; read back on
 * GET /api/v1/sdk-health.
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  // a failure of the statement that adds a report, injected while a flag row exists
  await app.sql.unsafe(`
    create table test_report_faults (on_ boolean primary key);
    create function test_fail_reports() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from test_report_faults) then raise exception 'injected report failure'; end if;
      return new;
    end $$;
    create trigger test_fail_reports before insert or update on sdk_discards
      for each row execute function test_fail_reports();`);
});
afterAll(() => app?.close());

async function post(path: string, apiKey: string, body: unknown, key?: string) {
  const res = await app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, ...(key ? { "idempotency-key": key } : {}) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const health = async (apiKey: string, query = "") => (await getJson(app, `/api/v1/sdk-health${query}`, apiKey)).body;
const today = () => new Date().toISOString().slice(0, 10);
const eventsOf = async (projectId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`)[0].n;

const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString();
const WARNED_AT = hoursAgo(1);

const REPORT = {
  discarded_events: [
    { category: "error", reason: "queue_overflow", quantity: 3 },
    { category: "error", reason: "sample_rate", quantity: 2 },
    { category: "economy", reason: "retry_expired", quantity: 1 },
    { category: "error", reason: "queue_overflow", quantity: 4 },
  ],
  last_warning: { message: "Queue full: 3 errors dropped", at: WARNED_AT },
};

describe("a batch's client_report", () => {
  it("is added per day, category and reason, and its warning kept", async () => {
    const { apiKey } = await createProject(app.sql);
    const r = await post("/api/ingest", apiKey, { errors: [{ message: "boom" }], client_report: REPORT });
    expect(r).toMatchObject({ status: 200, body: { success: true, count: 1 } });
    const h = await health(apiKey);
    expect(h.totals).toEqual([
      { category: "error", reason: "queue_overflow", quantity: 7 },
      { category: "error", reason: "sample_rate", quantity: 2 },
      { category: "economy", reason: "retry_expired", quantity: 1 },
    ]);
    expect(h.days).toHaveLength(14);
    expect(h.days.at(-1).day).toBe(today());
    expect(h.days.at(-1).discarded).toHaveLength(3);
    expect(h.days.slice(0, -1).every((d: any) => d.discarded.length === 0)).toBe(true);
    expect(h.last_warning).toEqual({ message: "Queue full: 3 errors dropped", at: WARNED_AT });
  });

  it("is counted once under its Idempotency-Key however often the batch is sent, also after the events were written and the answer failed", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const body = { errors: [{ message: "boom" }, { message: "bang" }], client_report: { discarded_events: [{ category: "error", reason: "refused", quantity: 5 }] } };
    const key = randomUUID();
    // the events commit, then adding the report fails: not answered 200
    await app.sql`insert into test_report_faults values (true)`;
    try {
      expect((await post("/api/ingest", apiKey, body, key)).status).toBe(500);
    } finally {
      await app.sql`delete from test_report_faults`;
    }
    expect(await eventsOf(projectId)).toBe(2);
    expect((await health(apiKey)).totals).toEqual([]);
    // the retry writes no event again and adds the report; later retries (an answer lost) add nothing
    for (let i = 0; i < 3; i++) expect(await post("/api/ingest", apiKey, body, key)).toMatchObject({ status: 200, body: { count: 2 } });
    expect(await eventsOf(projectId)).toBe(2);
    expect((await health(apiKey)).totals).toEqual([{ category: "error", reason: "refused", quantity: 5 }]);
    // without a key each request is a new report
    await post("/api/ingest", apiKey, body);
    expect((await health(apiKey)).totals).toEqual([{ category: "error", reason: "refused", quantity: 10 }]);
  });

  it("refuses the batch when it is invalid, naming its paths; nothing is written", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const report = {
      discarded_events: [
        { category: "error", reason: "ignored", quantity: 1 },
        { category: "Error", reason: "ignored", quantity: 1 },
        { category: "error", reason: "ignored", quantity: 1.5 },
        { category: "error", quantity: -1 },
      ],
      last_warning: { message: "", at: "yesterday" },
    };
    const r = await post("/api/ingest", apiKey, { errors: [{ message: "fine" }], client_report: report });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_payload");
    expect(r.body.details.map((d: any) => d.path)).toEqual([
      "client_report.discarded_events[1].category",
      "client_report.discarded_events[2].quantity",
      "client_report.discarded_events[3].reason",
      "client_report.discarded_events[3].quantity",
      "client_report.last_warning.message",
      "client_report.last_warning.at",
    ]);
    for (const bad of [[], "x", { discarded_events: [] }, { discarded_events: Array.from({ length: 101 }, () => REPORT.discarded_events[0]) }, { discarded_events: [{ category: "error", reason: "x", quantity: 1_000_000_001 }] }]) {
      const res = await post("/api/ingest", apiKey, { errors: [{ message: "fine" }], client_report: bad });
      expect(res.status).toBe(400);
      expect(res.body.details[0].path).toMatch(/^client_report/);
    }
    expect(await eventsOf(projectId)).toBe(0);
    expect(await health(apiKey)).toMatchObject({ totals: [], last_warning: null });
  });

  it("is not counted when the batch's events are refused", async () => {
    const { apiKey } = await createProject(app.sql);
    const r = await post("/api/ingest", apiKey, { errors: [{ message: "fine" }, { message: "x", level: "fatal" }], client_report: REPORT });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: any) => d.path)).toEqual(["errors[1].level"]);
    expect(await health(apiKey)).toMatchObject({ totals: [], last_warning: null });
  });
});

describe("POST /api/client-reports", () => {
  it("adds a report on its own, with the ingest key, once per Idempotency-Key even when sent at once several times", async () => {
    const { apiKey } = await createProject(app.sql);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post("/api/client-reports", apiKey, REPORT, key)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers[0].body).toEqual({ success: true });
    expect((await health(apiKey)).totals.find((t: any) => t.reason === "queue_overflow").quantity).toBe(7);
    // the same key with another body is a conflict, and adds nothing
    const other = await post("/api/client-reports", apiKey, { discarded_events: [{ category: "error", reason: "ignored", quantity: 1 }] }, key);
    expect(other).toMatchObject({ status: 409, body: { error: "conflict" } });
    // the namespace is the route's: a batch may use the same key
    expect((await post("/api/ingest", apiKey, { errors: [{ message: "boom" }], client_report: REPORT }, key)).status).toBe(200);
    expect((await health(apiKey)).totals.find((t: any) => t.reason === "queue_overflow").quantity).toBe(14);
  });

  it("keeps the newest warning, takes a missing `at` as the receive time, cuts long messages and clamps a future `at`", async () => {
    const { apiKey } = await createProject(app.sql);
    const newer = hoursAgo(1);
    await post("/api/client-reports", apiKey, { discarded_events: [], last_warning: { message: "newer", at: newer } });
    await post("/api/client-reports", apiKey, { last_warning: { message: "older", at: hoursAgo(2) } });
    expect((await health(apiKey)).last_warning).toEqual({ message: "newer", at: newer });
    const before = Date.now();
    await post("/api/client-reports", apiKey, { last_warning: { message: "é".repeat(1500) } });
    const w = (await health(apiKey)).last_warning;
    expect(w.message).toBe("é".repeat(1000));
    expect(Date.parse(w.at)).toBeGreaterThanOrEqual(before - 1000);
    await post("/api/client-reports", apiKey, { last_warning: { message: "from the future", at: "2999-01-01T00:00:00Z" } });
    const f = (await health(apiKey)).last_warning;
    expect(f.message).toBe("from the future");
    expect(Date.parse(f.at)).toBeLessThan(Date.now() + 60_000);
  });

  it("answers bad input with 4xx and the error body, never a 500", async () => {
    const { apiKey } = await createProject(app.sql);
    expect((await post("/api/client-reports", "nope", REPORT)).status).toBe(401);
    const res = await app.request("/api/client-reports", { method: "POST", headers: { "x-api-key": apiKey, "content-type": "application/json" }, body: "{" });
    expect(res.status).toBe(400);
    const big = await post("/api/client-reports", apiKey, { ...REPORT, pad: "x".repeat(70 * 1024) });
    expect(big).toMatchObject({ status: 413, body: { error: "payload_too_large" } });
    const deep = await post("/api/client-reports", apiKey, "[".repeat(5000) + "]".repeat(5000));
    expect(deep.status).toBe(400);
    const empty = await post("/api/client-reports", apiKey, {});
    expect(empty).toMatchObject({ status: 400, body: { error: "invalid_payload" } });
    const bad = await post("/api/client-reports", apiKey, { discarded_events: [{ category: "error", reason: "x", quantity: "3" }] });
    expect(bad.body.details).toEqual([{ path: "discarded_events[0].quantity", message: expect.any(String) }]);
    expect((await app.request("/api/client-reports", { headers: { "x-api-key": apiKey } })).status).toBe(405);
  });
});

describe("GET /api/v1/sdk-health", () => {
  it("answers 1 to 90 days, else 400 invalid_query", async () => {
    const { apiKey } = await createProject(app.sql);
    expect((await health(apiKey, "?days=1")).days).toHaveLength(1);
    expect((await health(apiKey, "?days=90")).days).toHaveLength(90);
    for (const days of ["0", "91", "abc", "1.5", "-3"]) {
      const r = await getJson(app, `/api/v1/sdk-health?days=${days}`, apiKey);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_query", details: [{ path: "days" }] });
    }
    expect((await getJson(app, "/api/v1/sdk-health")).status).toBe(401);
  });

  it("reads only the caller's project, and a deleted project's reports go with it", async () => {
    const a = await createProject(app.sql);
    const b = await createProject(app.sql);
    await post("/api/client-reports", a.apiKey, REPORT, randomUUID());
    expect((await health(b.apiKey)).totals).toEqual([]);
    expect(await deleteProject(app.sql, a.projectId)).toBe(true);
    const left = await app.sql`
      select 1 from sdk_discards where project_id = ${a.projectId}
      union all select 1 from sdk_last_warnings where project_id = ${a.projectId}
      union all select 1 from client_report_keys where project_id = ${a.projectId}`;
    expect(left).toHaveLength(0);
  });
});

describe("a Sentry envelope's client_report item", () => {
  /** An envelope with one event and a client report, as Sentry SDKs send them. */
  const envelope = (report: unknown) => {
    const event = JSON.stringify({ message: "sentry boom", level: "error", platform: "node" });
    const r = JSON.stringify(report);
    return [
      JSON.stringify({ event_id: randomUUID().replace(/-/g, "") }),
      JSON.stringify({ type: "event", length: Buffer.byteLength(event) }),
      event,
      JSON.stringify({ type: "client_report" }),
      r,
      "",
    ].join("\n");
  };

  it("is stored like a native report; an invalid one is dropped without failing the events", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const publicKey = (await insertDsnKey(app.sql, projectId, randomUUID().replace(/-/g, ""), "sdk", null)).public_key;
    const dsnId = (await projectDsnId(app.sql, projectId))!;
    const send = (report: unknown) =>
      app.request(`/api/${dsnId}/envelope/?sentry_key=${publicKey}`, { method: "POST", headers: { "content-type": "application/x-sentry-envelope" }, body: envelope(report) });
    const good = {
      timestamp: new Date().toISOString(),
      discarded_events: [
        { reason: "ratelimit_backoff", category: "error", quantity: 4 },
        { reason: "sample_rate", category: "transaction", quantity: 9 },
      ],
    };
    expect((await send(good)).status).toBe(200);
    expect((await send({ discarded_events: [{ reason: "Not A Name", category: "error", quantity: 1 }] })).status).toBe(200);
    expect(await eventsOf(projectId)).toBe(2);
    expect((await health(apiKey)).totals).toEqual([
      { category: "transaction", reason: "sample_rate", quantity: 9 },
      { category: "error", reason: "ratelimit_backoff", quantity: 4 },
    ]);
  });
});

describe("the hourly retention job", () => {
  it("forgets report keys after a day and totals after 90 days", async () => {
    const { apiKey, projectId } = await createProject(app.sql);
    const key = randomUUID();
    expect((await post("/api/client-reports", apiKey, REPORT, key)).status).toBe(200);
    await app.sql`update client_report_keys set created_at = now() - interval '25 hours' where project_id = ${projectId}`;
    await app.sql`
      insert into sdk_discards (project_id, day, category, reason, quantity) values
        (${projectId}, (now() at time zone 'utc')::date - 89, 'error', 'ignored', 1),
        (${projectId}, (now() at time zone 'utc')::date - 90, 'error', 'ignored', 1)`;
    await pruneClientReports(app.sql, SDK_HEALTH_MAX_DAYS);
    const [{ keys, days }] = await app.sql<{ keys: number; days: number }[]>`
      select (select count(*) from client_report_keys where project_id = ${projectId})::int as keys,
        (select count(*) from sdk_discards where project_id = ${projectId})::int as days`;
    expect({ keys, days }).toEqual({ keys: 0, days: 4 });
    // the 90-day window reads the oldest day kept
    expect((await health(apiKey, "?days=90")).days[0].discarded).toEqual([{ category: "error", reason: "ignored", quantity: 1 }]);
    // a key forgotten is new again
    expect((await post("/api/client-reports", apiKey, REPORT, key)).status).toBe(200);
    expect((await health(apiKey)).totals.find((t: any) => t.reason === "queue_overflow").quantity).toBe(14);
  });
});
