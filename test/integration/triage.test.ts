import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";
import { reopenExpiredSnoozes } from "../../db/groups.js";
import { groupTagBreakdown, TAG_SAMPLE } from "../../db/group-reads.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * Triage at scale over real HTTP: bulk changes of every issue matching a filter (Team API), snoozes
 * that reopen themselves, environment filters over every event's environment, game versions and
 * releases, player look-up, paging through all stored events, tag breakdowns and the trace list.
 */
let app: TestApp;
let owner: { id: string; email: string };
let cookie: string;
beforeAll(async () => {
  app = await startTestApp();
  owner = await makeUser(app.sql);
  cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

const MIN = 60_000;
const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
async function groupOf(projectId: string, message: string) {
  await countersApplied(app.sql);
  const [g] = await app.sql`select * from error_groups where project_id = ${projectId} and message = ${message}`;
  return g;
}

describe("bulk actions on every issue matching a filter", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    // 130 distinct "Part<n> is not here" issues (more than one page of 100) plus 3 others
    const events = Array.from({ length: 130 }, (_, i) => ({ message: `Bulk issue number-${"x".repeat(i % 7)}-${String.fromCharCode(65 + (i % 26))}${i}`, level: "warn" }));
    for (let i = 0; i < events.length; i += 100) await ingest(app, apiKey, { errors: events.slice(i, i + 100) });
    await ingest(app, apiKey, { errors: [{ message: "Other A" }, { message: "Other B" }, { message: "Bulk but error", level: "error" }] });
  });

  const bulk = (body: unknown) => call(app, "POST", `/api/team/projects/${projectId}/groups/bulk`, { cookie, body });

  it("counts the matches in a dry run without changing anything", async () => {
    const r = await bulk({ filter: { search: "bulk issue", level: "warn" }, status: "resolved", dry_run: true });
    expect(r.status).toBe(200);
    expect(r.body.matched).toBe(130);
    expect(Date.parse(r.body.as_of)).not.toBeNaN();
    const [{ n }] = await app.sql`select count(*)::int as n from error_groups where project_id = ${projectId} and status = 'resolved'`;
    expect(n).toBe(0);
  });

  it("changes every match (not only a page) and nothing else, limited to the confirmed set", async () => {
    const preview = await bulk({ filter: { search: "bulk issue" }, status: "resolved", dry_run: true });
    // an issue that appears after the count was shown is not part of what was confirmed
    await new Promise((r) => setTimeout(r, 20));
    await ingest(app, apiKey, { message: "Bulk issue that came later", level: "warn" });
    const r = await bulk({ filter: { search: "bulk issue" }, status: "resolved", as_of: preview.body.as_of });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ updated: 130, status: "resolved" });
    const rows = await app.sql<{ message: string; status: string }[]>`select message, status from error_groups where project_id = ${projectId}`;
    const resolved = rows.filter((g) => g.status === "resolved");
    expect(resolved).toHaveLength(130);
    expect(resolved.every((g) => g.message.startsWith("Bulk issue number"))).toBe(true);
    expect(rows.find((g) => g.message === "Bulk issue that came later")!.status).toBe("open");
    expect(rows.find((g) => g.message === "Bulk but error")!.status).toBe("open");
    // the grouped list agrees
    const list = await getJson(app, "/api/v1/errors?grouped=true&status=resolved&limit=1", apiKey);
    expect(list.body.total).toBe(130);
  });

  it("rejects a bad body with 400 and writes nothing", async () => {
    for (const body of [
      { filter: { level: "fatal" }, status: "resolved" },
      { filter: { search: "bulk" }, status: "done" },
      { filter: "everything", status: "open" },
      { status: "open" },
      { filter: { unknown_key: 1 }, status: "open" },
      { filter: {}, status: "open", snooze: { minutes: 10 } },
      { filter: {}, status: "ignored", snooze: {} },
    ]) {
      const r = await bulk(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
    }
    const [{ n }] = await app.sql`select count(*)::int as n from error_groups where project_id = ${projectId} and status = 'open'`;
    expect(n).toBe(4);
  });

  it("is scoped to the caller's projects", async () => {
    const stranger = await makeUser(app.sql);
    const r = await call(app, "POST", `/api/team/projects/${projectId}/groups/bulk`, {
      cookie: await login(app, stranger.email),
      body: { filter: {}, status: "ignored" },
    });
    expect(r.status).toBe(404);
    const none = await call(app, "POST", `/api/team/projects/${projectId}/groups/bulk`, { body: { filter: {}, status: "ignored" } });
    expect(none.status).toBe(401);
  });
});

describe("bulk changes under concurrent ingest", () => {
  it("neither deadlock with nor lose counts of batches that touch many of the same groups", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const messages = Array.from({ length: 40 }, (_, i) => `Concurrent group ${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`);
    await ingest(app, apiKey, { errors: messages.map((message) => ({ message })) });
    // batches in shuffled orders over all 40 groups, while every group is bulk-changed again and again
    const shuffled = (k: number) => messages.map((m, i) => messages[(i * 7 + k) % messages.length]).map((message) => ({ message }));
    const ingests = Array.from({ length: 8 }, async (_, c) => {
      for (let i = 0; i < 5; i++) await ingest(app, apiKey, { errors: shuffled(c * 5 + i) });
    });
    const statuses = ["resolved", "ignored", "open"];
    const bulks = Array.from({ length: 6 }, async (_, i) => {
      const r = await call(app, "POST", `/api/team/projects/${projectId}/groups/bulk`, { cookie, body: { filter: { search: "Concurrent group" }, status: statuses[i % 3] } });
      expect(r.status).toBe(200);
      expect(r.body.updated).toBe(40);
    });
    await Promise.all([...ingests, ...bulks]);
    const rows = await app.sql<{ count: number }[]>`select count from error_groups where project_id = ${projectId}`;
    expect(rows).toHaveLength(40);
    expect(rows.every((g) => Number(g.count) === 41)).toBe(true);
    await countersApplied(app.sql);
    const [{ n }] = await app.sql`select sum(count)::int as n from group_environments where project_id = ${projectId}`;
    expect(n).toBe(40 * 41);
  });
});

describe("snooze", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
  });
  const patch = (id: string, body: unknown) => call(app, "PATCH", `/api/team/projects/${projectId}/groups/${id}`, { cookie, body });

  it("until N more occurrences: stays ignored before, reopens at the N-th", async () => {
    await ingest(app, apiKey, { message: "Snooze by count", count: 5 });
    const g = await groupOf(projectId, "Snooze by count");
    const r = await patch(g.id, { status: "ignored", snooze: { occurrences: 10 } });
    expect(r.status).toBe(200);
    expect(r.body.group).toMatchObject({ status: "ignored", snooze_count: 15 });
    await ingest(app, apiKey, { message: "Snooze by count", count: 9 });
    expect((await groupOf(projectId, "Snooze by count")).status).toBe("ignored");
    await ingest(app, apiKey, { message: "Snooze by count" });
    const after = await groupOf(projectId, "Snooze by count");
    expect(after).toMatchObject({ status: "open", snooze_count: null, count: 15 });
    expect(after.regressed_at).toBeNull();
  });

  it("until N more occurrences: exact under concurrent requests", async () => {
    await ingest(app, apiKey, { message: "Snooze under load" });
    const g = await groupOf(projectId, "Snooze under load");
    expect((await patch(g.id, { status: "ignored", snooze: { occurrences: 60 } })).status).toBe(200);
    // 59 concurrent occurrences stay under the target; the 60th reopens
    await Promise.all(Array.from({ length: 59 }, () => ingest(app, apiKey, { message: "Snooze under load" })));
    expect(await groupOf(projectId, "Snooze under load")).toMatchObject({ status: "ignored", count: 60 });
    await ingest(app, apiKey, { message: "Snooze under load" });
    expect(await groupOf(projectId, "Snooze under load")).toMatchObject({ status: "open", count: 61, snooze_count: null });
  });

  it("until N more players: only new distinct players count", async () => {
    await ingest(app, apiKey, { message: "Snooze by users", user_id: 1 });
    const g = await groupOf(projectId, "Snooze by users");
    expect((await patch(g.id, { status: "ignored", snooze: { users: 2 } })).status).toBe(200);
    await ingest(app, apiKey, { errors: [{ message: "Snooze by users", user_id: 1 }, { message: "Snooze by users", user_id: 2 }, { message: "Snooze by users", user_id: 2 }] });
    expect((await groupOf(projectId, "Snooze by users")).status).toBe("ignored");
    await ingest(app, apiKey, { message: "Snooze by users", user_id: 3 });
    expect(await groupOf(projectId, "Snooze by users")).toMatchObject({ status: "open", user_count: 3, snooze_users: null });
  });

  it("until a time: reopens on the next event after it, and by the job without any event", async () => {
    await ingest(app, apiKey, { errors: [{ message: "Snooze by time A" }, { message: "Snooze by time B" }] });
    const a = await groupOf(projectId, "Snooze by time A");
    const b = await groupOf(projectId, "Snooze by time B");
    const until = new Date(Date.now() + 1500).toISOString();
    expect((await patch(a.id, { status: "ignored", snooze: { until } })).status).toBe(200);
    expect((await patch(b.id, { status: "ignored", snooze: { until } })).status).toBe(200);
    await ingest(app, apiKey, { message: "Snooze by time A" });
    expect((await groupOf(projectId, "Snooze by time A")).status).toBe("ignored");
    expect(await reopenExpiredSnoozes(app.sql)).toBe(0);
    await new Promise((r) => setTimeout(r, 1600));
    await ingest(app, apiKey, { message: "Snooze by time A" });
    expect(await groupOf(projectId, "Snooze by time A")).toMatchObject({ status: "open", snooze_until: null });
    expect((await groupOf(projectId, "Snooze by time B")).status).toBe("ignored");
    expect(await reopenExpiredSnoozes(app.sql)).toBeGreaterThanOrEqual(1);
    expect((await groupOf(projectId, "Snooze by time B")).status).toBe("open");
  });

  it("a plain ignore never reopens, and a status change clears a snooze", async () => {
    await ingest(app, apiKey, { message: "Plain ignore" });
    const g = await groupOf(projectId, "Plain ignore");
    await patch(g.id, { status: "ignored", snooze: { occurrences: 1 } });
    await patch(g.id, { status: "ignored" });
    await ingest(app, apiKey, { message: "Plain ignore", count: 50 });
    expect(await groupOf(projectId, "Plain ignore")).toMatchObject({ status: "ignored", snooze_count: null });
  });

  it("rejects bad snoozes with 400", async () => {
    await ingest(app, apiKey, { message: "Bad snooze" });
    const g = await groupOf(projectId, "Bad snooze");
    for (const snooze of [{}, { occurrences: 0 }, { occurrences: 1.5 }, { users: "3" }, { until: "tomorrow" }, { until: at(MIN) }, { minutes: 5, until: at(-MIN) }, { forever: true }]) {
      const r = await patch(g.id, { status: "ignored", snooze });
      expect(r.status, JSON.stringify(snooze)).toBe(400);
    }
    expect((await patch(g.id, { status: "resolved", snooze: { minutes: 5 } })).status).toBe(400);
    expect((await groupOf(projectId, "Bad snooze")).status).toBe("open");
  });
});

describe("environments", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    await ingest(app, apiKey, {
      errors: [
        { message: "Env mixed", environment: "staging", count: 4, timestamp: at(10 * MIN) },
        { message: "Env mixed", environment: "production", count: 2, timestamp: at(5 * MIN) },
        { message: "Env staging only", environment: "staging", timestamp: at(4 * MIN) },
        { message: "Env prod only", environment: "production", count: 7, timestamp: at(3 * MIN) },
      ],
    });
  });

  it("an environment filter finds every issue that occurred there, with its count there", async () => {
    const staging = await getJson(app, "/api/v1/errors?grouped=true&environment=staging&sort=count", apiKey);
    expect(staging.body.total).toBe(2);
    expect(staging.body.data.map((g: any) => [g.message, g.environment_count, g.count])).toEqual([
      ["Env mixed", 4, 6],
      ["Env staging only", 1, 1],
    ]);
    // the latest event of "Env mixed" was in production, yet it occurred in staging
    expect(staging.body.data[0].environment).toBe("production");
    const prod = await getJson(app, "/api/v1/errors?grouped=true&environment=production&sort=count", apiKey);
    expect(prod.body.data.map((g: any) => [g.message, g.environment_count])).toEqual([
      ["Env prod only", 7],
      ["Env mixed", 2],
    ]);
  });

  it("the issue detail lists occurrences per environment", async () => {
    const g = await groupOf(projectId, "Env mixed");
    const r = await getJson(app, `/api/v1/errors/${g.id}`, apiKey);
    expect(r.body.environments.map((e: any) => [e.environment, e.count])).toEqual([["staging", 4], ["production", 2]]);
  });
});

describe("versions and releases", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    await ingest(app, apiKey, {
      errors: [
        { message: "Old bug", game_version: 41, count: 3, timestamp: at(60 * MIN) },
        { message: "Old bug", game_version: "42", timestamp: at(50 * MIN) },
        { message: "Unversioned bug", timestamp: at(45 * MIN) },
      ],
    });
  });

  it("keeps first and last version and occurrences per version", async () => {
    const g = await groupOf(projectId, "Old bug");
    expect(g).toMatchObject({ first_version: "41", last_version: "42" });
    const r = await getJson(app, `/api/v1/errors/${g.id}`, apiKey);
    expect(r.body.group).toMatchObject({ first_version: "41", last_version: "42" });
    expect(r.body.versions.map((v: any) => [v.version, v.count])).toEqual([["42", 1], ["41", 3]]);
  });

  it("records the version a resolved issue regressed in", async () => {
    const g = await groupOf(projectId, "Old bug");
    await call(app, "PATCH", `/api/team/projects/${projectId}/groups/${g.id}`, { cookie, body: { status: "resolved" } });
    await ingest(app, apiKey, { errors: [{ message: "Old bug", game_version: "43", timestamp: at(MIN) }, { message: "New in 43", game_version: "43", count: 5, timestamp: at(MIN) }] });
    const after = await groupOf(projectId, "Old bug");
    expect(after).toMatchObject({ status: "open", regressed_version: "43", first_version: "41", last_version: "43" });
    expect(after.regressed_at).not.toBeNull();
    const regressed = await getJson(app, "/api/v1/errors?grouped=true&regressed=true", apiKey);
    expect(regressed.body.data.map((x: any) => x.message)).toEqual(["Old bug"]);
  });

  it("filters issues new in a version", async () => {
    const r = await getJson(app, "/api/v1/errors?grouped=true&new_in_version=43", apiKey);
    expect(r.body.data.map((x: any) => x.message)).toEqual(["New in 43"]);
    const none = await getJson(app, "/api/v1/errors?new_in_version=43", apiKey);
    expect(none.status).toBe(400);
  });

  it("lists releases with their new issues, regressions and occurrences", async () => {
    const r = await getJson(app, "/api/v1/releases", apiKey);
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(3);
    expect(r.body.data.map((v: any) => [v.version, v.occurrences, v.issues, v.new_issues, v.regressions])).toEqual([
      ["43", 6, 2, 1, 1],
      ["42", 1, 1, 0, 0],
      ["41", 3, 1, 1, 0],
    ]);
    expect(r.body.data[0].per_hour).toBe(6);
  });
});

describe("players", () => {
  let projectId: string;
  let apiKey: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    await ingest(app, apiKey, {
      errors: [
        { message: "Player bug A", user_id: 261, player_name: "Builderman", timestamp: at(9 * MIN) },
        { message: "Player bug B", user_id: 261, player_name: "Builderman", timestamp: at(8 * MIN) },
        { message: "Player bug A", user_id: "9007199254740993", player_name: "BigIdPlayer", timestamp: at(7 * MIN) },
        { message: "Player bug B", user_id: 77, timestamp: at(6 * MIN) },
      ],
    });
  });

  it("finds a player by user id or by part of the name", async () => {
    const byId = await getJson(app, "/api/v1/players?search=261", apiKey);
    expect(byId.body.data[0]).toMatchObject({ user_id: "261", player_name: "Builderman", issues: 2 });
    const byName = await getJson(app, "/api/v1/players?search=builder", apiKey);
    expect(byName.body.data.map((p: any) => p.user_id)).toEqual(["261"]);
    const big = await getJson(app, "/api/v1/players?search=9007199254740993", apiKey);
    expect(big.body.data.map((p: any) => p.user_id)).toEqual(["9007199254740993"]);
    const none = await getJson(app, "/api/v1/players?search=nobody", apiKey);
    expect(none.body.data).toEqual([]);
  });

  it("a player's page lists their issues and latest events; unknown ids are 404", async () => {
    const r = await getJson(app, "/api/v1/players/261", apiKey);
    expect(r.status).toBe(200);
    expect(r.body.player).toMatchObject({ user_id: "261", player_name: "Builderman" });
    expect(r.body.issues.map((g: any) => g.message)).toEqual(["Player bug B", "Player bug A"]);
    expect(r.body.events).toHaveLength(2);
    expect((await getJson(app, "/api/v1/players/12345", apiKey)).status).toBe(404);
    expect((await getJson(app, "/api/v1/players/not-a-number", apiKey)).status).toBe(404);
  });

  it("an issue lists its affected players", async () => {
    const g = await groupOf(projectId, "Player bug B");
    const r = await getJson(app, `/api/v1/errors/${g.id}`, apiKey);
    expect(r.body.players.map((p: any) => [p.user_id, p.player_name])).toEqual([["77", null], ["261", "Builderman"]]);
  });
});

describe("event navigation, tags and traces", () => {
  let projectId: string;
  let apiKey: string;
  let groupId: string;
  const TRACE = "6f1c3a1e-0000-4000-8000-00000000000a";
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    // 45 events with traces (traced events are always stored, so the throttle keeps them all)
    const errors = Array.from({ length: 45 }, (_, i) => ({
      message: "Paged bug",
      timestamp: at((60 - i) * MIN),
      trace_id: i === 44 ? TRACE : `6f1c3a1e-0000-4000-8000-${String(i).padStart(12, "0")}`,
      place_id: i % 3 === 0 ? 1818 : 1819,
      game_version: "7",
      job_id: `server-${i % 2}`,
      context: { map: i % 5 === 0 ? "Desert" : "City", round: i, nested: { x: 1 } },
      tags: ["combat"],
    }));
    await ingest(app, apiKey, { errors });
    groupId = (await groupOf(projectId, "Paged bug")).id;
  });

  it("pages through every stored event, older and newer, without gaps or repeats", async () => {
    const seen: string[] = [];
    let page = await getJson(app, `/api/v1/errors/${groupId}/events?limit=20`, apiKey);
    expect(page.body.newer).toBeNull();
    const pages = [page.body];
    while (page.body.older) {
      page = await getJson(app, `/api/v1/errors/${groupId}/events?limit=20&before=${page.body.older}`, apiKey);
      pages.push(page.body);
    }
    for (const p of pages) seen.push(...p.data.map((e: any) => e.id));
    expect(pages.map((p) => p.data.length)).toEqual([20, 20, 5]);
    expect(new Set(seen).size).toBe(45);
    const times = pages.flatMap((p) => p.data.map((e: any) => Date.parse(e.timestamp)));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    // back from the last page
    const back = await getJson(app, `/api/v1/errors/${groupId}/events?limit=20&after=${pages[2].data[0].id}`, apiKey);
    expect(back.body.data.map((e: any) => e.id)).toEqual(pages[1].data.map((e: any) => e.id));
    expect((await getJson(app, `/api/v1/errors/${groupId}/events?before=abc`, apiKey)).status).toBe(400);
  });

  it("says where more events lie when the last page is exactly full, in both directions", async () => {
    // 45 events in pages of 15: the page is read with one row past it, so a full last page must not
    // promise an older one, nor the newest page a newer one
    const ids = async (q: string) => (await getJson(app, `/api/v1/errors/${groupId}/events?limit=15${q}`, apiKey)).body;
    const first = await ids("");
    expect([first.newer, first.data.length]).toEqual([null, 15]);
    expect(first.older).toBe(first.data[14].id);
    const second = await ids(`&before=${first.older}`);
    expect([second.newer, second.older]).toEqual([second.data[0].id, second.data[14].id]);
    const last = await ids(`&before=${second.older}`);
    expect([last.data.length, last.newer, last.older]).toEqual([15, last.data[0].id, null]);
    // and back up: the page before the newest one still has a newer one, the newest none
    const up = await ids(`&after=${last.newer}`);
    expect(up.data.map((e: any) => e.id)).toEqual(second.data.map((e: any) => e.id));
    expect([up.newer, up.older]).toEqual([second.data[0].id, second.data[14].id]);
    const top = await ids(`&after=${up.newer}`);
    expect(top.data.map((e: any) => e.id)).toEqual(first.data.map((e: any) => e.id));
    expect([top.newer, top.older]).toEqual([null, first.older]);
    // an event id that is not one of this group's gives an empty page
    expect(await ids("&before=1")).toMatchObject({ data: [], newer: null, older: null });
  });

  it("breaks down the latest stored events only, up to the sample", async () => {
    expect(TAG_SAMPLE).toBe(1000);
    // the newest 10 of the 45 are events 35..44: places 1818 at 36, 39 and 42
    const r = await groupTagBreakdown(app.sql, projectId, groupId, 10);
    expect(r.sampled).toBe(10);
    expect(r.tags.find((t) => t.key === "place")).toEqual({ key: "place", total: 10, values: [{ value: "1819", count: 7 }, { value: "1818", count: 3 }] });
  });

  it("breaks down tags and context keys", async () => {
    const r = await getJson(app, `/api/v1/errors/${groupId}/tags`, apiKey);
    expect(r.body.sampled).toBe(45);
    const tag = (k: string) => r.body.tags.find((t: any) => t.key === k);
    expect(tag("place").values).toEqual([{ value: "1819", count: 30 }, { value: "1818", count: 15 }]);
    expect(tag("version").values).toEqual([{ value: "7", count: 45 }]);
    expect(tag("server").values).toEqual([{ value: "server-0", count: 23 }, { value: "server-1", count: 22 }]);
    expect(tag("context.map").values).toEqual([{ value: "City", count: 36 }, { value: "Desert", count: 9 }]);
    expect(tag("context.round").values).toHaveLength(5);
    expect(tag("context.nested")).toBeUndefined();
  });

  it("finds a trace's events over the days it spans, to the microsecond of its last", async () => {
    // the reads bound a trace's events by its first and last time (a Date holds milliseconds; the
    // stored times hold microseconds): events written with microseconds, over two days
    const trace = "6f1c3a1e-0000-4000-8000-0000000000ff";
    await app.sql`
      with t as (select now() - interval '1 day 3 hours' + interval '123 microseconds' as first, now() - interval '777 microseconds' as last)
      insert into events (project_id, group_id, message, level, environment, trace_id, "timestamp", received_at)
      select ${projectId}, ${groupId}, 'Paged bug', 'error', 'production', ${trace}, x, x from t, unnest(array[t.first, t.last]) x`;
    await app.sql`
      insert into traces (project_id, trace_id, first_seen, last_seen, event_count, group_ids)
      select ${projectId}, ${trace}, min("timestamp"), max("timestamp"), 2, array[${groupId}::uuid] from events
      where project_id = ${projectId} and trace_id = ${trace}`;
    const r = await getJson(app, `/api/v1/traces/${trace}`, apiKey);
    expect(r.body.events).toHaveLength(2);
    const list = await getJson(app, "/api/v1/traces?limit=100", apiKey);
    expect(list.body.data.find((t: any) => t.trace_id === trace)).toMatchObject({ event_count: 2, first_message: "Paged bug" });
    await app.sql`delete from traces where project_id = ${projectId} and trace_id = ${trace}`;
    await app.sql`delete from events where project_id = ${projectId} and trace_id = ${trace}`;
  });

  it("lists the project's traces, newest first", async () => {
    const r = await getJson(app, "/api/v1/traces?limit=10", apiKey);
    expect(r.body.total).toBe(45);
    expect(r.body.data[0]).toMatchObject({ trace_id: TRACE, event_count: 1, first_message: "Paged bug" });
    expect(r.body.data).toHaveLength(10);
  });
});
