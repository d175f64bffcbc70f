import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRetention } from "../../jobs/retention.js";
import { countersApplied } from "../support/counters.js";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * An issue's title and message are its first event's text, which may name that event's player. The
 * share views must scrub that name whether or not the first event is still among the events they read
 * (the oldest and newest stored ones), and after retention has deleted it.
 */
let app: TestApp;
let userId: string;
let cookie: string;
let addr = 0;
const fresh = () => ({ "x-forwarded-for": `10.7.${Math.floor(++addr / 250)}.${addr % 250}` });

const HIDDEN = ["HiddenFirstKid", "31415926"];
const FIRST = { message: "Kicked HiddenFirstKid for flying", player_name: "HiddenFirstKid", user_id: 31415926 };
const MINUTE = 60_000;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Events of the same issue by other players, at the given times. */
const others = (times: number[], offset: number) =>
  times.map((t, i) => ({ message: `Kicked OtherKid${offset + i} for flying`, player_name: `OtherKid${offset + i}`, user_id: 5_000_000 + offset + i, timestamp: iso(t) }));

/** 60 events of other players in the hour before `at` and 60 in the hour after: the first event is in neither page read. */
const around = (at: number) => [
  ...others(Array.from({ length: 60 }, (_, i) => at - (i + 1) * MINUTE), 0),
  ...others(Array.from({ length: 60 }, (_, i) => at + (i + 1) * MINUTE), 60),
];

async function send(apiKey: string, events: unknown[]) {
  for (let i = 0; i < events.length; i += 100) await ingest(app, apiKey, { errors: events.slice(i, i + 100) });
}

const leaks = (text: string) => HIDDEN.filter((h) => text.toLowerCase().includes(h.toLowerCase()));

/** Every answer a share link gives about the issue: its creation, the JSON, the page, an editor's change. */
async function everyShareAnswer(projectId: string, groupId: string) {
  const answers: string[] = [];
  const mk = async (role: string) => {
    const r = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role } });
    expect(r.status).toBe(201);
    answers.push(JSON.stringify(r.body));
    return r.body.token as string;
  };
  const viewer = await mk("viewer");
  const editor = await mk("editor");
  for (const token of [viewer, editor]) {
    const json = await call(app, "GET", `/api/share/${token}`, { headers: fresh() });
    expect(json.status).toBe(200);
    expect(json.body.group.message).toBe("Kicked <player> for flying");
    expect(json.body.group.title).toBe("Kicked <player> for flying");
    answers.push(JSON.stringify(json.body));
    const page = await app.request(`/share/${token}`, { headers: fresh() });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("for flying");
    answers.push(html);
  }
  for (const status of ["resolved", "open"]) {
    const r = await call(app, "POST", `/api/share/${editor}`, { body: { status }, headers: fresh() });
    expect(r.status).toBe(200);
    expect(r.body.group.status).toBe(status);
    answers.push(JSON.stringify(r.body));
  }
  return answers;
}

async function project() {
  const { projectId, apiKey } = await makeProject(app.sql, userId);
  return { projectId, apiKey };
}

const groupsOf = (projectId: string) =>
  app.sql<{ id: string; message: string; culprit: string | null }[]>`
    select id, message, culprit from error_groups where project_id = ${projectId} and merged_into is null`;
const kept = async (groupId: string) =>
  (await app.sql<{ identities: string[] | null }[]>`select identities from error_groups where id = ${groupId}`)[0].identities;

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "1", THROTTLE_LIMIT: "100000", SHARE_RATE_LIMIT: "1000" });
  const u = await makeUser(app.sql);
  userId = u.id;
  cookie = await login(app, u.email);
});
afterAll(() => app?.close());

describe("the first event's player on a share link", () => {
  it("is scrubbed when 60 older and 60 newer events of other players leave the first event out of those read", async () => {
    const { projectId, apiKey } = await project();
    const at = Date.now() - 2 * DAY;
    await send(apiKey, [{ ...FIRST, timestamp: iso(at) }]);
    await send(apiKey, around(at));
    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(1);
    expect(groups[0].message).toBe(FIRST.message);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(121);
    // the row keeps who its text names; the 120 later events of an unchanged text add nobody
    expect(await kept(groups[0].id)).toEqual(["HiddenFirstKid"]);
    for (const answer of await everyShareAnswer(projectId, groups[0].id)) expect(leaks(answer)).toEqual([]);
  });

  it("keeps the names the later event that gives the issue its culprit puts in it, once", async () => {
    const { projectId, apiKey } = await project();
    // Sentry events: a frame's module is the culprit as sent; one issue whatever the stack
    const sentry = async (body: Record<string, unknown>) => {
      const r = await app.request(`/api/${projectId}/store/?sentry_key=${apiKey}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ platform: "other", level: "error", fingerprint: ["kicked-for-flying"], ...body }),
      });
      expect(r.status).toBe(200);
    };
    await sentry({ message: "Kicked HiddenFirstKid for flying", user: { id: "31415926", username: "HiddenFirstKid" } });
    const [{ id, culprit }] = await groupsOf(projectId);
    expect(culprit).toBeNull();
    // only what the text holds is kept: the user id is not in it
    expect(await kept(id)).toEqual(["HiddenFirstKid"]);
    const kick = (reporter: string, kid: string) =>
      sentry({
        message: "Kicked someone for flying",
        user: { username: reporter },
        tags: { player: kid },
        exception: { values: [{ type: "Kick", value: "kicked", stacktrace: { frames: [{ module: `Moderation.Watch.${kid}`, lineno: 3, in_app: true }] } }] },
      });
    await kick("Reporter", "CulpritKid");
    await countersApplied(app.sql);
    const [after, ...none] = await groupsOf(projectId);
    expect(none).toEqual([]);
    expect(after.culprit).toBe("Moderation.Watch.CulpritKid");
    expect(await kept(id)).toEqual(["HiddenFirstKid", "CulpritKid"]);
    // set once: a later event with a culprit changes nothing
    await kick("Reporter2", "LaterKid");
    expect(await kept(id)).toEqual(["HiddenFirstKid", "CulpritKid"]);
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: id, role: "viewer" } });
    const shared = await call(app, "GET", `/api/share/${link.body.token}`, { headers: fresh() });
    expect(shared.body.group).toMatchObject({ message: "Kicked <player> for flying", culprit: "Moderation.Watch.<player>" });
  });

  it("keeps at most 32 names", async () => {
    const { projectId, apiKey } = await project();
    const crowd = Array.from({ length: 40 }, (_, i) => `CrowdKid${i}`);
    await send(apiKey, [{ message: `Teleport failed for ${crowd.map((k) => `Players.${k}`).join(", ")}` }]);
    const [{ id }] = await groupsOf(projectId);
    expect(await kept(id)).toEqual(crowd.slice(0, 32));
  });

  it("is scrubbed after retention deleted the first event", async () => {
    const { projectId, apiKey } = await project();
    await send(apiKey, [{ ...FIRST, timestamp: iso(Date.now() - 40 * DAY) }]);
    await send(apiKey, others(Array.from({ length: 110 }, (_, i) => Date.now() - 20 * DAY + i * 60 * MINUTE), 0));
    await runRetention(app.sql, 30);
    const [{ n }] = await app.sql<{ n: number }[]>`
      select count(*)::int as n from events where project_id = ${projectId} and player_name = ${FIRST.player_name}`;
    expect(n).toBe(0);
    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(1);
    expect(groups[0].message).toBe(FIRST.message);
    for (const answer of await everyShareAnswer(projectId, groups[0].id)) expect(leaks(answer)).toEqual([]);
  });

  it("is scrubbed on the issue another issue was merged into, and again once it is unmerged", async () => {
    const { projectId, apiKey } = await project();
    const at = Date.now() - 2 * DAY;
    await send(apiKey, [{ ...FIRST, timestamp: iso(at) }]);
    await send(apiKey, [
      ...around(at),
      { message: "Shop purchase failed", player_name: "Buyer1", timestamp: iso(at) },
    ]);
    const groups = await groupsOf(projectId);
    const target = groups.find((g) => g.message === FIRST.message)!;
    const other = groups.find((g) => g.message !== FIRST.message)!;
    const merged = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body: { ids: [target.id, other.id], target_id: target.id } });
    expect(merged.status).toBe(200);
    for (const answer of await everyShareAnswer(projectId, target.id)) expect(leaks(answer)).toEqual([]);
    const back = await call(app, "POST", `/api/team/projects/${projectId}/groups/${target.id}/unmerge`, { cookie, body: { ids: [other.id] } });
    expect(back.status).toBe(200);
    for (const answer of await everyShareAnswer(projectId, target.id)) expect(leaks(answer)).toEqual([]);
  });

  it("is scrubbed from a merged issue's shown events when a merged member's first event named the player", async () => {
    const { projectId, apiKey } = await project();
    const at = Date.now() - 2 * DAY;
    const fingerprint = ["member-kicks"];
    await send(apiKey, [{ message: "Shop purchase failed", player_name: "Buyer1", timestamp: iso(at) }]);
    await send(apiKey, [{ ...FIRST, timestamp: iso(at), fingerprint }]);
    await send(apiKey, [
      ...around(at).map((e) => ({ ...e, fingerprint })),
      // the newest event, shown on the share page: someone else reporting the first event's player
      { message: FIRST.message, player_name: "Reporter", timestamp: iso(at + 2 * DAY - MINUTE), fingerprint },
    ]);
    const groups = await groupsOf(projectId);
    const target = groups.find((g) => g.message === "Shop purchase failed")!;
    const member = groups.find((g) => g.message === FIRST.message)!;
    const merged = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body: { ids: [target.id, member.id], target_id: target.id } });
    expect(merged.status).toBe(200);
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: target.id, role: "viewer" } });
    const shared = await call(app, "GET", `/api/share/${link.body.token}`, { headers: fresh() });
    expect(shared.status).toBe(200);
    expect(shared.body.events[0].message).toBe("Kicked <player> for flying");
    expect(leaks(JSON.stringify(shared.body))).toEqual([]);
    const page = await app.request(`/share/${link.body.token}`, { headers: fresh() });
    expect(leaks(await page.text())).toEqual([]);
  });
});

describe("names only an event's tags or context hold", () => {
  it("are scrubbed from its shown text and from the issue's", async () => {
    const { projectId, apiKey } = await project();
    const fingerprint = ["fell-off"];
    await send(apiKey, [
      { message: "CtxOnlyKid fell off the map", context: { player: { name: "CtxOnlyKid" } }, fingerprint },
      { message: "TagOnlyKid fell off the map", tags: ["player:TagOnlyKid"], fingerprint },
    ]);
    const [{ id }] = await groupsOf(projectId);
    const link = await call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: id, role: "viewer" } });
    const shared = await call(app, "GET", `/api/share/${link.body.token}`, { headers: fresh() });
    expect(shared.status).toBe(200);
    expect(shared.body.group.message).toBe("<player> fell off the map");
    expect(shared.body.events.map((e: { message: string }) => e.message)).toEqual(["<player> fell off the map", "<player> fell off the map"]);
    const text = JSON.stringify(shared.body) + (await (await app.request(`/share/${link.body.token}`, { headers: fresh() })).text());
    expect(["CtxOnlyKid", "TagOnlyKid"].filter((k) => text.toLowerCase().includes(k.toLowerCase()))).toEqual([]);
  });
});
