import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEvents, type EventRow } from "../../db/events.js";
import { createProject, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";

/**
 * What a batch write leaves for the counter drain and what the drain writes (db/write-statements.ts,
 * db/counter-deltas.ts): one pending payload per project of the batch, each applied to its own
 * project; players' rows written only when they change; a player new to a group counted once.
 */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const THROTTLE = { limit: 100, windowSeconds: 60 };

function row(projectId: string, fingerprint: string, over: Partial<EventRow> = {}): EventRow {
  return {
    projectId, fingerprint, olderFingerprints: [], message: `boom ${fingerprint}`, level: "error", stackTrace: null,
    userId: null, playerName: null, traceId: null, jobId: null, placeId: null, gameVersion: null, environment: "production",
    context: null, tags: null, timestamp: Date.now(), count: 1, culprit: null, ...over,
  };
}

const player = async (projectId: string, userId: string) =>
  (await app.sql<{ last_seen: Date; player_name: string | null; xmax: string }[]>`
    select last_seen, player_name, xmax::text from project_users where project_id = ${projectId} and user_id = ${userId}`)[0];

describe("counter drain writes", () => {
  it("a batch over two projects leaves one pending payload per project, each applied to its own project", async () => {
    const a = await createProject(app.sql);
    const b = await createProject(app.sql);
    const result = await writeEvents(
      app.sql,
      [
        row(a.projectId, "fp-x", { userId: "1", environment: "staging", gameVersion: "1.0" }),
        row(b.projectId, "fp-x", { userId: "2", environment: "production", gameVersion: "2.0" }),
        row(b.projectId, "fp-x", { userId: "3", environment: "production", gameVersion: "2.0" }),
        row(a.projectId, "fp-x", { userId: "1", environment: "staging", gameVersion: "1.0" }),
      ],
      THROTTLE,
    );
    expect(result.pending).toHaveLength(2);
    await countersApplied(app.sql);
    const groups = await app.sql<{ project_id: string; user_count: number; envs: string[]; versions: string[]; players: string[] }[]>`
      select g.project_id, g.user_count::int,
        array(select environment || ':' || count from group_environments e where e.project_id = g.project_id and e.group_id = g.id) as envs,
        array(select version || ':' || count from group_versions v where v.project_id = g.project_id and v.group_id = g.id) as versions,
        array(select user_id::text from project_users u where u.project_id = g.project_id order by user_id) as players
      from error_groups g where g.project_id in (${a.projectId}, ${b.projectId}) and g.fingerprint = 'fp-x'`;
    const of = (p: string) => groups.find((g) => g.project_id === p);
    expect(of(a.projectId)).toMatchObject({ user_count: 1, envs: ["staging:2"], versions: ["1.0:2"], players: ["1"] });
    expect(of(b.projectId)).toMatchObject({ user_count: 2, envs: ["production:2"], versions: ["2.0:2"], players: ["2", "3"] });
  });

  it("a player seen again within the minute under the same name leaves the row as it is; a new name or a later minute updates it", async () => {
    const { projectId } = await createProject(app.sql);
    const t0 = Date.now() - 10 * 60_000;
    await writeEvents(app.sql, [row(projectId, "fp-p", { userId: "7", playerName: "Ann", timestamp: t0 })], THROTTLE);
    await countersApplied(app.sql);
    const first = await player(projectId, "7");
    expect(first).toMatchObject({ player_name: "Ann", xmax: "0" });
    expect(first.last_seen.getTime()).toBe(t0);

    // within the minute, same name: not written, not even locked (xmax stays 0)
    await writeEvents(app.sql, [row(projectId, "fp-p", { userId: "7", playerName: "Ann", timestamp: t0 + 30_000 })], THROTTLE);
    await countersApplied(app.sql);
    const same = await player(projectId, "7");
    expect(same).toMatchObject({ player_name: "Ann", xmax: "0" });
    expect(same.last_seen.getTime()).toBe(t0);

    // a new name within the minute is written, with the later time
    await writeEvents(app.sql, [row(projectId, "fp-p", { userId: "7", playerName: "Bea", timestamp: t0 + 40_000 })], THROTTLE);
    await countersApplied(app.sql);
    const renamed = await player(projectId, "7");
    expect(renamed.player_name).toBe("Bea");
    expect(renamed.last_seen.getTime()).toBe(t0 + 40_000);

    // more than a minute later, without a name: the time moves on and the name stays
    await writeEvents(app.sql, [row(projectId, "fp-p", { userId: "7", timestamp: t0 + 5 * 60_000 })], THROTTLE);
    await countersApplied(app.sql);
    const later = await player(projectId, "7");
    expect(later.player_name).toBe("Bea");
    expect(later.last_seen.getTime()).toBe(t0 + 5 * 60_000);
  });

  it("a player already counted in a group is stored and counted once, across batches and within one", async () => {
    const { projectId } = await createProject(app.sql);
    const users = (ids: string[]) => ids.map((u) => row(projectId, "fp-u", { userId: u }));
    await writeEvents(app.sql, users(["1", "2", "2"]), THROTTLE);
    await writeEvents(app.sql, users(["2", "3", "1", "3"]), THROTTLE);
    await countersApplied(app.sql);
    const [g] = await app.sql<{ user_count: number; pairs: number }[]>`
      select g.user_count::int, (select count(*)::int from group_users u where u.project_id = g.project_id and u.group_id = g.id) as pairs
      from error_groups g where g.project_id = ${projectId} and g.fingerprint = 'fp-u'`;
    expect(g).toEqual({ user_count: 3, pairs: 3 });
  });
});
