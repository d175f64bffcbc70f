import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEvents, type EventRow } from "../../db/events.js";
import { mergeGroups } from "../../db/merge.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";

/**
 * The write of a batch (db/events.ts) on a real database: the throttle decided on each locked group
 * row (a merged member's own row included), the receive time the row and its stored events share, and
 * the optional work a caller runs inside the same transaction.
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const THROTTLE = { limit: 5, windowSeconds: 60 };

function row(projectId: string, fingerprint: string, over: Partial<EventRow> = {}): EventRow {
  return {
    projectId, fingerprint, olderFingerprints: [], message: `boom ${fingerprint}`, level: "error", stackTrace: null,
    userId: null, playerName: null, traceId: null, jobId: null, placeId: null, gameVersion: null, environment: "production",
    context: null, tags: null, timestamp: Date.now(), count: 1, culprit: null, ...over,
  };
}

const group = async (projectId: string, fingerprint: string) =>
  (await app.sql<{ id: string; stored_count: number; count: number; throttle: number; merged_into: string | null }[]>`
    select id, stored_count::int, count::int, cardinality(throttle_times) as throttle, merged_into
    from error_groups where project_id = ${projectId} and fingerprint = ${fingerprint}`)[0];

describe("writeEvents", () => {
  it("keeps the first untraced events up to the limit and every traced one; stored rows carry the row's receive time", async () => {
    const { projectId } = await createProject(app.sql);
    const trace = "8f2c1a44-7d0e-4f7b-9a51-2c3b4d5e6f70";
    const batch = [
      ...Array.from({ length: 8 }, () => row(projectId, "fp-a")),
      row(projectId, "fp-a", { traceId: trace }),
    ];
    const first = await writeEvents(app.sql, batch, THROTTLE);
    expect(first.stored).toEqual([true, true, true, true, true, false, false, false, true]);
    const g = await group(projectId, "fp-a");
    expect(g).toMatchObject({ count: 9, stored_count: 6, throttle: 5 });
    const times = await app.sql<{ n: number }[]>`
      select count(*)::int as n from events e join error_groups g on g.project_id = e.project_id and g.id = e.group_id
      where e.project_id = ${projectId} and e.received_at = g.received_at`;
    expect(times[0].n).toBe(6);

    // the window is full: a second write keeps only its traced event
    const second = await writeEvents(app.sql, [row(projectId, "fp-a"), row(projectId, "fp-a", { traceId: trace })], THROTTLE);
    expect(second.stored).toEqual([false, true]);
    expect(await group(projectId, "fp-a")).toMatchObject({ count: 11, stored_count: 7, throttle: 5 });
    const [t] = await app.sql<{ event_count: number }[]>`select event_count::int from traces where project_id = ${projectId} and trace_id = ${trace}`;
    expect(t.event_count).toBe(2);
  });

  it("a group's times are its events' whole milliseconds: a fraction (a Sentry timestamp in seconds) is cut, as a Date cuts it", async () => {
    const { projectId } = await createProject(app.sql);
    const at = Date.UTC(2026, 10, 29, 12, 0, 0, 123);
    await writeEvents(app.sql, [row(projectId, "fp-ms", { timestamp: at + 0.987, gameVersion: "2.0" }), row(projectId, "fp-ms", { timestamp: at + 1000.5 })], THROTTLE);
    const [g] = await app.sql<{ first_seen: string; last_seen: string; first_version_at: string }[]>`
      select to_char(first_seen at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as first_seen,
        to_char(last_seen at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as last_seen,
        to_char(first_version_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as first_version_at
      from error_groups where project_id = ${projectId} and fingerprint = 'fp-ms'`;
    expect(g).toEqual({ first_seen: "2026-11-29 12:00:00.123000", last_seen: "2026-11-29 12:00:01.123000", first_version_at: "2026-11-29 12:00:00.123000" });
  });

  it("a merged member throttles on its own row and its kept events count in the issue's stored_count", async () => {
    const { projectId } = await createProject(app.sql);
    await writeEvents(app.sql, [row(projectId, "fp-x"), row(projectId, "fp-y")], THROTTLE);
    const x = await group(projectId, "fp-x");
    const y = await group(projectId, "fp-y");
    await mergeGroups(app.sql, projectId, x.id, [y.id]);

    const result = await writeEvents(app.sql, Array.from({ length: 7 }, () => row(projectId, "fp-y")), THROTTLE);
    // fp-y's row already held one entry in the window: four more of the seven fit under the limit of five
    expect(result.stored.filter(Boolean)).toHaveLength(4);
    expect(result.groups.map((g) => g.id)).toEqual([x.id]);
    const member = await group(projectId, "fp-y");
    expect(member).toMatchObject({ merged_into: x.id, stored_count: 0, throttle: 5, count: 8 });
    const [issue] = await app.sql<{ stored_count: number; count: number; events: number }[]>`
      select stored_count::int, count::int,
        (select count(*)::int from events where project_id = ${projectId} and group_id = ${x.id}) as events
      from error_groups where project_id = ${projectId} and id = ${x.id}`;
    expect(issue).toEqual({ stored_count: 6, count: 9, events: 6 });
    const [origin] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from events e join error_groups g on g.project_id = e.project_id and g.id = e.origin_group_id
      where e.project_id = ${projectId} and e.origin_group_id = ${y.id} and e.received_at = g.received_at`;
    expect(origin.n).toBe(4);
  });

  it("a group's distinct users are counted once applied; concurrent creators and later batches add only users new to it", async () => {
    const { projectId } = await createProject(app.sql);
    const users = async (fingerprint: string) =>
      (await countersApplied(app.sql), await app.sql<{ user_count: number; pairs: number }[]>`
        select g.user_count::int, (select count(*)::int from group_users u where u.project_id = g.project_id and u.group_id = g.id) as pairs
        from error_groups g where g.project_id = ${projectId} and g.fingerprint = ${fingerprint}`)[0];
    const trace = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
    // a repeated user, an event without one, a traced one: three distinct users
    await writeEvents(app.sql, [
      row(projectId, "fp-new", { userId: "1" }), row(projectId, "fp-new", { userId: "2" }), row(projectId, "fp-new", { userId: "1" }),
      row(projectId, "fp-new"), row(projectId, "fp-new", { userId: "3", traceId: trace }),
    ], THROTTLE);
    expect(await users("fp-new")).toEqual({ user_count: 3, pairs: 3 });
    // an existing group and a new one in one batch
    await writeEvents(app.sql, [row(projectId, "fp-new", { userId: "3" }), row(projectId, "fp-new", { userId: "4" }), row(projectId, "fp-other", { userId: "4" })], THROTTLE);
    expect(await users("fp-new")).toEqual({ user_count: 4, pairs: 4 });
    expect(await users("fp-other")).toEqual({ user_count: 1, pairs: 1 });
    // several writers creating the same group at once: one inserts it, the others find it and count only new pairs
    await Promise.all(
      Array.from({ length: 6 }, (_, w) =>
        writeEvents(app.sql, [row(projectId, "fp-race", { userId: String(w) }), row(projectId, "fp-race", { userId: String(w + 1) }), row(projectId, "fp-race", { userId: "100" })], THROTTLE),
      ),
    );
    expect(await users("fp-race")).toEqual({ user_count: 8, pairs: 8 });
  });

  it("runs the caller's extra work in the same transaction: it sees the batch, and its failure leaves nothing written", async () => {
    const { projectId } = await createProject(app.sql);
    let seen = -1;
    await writeEvents(app.sql, [row(projectId, "fp-e"), row(projectId, "fp-e")], THROTTLE, 2, async (tx) => {
      seen = Number((await tx`select count(*)::int as n from events where project_id = ${projectId}`)[0].n);
    });
    expect(seen).toBe(2);

    await expect(
      writeEvents(app.sql, [row(projectId, "fp-f")], THROTTLE, 2, async () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(await group(projectId, "fp-f")).toBeUndefined();
    const [n] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n.n).toBe(2);
  });
  it("writes an event id once: a repeat in the same batch or a later one counts nothing, and its fingerprint opens no group nor alias", async () => {
    const { projectId } = await createProject(app.sql);
    const id = (n: number) => `${"0".repeat(31)}${n}`;
    const first = await writeEvents(app.sql, [row(projectId, "fp-ids", { eventId: id(1) }), row(projectId, "fp-other", { eventId: id(1) })], THROTTLE);
    expect(first.stored).toEqual([true, false]);
    expect(await group(projectId, "fp-other")).toBeUndefined();
    // an older version's group that a repeat's new fingerprint would join (with an alias), and a fresh event of the batch
    const later = await writeEvents(
      app.sql,
      [row(projectId, "fp-upgraded", { eventId: id(1), olderFingerprints: ["fp-ids"] }), row(projectId, "fp-ids", { eventId: id(2) })],
      THROTTLE,
    );
    expect(later.stored).toEqual([false, true]);
    expect(await group(projectId, "fp-ids")).toMatchObject({ count: 2 });
    expect(await group(projectId, "fp-upgraded")).toBeUndefined();
    const aliases = await app.sql`select fingerprint from group_aliases where project_id = ${projectId}`;
    expect(aliases).toHaveLength(0);
    // a batch of repeats only writes nothing
    const again = await writeEvents(app.sql, [row(projectId, "fp-ids", { eventId: id(2) })], THROTTLE);
    expect(again.stored).toEqual([false]);
    expect(await group(projectId, "fp-ids")).toMatchObject({ count: 2 });
  });
});
