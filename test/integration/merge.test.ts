import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * Merge and unmerge through the Team API: counts, users, rollups (stats and series) and stored events
 * move with a merge, later events of a merged fingerprint land in the target, an unmerge gives each
 * issue back exactly its own, and all of it stays exact while ingest keeps running.
 */

let app: TestApp;
let owner: { id: string; email: string; cookie: string };
let outsider: { cookie: string };

beforeAll(async () => {
  app = await startTestApp();
  owner = { ...(await makeUser(app.sql)), cookie: "" };
  owner.cookie = await login(app, owner.email);
  const o = await makeUser(app.sql);
  outsider = { cookie: await login(app, o.email) };
});
afterAll(() => app?.close());

type Group = { id: string; fingerprint: string; message: string; count: number; user_count: number; first_seen: string; last_seen: string; level: string };

async function groups(apiKey: string): Promise<Group[]> {
  const r = await getJson(app, "/api/v1/errors?grouped=true&limit=100&sort=count", apiKey);
  expect(r.status).toBe(200);
  return r.body.data;
}
const byMessage = async (apiKey: string, message: string) => (await groups(apiKey)).find((g) => g.message === message)!;
const detail = async (apiKey: string, id: string) => (await getJson(app, `/api/v1/errors/${id}`, apiKey)).body;
const seriesTotal = (d: { series: { count: number }[] }) => d.series.reduce((n, p) => n + Number(p.count), 0);
const stats = async (apiKey: string) => (await getJson(app, "/api/v1/stats?timeframe=24h", apiKey)).body;

/** What the tables say about a group, to compare with what the API says. */
async function rows(projectId: string, groupId: string) {
  await countersApplied(app.sql);
  const [r] = await app.sql<{ events: number; rollup_day: number; rollup_hour: number; rollup_minute: number; stored_count: number }[]>`
    select (select count(*)::int from events where project_id = ${projectId} and group_id = ${groupId}) as events,
      (select coalesce(sum(count), 0)::int from rollup_day where project_id = ${projectId} and group_id = ${groupId}) as rollup_day,
      (select coalesce(sum(count), 0)::int from rollup_hour where project_id = ${projectId} and group_id = ${groupId}) as rollup_hour,
      (select coalesce(sum(count), 0)::int from rollup_minute where project_id = ${projectId} and group_id = ${groupId}) as rollup_minute,
      (select stored_count::int from error_groups where project_id = ${projectId} and id = ${groupId}) as stored_count`;
  return r;
}

const merge = (projectId: string, body: unknown, cookie = owner.cookie) =>
  call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body });
const unmerge = (projectId: string, groupId: string, body: unknown, cookie = owner.cookie) =>
  call(app, "POST", `/api/team/projects/${projectId}/groups/${groupId}/unmerge`, { cookie, body });

const A = "Workspace.Map.Door:12: attempt to index nil with 'Open'";
const B = "ServerScriptService.Doors:40: attempt to call a nil value";
const C = "ServerScriptService.Shop:7: Purchase failed";

describe("merge and unmerge", () => {
  it("moves counts, users, rollups and events; later events of a merged fingerprint land in the target; unmerge restores", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, {
      errors: [
        ...[1, 2, 3, 4, 5].map((u) => ({ message: A, user_id: u, level: "warn" })),
        ...[4, 5, 6].map((u) => ({ message: B, user_id: u, count: 3 })),
        { message: C, user_id: 9 },
      ],
    });
    const a0 = await byMessage(apiKey, A);
    const b0 = await byMessage(apiKey, B);
    const c0 = await byMessage(apiKey, C);
    expect([a0.count, b0.count, c0.count]).toEqual([5, 9, 1]);
    const before = await stats(apiKey);

    const r = await merge(projectId, { ids: [a0.id, b0.id] });
    expect(r.status).toBe(200);
    // no target given: the issue with the most occurrences is the target
    expect(r.body.group.id).toBe(b0.id);
    expect(r.body.merged).toEqual([a0.id]);
    expect(r.body.group).toMatchObject({ count: 14, user_count: 6, level: "error", message: B });

    const listed = await groups(apiKey);
    expect(listed.map((g) => g.id).sort()).toEqual([b0.id, c0.id].sort());
    const d = await detail(apiKey, b0.id);
    expect(seriesTotal(d)).toBe(14);
    expect(d.events).toHaveLength(8);
    expect(await rows(projectId, b0.id)).toEqual({ events: 8, rollup_day: 14, rollup_hour: 14, rollup_minute: 14, stored_count: 8 });
    // the project's figures do not change: the same occurrences, in fewer issues
    const after = await stats(apiKey);
    expect(after.total_errors).toBe(before.total_errors);
    expect(after.by_level).toEqual(before.by_level);
    expect(after.top_errors[0]).toMatchObject({ id: b0.id, count: 14 });
    expect(after.open_groups).toBe(2);

    const members = await call(app, "GET", `/api/team/projects/${projectId}/groups/${b0.id}/merged`, { cookie: owner.cookie });
    expect(members.status).toBe(200);
    expect(members.body.members.map((m: any) => [m.own, m.message, m.count])).toEqual([
      [true, B, 9],
      [false, A, 5],
    ]);

    // later events of either fingerprint land in the target
    await ingest(app, apiKey, {
      errors: [{ message: A, user_id: 7, level: "warn" }, { message: A, user_id: 1, level: "info" }, { message: B, user_id: 7, count: 2 }],
    });
    expect(await groups(apiKey)).toHaveLength(2);
    expect(await byMessage(apiKey, B)).toMatchObject({ id: b0.id, count: 18, user_count: 7 });

    const u = await unmerge(projectId, b0.id, { ids: [a0.id] });
    expect(u.status).toBe(200);
    expect(u.body.unmerged).toEqual([a0.id]);
    const a1 = await byMessage(apiKey, A);
    const b1 = await byMessage(apiKey, B);
    expect(a1).toMatchObject({ id: a0.id, fingerprint: a0.fingerprint, count: 7, user_count: 6, level: "warn" });
    expect(b1).toMatchObject({ id: b0.id, fingerprint: b0.fingerprint, count: 11, user_count: 4, level: "error" });
    expect(await rows(projectId, a0.id)).toEqual({ events: 7, rollup_day: 7, rollup_hour: 7, rollup_minute: 7, stored_count: 7 });
    expect(await rows(projectId, b0.id)).toEqual({ events: 4, rollup_day: 11, rollup_hour: 11, rollup_minute: 11, stored_count: 4 });
    expect(seriesTotal(await detail(apiKey, a0.id))).toBe(7);
    const done = await stats(apiKey);
    expect(done.total_errors).toBe(before.total_errors + 4);
    expect(done.open_groups).toBe(3);
    const none = await call(app, "GET", `/api/team/projects/${projectId}/groups/${b0.id}/merged`, { cookie: owner.cookie });
    expect(none.body.members).toEqual([]);
  });

  it("each member row, the issue's own included, counts the players of events after the merge", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: [{ message: B, user_id: 1, count: 3 }, { message: A, user_id: 2 }] });
    const b0 = await byMessage(apiKey, B);
    const a0 = await byMessage(apiKey, A);
    expect((await merge(projectId, { ids: [a0.id, b0.id], target_id: b0.id })).status).toBe(200);
    const members = async () => {
      await countersApplied(app.sql);
      const r = await call(app, "GET", `/api/team/projects/${projectId}/groups/${b0.id}/merged`, { cookie: owner.cookie });
      expect(r.status).toBe(200);
      return r.body.members.map((m: any) => [m.own, m.message, m.count, m.user_count]);
    };
    expect(await members()).toEqual([
      [true, B, 3, 1],
      [false, A, 1, 1],
    ]);

    // two players new to the issue, and one the other member had already seen
    await ingest(app, apiKey, { errors: [10, 11, 2].map((u) => ({ message: B, user_id: u })) });
    expect(await members()).toEqual([
      [true, B, 6, 4],
      [false, A, 1, 1],
    ]);
    expect(await byMessage(apiKey, B)).toMatchObject({ id: b0.id, count: 7, user_count: 4 });
    await ingest(app, apiKey, { errors: [{ message: A, user_id: 1 }, { message: B, user_id: 11 }] });
    expect(await members()).toEqual([
      [true, B, 7, 4],
      [false, A, 2, 2],
    ]);
    expect(await byMessage(apiKey, B)).toMatchObject({ id: b0.id, count: 9, user_count: 4 });

    // each issue gets back exactly its own players
    expect((await unmerge(projectId, b0.id, { ids: [a0.id] })).status).toBe(200);
    expect(await byMessage(apiKey, B)).toMatchObject({ id: b0.id, count: 7, user_count: 4 });
    expect(await byMessage(apiKey, A)).toMatchObject({ id: a0.id, count: 2, user_count: 2 });
  });

  it("merges several issues into a chosen target, keeps the target's status, and unmerges one at a time", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: ["one", "two", "three"].map((w) => ({ message: `Quest ${w} failed to load` })) });
    await ingest(app, apiKey, { message: "Quest two failed to load" });
    const [one, two, three] = await Promise.all(["one", "two", "three"].map((w) => byMessage(apiKey, `Quest ${w} failed to load`)));
    await call(app, "PATCH", `/api/team/projects/${projectId}/groups/${one.id}`, { cookie: owner.cookie, body: { status: "resolved" } });
    const r = await merge(projectId, { ids: [two.id, three.id, one.id], target_id: one.id });
    expect(r.status).toBe(200);
    expect(r.body.group).toMatchObject({ id: one.id, count: 4, status: "resolved" });
    expect(r.body.merged).toEqual([two.id, three.id].sort());
    // an occurrence of a member reopens the issue, as any occurrence of a resolved issue does
    await ingest(app, apiKey, { message: "Quest three failed to load" });
    expect(await byMessage(apiKey, "Quest one failed to load")).toMatchObject({ count: 5 });
    expect((await detail(apiKey, one.id)).group.status).toBe("open");
    expect((await unmerge(projectId, one.id, { ids: [three.id] })).body.group.count).toBe(3);
    expect(await byMessage(apiKey, "Quest three failed to load")).toMatchObject({ id: three.id, count: 2 });
    expect((await unmerge(projectId, one.id, { ids: [two.id] })).body.group).toMatchObject({ count: 1, fingerprint: one.fingerprint });
    expect((await groups(apiKey)).map((g) => [g.message, g.count]).sort()).toEqual([
      ["Quest one failed to load", 1],
      ["Quest three failed to load", 2],
      ["Quest two failed to load", 2],
    ]);
  });

  it("moves traces with the events and back", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const trace = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
    await ingest(app, apiKey, { errors: [{ message: "Trade step one broke", trace_id: trace }, { message: "Trade step two broke", trace_id: trace }] });
    const one = await byMessage(apiKey, "Trade step one broke");
    const two = await byMessage(apiKey, "Trade step two broke");
    await merge(projectId, { ids: [one.id, two.id], target_id: one.id });
    expect((await getJson(app, `/api/v1/traces/${trace}`, apiKey)).body.trace.group_ids).toEqual([one.id]);
    await unmerge(projectId, one.id, { ids: [two.id] });
    expect((await getJson(app, `/api/v1/traces/${trace}`, apiKey)).body.trace.group_ids).toEqual([one.id, two.id].sort());
  });

  it("a share link to a merged-away issue shows that issue's own part: its events and chart, not an empty page", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: [{ message: "Shared part one broke" }, { message: "Shared part two broke" }, { message: "Shared part two broke" }] });
    const one = await byMessage(apiKey, "Shared part one broke");
    const two = await byMessage(apiKey, "Shared part two broke");
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie: owner.cookie, body: { group_id: two.id, role: "viewer" } });
    expect(link.status).toBe(201);
    expect((await merge(projectId, { ids: [one.id, two.id], target_id: one.id })).status).toBe(200);
    const shared = await getJson(app, `/api/share/${link.body.token}`);
    expect(shared.status).toBe(200);
    expect(shared.body.group.count).toBe(2);
    // before: the merged-away issue's events and series were looked up under its own id, where none are left
    expect(shared.body.events.map((e: { message: string }) => e.message)).toEqual(["Shared part two broke", "Shared part two broke"]);
    expect(seriesTotal(shared.body)).toBe(2);
  });

  it("deleting a merged issue deletes its members too", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, {
      errors: [{ message: "Pet fell through map", user_id: 3, game_version: "7" }, { message: "Pet stuck in wall", user_id: 4, game_version: "8" }],
    });
    const [x, y] = await groups(apiKey);
    const target = (await merge(projectId, { ids: [x.id, y.id] })).body.group.id;
    const member = target === x.id ? y.id : x.id;
    expect((await call(app, "DELETE", `/api/team/projects/${projectId}/groups/${member}`, { cookie: owner.cookie })).status).toBe(404);
    const del = await call(app, "DELETE", `/api/team/projects/${projectId}/groups/${target}`, { cookie: owner.cookie });
    expect(del.status).toBe(200);
    const [left] = await app.sql`select (select count(*)::int from error_groups where project_id = ${projectId}) as n,
      (select count(*)::int from group_users where project_id = ${projectId}) as users,
      (select count(*)::int from group_environments where project_id = ${projectId}) as environments,
      (select count(*)::int from group_versions where project_id = ${projectId}) as versions`;
    expect({ ...left }).toEqual({ n: 0, users: 0, environments: 0, versions: 0 });
  });

  it("refuses bad requests with the error body and changes nothing", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: [{ message: "Boat sank" }, { message: "Boat flew" }, { message: "Boat vanished" }] });
    const [p, q, s] = await groups(apiKey);
    const snapshot = async () => (await app.sql`select id, count, merged_into from error_groups where project_id = ${projectId} order by id`).map((r) => ({ ...r }));
    const start = await snapshot();

    const bad = [
      [{}, 400],
      [{ ids: [] }, 400],
      [{ ids: [p.id] }, 400],
      [{ ids: [p.id, p.id] }, 400],
      [{ ids: ["nope", q.id] }, 400],
      [{ ids: [p.id, q.id], target_id: 5 }, 400],
      [{ ids: [p.id, "6f9619ff-8b86-4011-b42d-00cf4fc964ff"] }, 404],
    ] as const;
    for (const [body, status] of bad) {
      const r = await merge(projectId, body);
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body.error).toBe(status === 400 ? "invalid_payload" : "not_found");
      expect(typeof r.body.message).toBe("string");
    }
    expect((await merge(projectId, { ids: [p.id, q.id] }, outsider.cookie)).status).toBe(404);
    expect((await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { body: { ids: [p.id, q.id] } })).status).toBe(401);
    expect(await snapshot()).toEqual(start);

    const m = await merge(projectId, { ids: [p.id, q.id], target_id: p.id });
    expect(m.status).toBe(200);
    // a member is not an issue of its own any more; an issue holding members can only be a target
    expect((await merge(projectId, { ids: [q.id, s.id] })).status).toBe(404);
    const nested = await merge(projectId, { ids: [s.id, p.id], target_id: s.id });
    expect(nested.status).toBe(409);
    expect(nested.body.error).toBe("conflict");
    const own = (await call(app, "GET", `/api/team/projects/${projectId}/groups/${p.id}/merged`, { cookie: owner.cookie })).body.members[0];
    expect(own.own).toBe(true);
    expect((await unmerge(projectId, p.id, { ids: [own.id] })).status).toBe(409);
    expect((await unmerge(projectId, p.id, { ids: [s.id] })).status).toBe(404);
    expect((await unmerge(projectId, p.id, { ids: "x" })).status).toBe(400);
    expect((await unmerge(projectId, "nope", { ids: [q.id] })).status).toBe(404);
    expect((await unmerge(projectId, p.id, { ids: [q.id] }, outsider.cookie)).status).toBe(404);
  });
});

/**
 * Every figure of an issue as the API shows it: header counters, chart, environments, versions,
 * players, tags, stored events, its place in the stats, and (per player) how many issues it counts for.
 */
async function figures(apiKey: string, id: string) {
  const d = await detail(apiKey, id);
  const tags = (await getJson(app, `/api/v1/errors/${id}/tags`, apiKey)).body;
  const events: string[] = [];
  for (let before: string | null = null, first = true; first || before; first = false) {
    const page: any = (await getJson(app, `/api/v1/errors/${id}/events?limit=100${before ? `&before=${before}` : ""}`, apiKey)).body;
    for (const e of page.data) events.push(`${e.message}|${new Date(e.timestamp).toISOString()}|${e.user_id}|${e.environment}|${e.count}`);
    before = page.older;
  }
  const top = (await stats(apiKey)).top_errors.find((t: { id: string }) => t.id === id);
  const g = d.group;
  return {
    count: Number(g.count),
    user_count: Number(g.user_count),
    first_seen: g.first_seen,
    last_seen: g.last_seen,
    level: g.level,
    first_version: g.first_version,
    last_version: g.last_version,
    series: Object.fromEntries(d.series.filter((s: { count: number }) => s.count > 0).map((s: { bucket: string; count: number }) => [s.bucket, s.count])),
    environments: Object.fromEntries(d.environments.map((e: any) => [e.environment, [e.count, e.first_seen, e.last_seen]])),
    versions: Object.fromEntries(d.versions.map((v: any) => [v.version, [v.count, v.first_seen, v.last_seen]])),
    players: d.players.map((p: { user_id: string }) => p.user_id).sort(),
    tags: Object.fromEntries(tags.tags.map((t: any) => [t.key, Object.fromEntries(t.values.map((v: any) => [v.value, v.count]))])),
    sampled: tags.sampled,
    events: events.sort(),
    top: top?.count ?? 0,
  };
}
type Figures = Awaited<ReturnType<typeof figures>>;

const addCounts = (a: Record<string, number>, b: Record<string, number>) => {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};
const addSpans = (a: Record<string, [number, string, string]>, b: Record<string, [number, string, string]>) => {
  const out = { ...a };
  for (const [k, [n, first, last]] of Object.entries(b)) {
    const x = out[k];
    out[k] = x ? [x[0] + n, first < x[1] ? first : x[1], last > x[2] ? last : x[2]] : [n, first, last];
  }
  return out;
};
const LEVEL_RANK: Record<string, number> = { info: 0, warn: 1, error: 2 };

/** What a merged issue of `a` and `b` must show: sums, unions, the earliest start and the latest end. */
function merged(a: Figures, b: Figures): Figures {
  const earliest = a.first_seen <= b.first_seen ? a : b;
  const latest = a.last_seen >= b.last_seen ? a : b;
  const players = [...new Set([...a.players, ...b.players])].sort();
  const tags: Figures["tags"] = {};
  for (const k of new Set([...Object.keys(a.tags), ...Object.keys(b.tags)])) tags[k] = addCounts(a.tags[k] ?? {}, b.tags[k] ?? {});
  return {
    count: a.count + b.count,
    user_count: players.length,
    first_seen: earliest.first_seen,
    last_seen: latest.last_seen,
    level: LEVEL_RANK[a.level] >= LEVEL_RANK[b.level] ? a.level : b.level,
    first_version: earliest.first_version,
    last_version: latest.last_version,
    series: addCounts(a.series, b.series),
    environments: addSpans(a.environments, b.environments),
    versions: addSpans(a.versions, b.versions),
    players,
    tags,
    sampled: a.sampled + b.sampled,
    events: [...a.events, ...b.events].sort(),
    top: a.top + b.top,
  };
}

/** The project-wide figures that a merge must not change, and the per-version and per-player ones it changes. */
async function projectFigures(apiKey: string, names: Record<string, string>) {
  const s = await stats(apiKey);
  const releases = (await getJson(app, "/api/v1/releases", apiKey)).body.data.map((r: any) => [r.version, r.occurrences, r.issues, r.new_issues]);
  const players = (await getJson(app, "/api/v1/players?limit=100", apiKey)).body.data.map((p: any) => [p.user_id, Number(p.issues)]).sort();
  const playerIssues: Record<string, string[]> = {};
  for (const [userId] of players) {
    const p = (await getJson(app, `/api/v1/players/${userId}`, apiKey)).body;
    playerIssues[userId] = p.issues.map((g: { id: string }) => names[g.id] ?? g.id).sort();
  }
  return {
    total: s.total_errors,
    by_level: s.by_level,
    top: s.top_errors.map((t: { id: string; count: number }) => [names[t.id] ?? t.id, t.count]),
    releases,
    players,
    playerIssues,
  };
}

describe("a merged issue's figures", () => {
  it("are the sums and unions of its members' in every view, and unmerge gives each member back exactly its own", async () => {
    // the same events go to a project that merges and to one that never does
    const merging = await makeProject(app.sql, owner.id);
    const control = await makeProject(app.sql, owner.id);
    const D = "ServerScriptService.Doors:40: attempt to call a nil value";
    const L = "Workspace.Map.Lift:7: attempt to index nil with 'Floor'";
    const hour = 3_600_000;
    const now = Date.now();
    const at = (hoursAgo: number, minutes = 0) => new Date(now - hoursAgo * hour + minutes * 60_000).toISOString();
    const send = (events: object[]) => Promise.all([merging, control].map((p) => ingest(app, p.apiKey, { errors: events })));
    await send([
      { message: D, user_id: 1, environment: "production", game_version: "41", timestamp: at(30), tags: ["map:castle"] },
      { message: D, user_id: 2, environment: "production", game_version: "41", timestamp: at(20), count: 3 },
      { message: D, user_id: 3, environment: "studio", game_version: "42", timestamp: at(5), level: "warn", tags: ["map:castle"] },
      { message: L, user_id: 3, environment: "production", game_version: "42", timestamp: at(8), tags: ["map:tower"] },
      { message: L, user_id: 4, environment: "production", game_version: "43", timestamp: at(2), count: 4 },
      { message: L, user_id: 5, environment: "staging", timestamp: at(1), level: "info" },
    ]);
    const idsOf = async (apiKey: string) => ({ d: (await byMessage(apiKey, D)).id, l: (await byMessage(apiKey, L)).id });
    const m = await idsOf(merging.apiKey);
    const c = await idsOf(control.apiKey);
    const mNames = { [m.d]: "D", [m.l]: "L" };
    const cNames = { [c.d]: "D", [c.l]: "L" };
    const expectSameAsControl = async () => {
      expect(await figures(merging.apiKey, m.d)).toEqual(await figures(control.apiKey, c.d));
      expect(await figures(merging.apiKey, m.l)).toEqual(await figures(control.apiKey, c.l));
      expect(await projectFigures(merging.apiKey, mNames)).toEqual(await projectFigures(control.apiKey, cNames));
    };
    await expectSameAsControl();

    // the smaller issue stays: the target is the one asked for
    const r = await merge(merging.projectId, { ids: [m.d, m.l], target_id: m.l });
    expect(r.status).toBe(200);
    expect(r.body.group.id).toBe(m.l);
    const expectMerged = async () => {
      const whole = merged(await figures(control.apiKey, c.d), await figures(control.apiKey, c.l));
      const got = await figures(merging.apiKey, m.l);
      expect(got).toEqual(whole);
      // the header and the tables agree
      expect(Object.values(got.environments).reduce((n, e) => n + e[0], 0)).toBe(got.count);
      expect(Object.values(got.series).reduce((n, x) => n + x, 0)).toBe(got.count);
      const p = await projectFigures(merging.apiKey, mNames);
      const q = await projectFigures(control.apiKey, cNames);
      expect({ total: p.total, by_level: p.by_level }).toEqual({ total: q.total, by_level: q.by_level });
      expect(p.top).toEqual([["L", whole.top]]);
      // one issue per player and per version: the merged one
      for (const [userId, n] of p.players) expect([userId, n]).toEqual([userId, p.playerIssues[userId].length]);
      for (const issues of Object.values(p.playerIssues)) expect(issues).toEqual(["L"]);
      for (const [version, occurrences, issues, fresh] of p.releases) {
        const inControl = q.releases.find((x: unknown[]) => x[0] === version);
        expect([version, occurrences, issues]).toEqual([version, inControl[1], 1]);
        expect(fresh).toBe(version === whole.first_version ? 1 : 0);
      }
      // an environment filter finds the issue by any member's occurrences there, counted in full
      for (const [environment, [n]] of Object.entries(whole.environments)) {
        const r = await getJson(app, `/api/v1/errors?grouped=true&environment=${environment}`, merging.apiKey);
        expect(r.body.data.map((g: any) => [g.id, Number(g.environment_count)])).toEqual([[m.l, n]]);
      }
      // the merged-away issue says where it went, and shows its own part of it (it is no top error of its own)
      const away = await detail(merging.apiKey, m.d);
      expect(away.group.merged_into).toBe(m.l);
      expect(await figures(merging.apiKey, m.d)).toEqual({ ...(await figures(control.apiKey, c.d)), top: 0 });
    };
    await expectMerged();

    // a merged-away issue has no status of its own to change: the issue it is in has it
    const patch = await call(app, "PATCH", `/api/team/projects/${merging.projectId}/groups/${m.d}`, { cookie: owner.cookie, body: { status: "resolved" } });
    expect(patch.status).toBe(409);
    expect(patch.body.error).toBe("conflict");
    expect(patch.body.message).toContain(m.l);
    const bulk = await call(app, "POST", `/api/team/projects/${merging.projectId}/groups/status`, {
      cookie: owner.cookie,
      body: { ids: [m.d, m.l], status: "ignored" },
    });
    expect(bulk.body).toMatchObject({ updated: 1, ids: [m.l] });
    await call(app, "PATCH", `/api/team/projects/${merging.projectId}/groups/${m.l}`, { cookie: owner.cookie, body: { status: "open" } });
    expect((await detail(merging.apiKey, m.d)).group.status).toBe("open");

    // later events of both fingerprints, in new environments and versions, from new players
    await send([
      { message: D, user_id: 6, environment: "staging", game_version: "44", timestamp: at(0.5), tags: ["map:tower"] },
      { message: D, user_id: 4, environment: "production", game_version: "43", timestamp: at(0.4), count: 2 },
      { message: L, user_id: 7, environment: "production", game_version: "44", timestamp: at(0.3), level: "error" },
    ]);
    await expectMerged();

    const u = await unmerge(merging.projectId, m.l, { ids: [m.d] });
    expect(u.status).toBe(200);
    await expectSameAsControl();
  });
});

describe("merge in the dashboard", () => {
  const post = (path: string, form: [string, string][]) =>
    app.request(path, {
      method: "POST",
      headers: { cookie: owner.cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: new URLSearchParams(form).toString(),
      redirect: "manual",
    });
  const html = async (r: Response) => (await r.text()).replaceAll("<!-- -->", "");

  it("asks first, merges into the issue picked, and the merged-away page names it without status actions", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    await ingest(app, apiKey, { errors: [{ message: "Crate drop failed" }, { message: "Crate drop failed" }, { message: "Crate open failed" }] });
    const big = await byMessage(apiKey, "Crate drop failed");
    const small = await byMessage(apiKey, "Crate open failed");
    const list = `/projects/${projectId}/issues?index`;
    const merged = async () => (await app.sql`select id, merged_into from error_groups where project_id = ${projectId} and merged_into is not null and not merged_own`).map((r) => ({ ...r }));

    const one = await post(list, [["intent", "merge"], ["ids", big.id]]);
    expect(one.status).toBe(400);
    expect(await html(one)).toContain("Select at least two different issues to merge.");

    // the first step only asks, with the larger issue suggested
    const ask = await post(list, [["intent", "merge"], ["ids", big.id], ["ids", small.id]]);
    expect(ask.status).toBe(200);
    const dialog = await html(ask);
    expect(dialog).toContain("Merge 2 issues into one?");
    expect(dialog).toContain(`name="target_id" checked="" value="${big.id}"`);
    expect(await merged()).toEqual([]);

    const done = await post(list, [["intent", "merge-confirmed"], ["ids", big.id], ["ids", small.id], ["target_id", small.id]]);
    expect(done.status).toBe(200);
    expect(await html(done)).toContain("Merged 2 issues into “Crate open failed”");
    expect(await merged()).toEqual([{ id: big.id, merged_into: small.id }]);

    const page = await html(await app.request(`/projects/${projectId}/issues/${big.id}`, { headers: { cookie: owner.cookie } }));
    expect(page).toContain("Merged into another issue.");
    expect(page).toContain(`href="/projects/${projectId}/issues/${small.id}"`);
    expect(page).not.toMatch(/>Resolve<|>Ignore<|Snooze: ignore until/);
    const refused = await post(`/projects/${projectId}/issues/${big.id}`, [["intent", "status"], ["status", "resolved"]]);
    expect(refused.status).toBe(409);
    expect(await html(refused)).toContain(`merged into issue ${small.id}`);
  });
});

describe("merge under concurrent ingest", () => {
  it("counts every occurrence exactly while issues are merged and unmerged again and again", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const X = "ServerScriptService.Round:88: attempt to compare nil < number";
    const Y = "ServerScriptService.Round:91: attempt to compare nil < number";
    await ingest(app, apiKey, { errors: [{ message: X }, { message: Y }] });
    const x = await byMessage(apiKey, X);
    const y = await byMessage(apiKey, Y);
    const sent = { [X]: 1, [Y]: 1 };
    const users = { [X]: new Set<number>(), [Y]: new Set<number>() };

    let stop = false;
    let merging = false;
    let batchesDuringMerges = 0;
    const writer = async (w: number) => {
      for (let i = 0; !stop || i < 5; i++) {
        const errors = Array.from({ length: 10 }, (_, k) => {
          const message = (i + k + w) % 3 === 0 ? Y : X;
          const user_id = 1 + ((w * 7 + i * 3 + k) % 40);
          const count = 1 + ((i + k) % 3);
          sent[message] += count;
          users[message].add(user_id);
          return { message, user_id, count };
        });
        await ingest(app, apiKey, { errors });
        if (merging) batchesDuringMerges++;
      }
    };
    const writers = Array.from({ length: 6 }, (_, w) => writer(w));
    let merges = 0;
    merging = true;
    for (let round = 0; round < 6; round++) {
      const m = await merge(projectId, { ids: [x.id, y.id], target_id: x.id });
      expect(m.status).toBe(200);
      merges++;
      const u = await unmerge(projectId, x.id, { ids: [y.id] });
      expect(u.status).toBe(200);
    }
    const final = await merge(projectId, { ids: [x.id, y.id], target_id: x.id });
    expect(final.status).toBe(200);
    merging = false;
    stop = true;
    await Promise.all(writers);
    expect(merges).toBe(6);
    // the merges really did run while ingest was writing the same fingerprints
    expect(batchesDuringMerges).toBeGreaterThan(0);

    const union = new Set([...users[X], ...users[Y]]).size;
    const whole = await detail(apiKey, x.id);
    const merged = whole.group;
    expect(merged).toMatchObject({ count: sent[X] + sent[Y], user_count: union });
    const envTotal = (d: { environments: { count: number }[] }) => d.environments.reduce((n, e) => n + e.count, 0);
    expect(envTotal(whole)).toBe(sent[X] + sent[Y]);
    expect(await rows(projectId, x.id)).toMatchObject({ rollup_day: sent[X] + sent[Y], rollup_hour: sent[X] + sent[Y], rollup_minute: sent[X] + sent[Y] });
    const r = await rows(projectId, x.id);
    expect(r.stored_count).toBe(r.events);
    expect((await stats(apiKey)).total_errors).toBe(sent[X] + sent[Y]);

    await unmerge(projectId, x.id, { ids: [y.id] });
    expect(await byMessage(apiKey, X)).toMatchObject({ id: x.id, count: sent[X], user_count: users[X].size });
    expect(await byMessage(apiKey, Y)).toMatchObject({ id: y.id, count: sent[Y], user_count: users[Y].size });
    for (const [g, n] of [[x.id, sent[X]], [y.id, sent[Y]]] as const) {
      expect(envTotal(await detail(apiKey, g))).toBe(n);
      const t = await rows(projectId, g);
      expect(t).toMatchObject({ rollup_day: n, rollup_hour: n, rollup_minute: n });
      expect(t.stored_count).toBe(t.events);
    }
  });
});
