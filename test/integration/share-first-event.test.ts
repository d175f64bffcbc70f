import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRetention } from "../../jobs/retention.js";
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
    await send(apiKey, [
      ...others(Array.from({ length: 60 }, (_, i) => at - (i + 1) * MINUTE), 0),
      ...others(Array.from({ length: 60 }, (_, i) => at + (i + 1) * MINUTE), 60),
    ]);
    const groups = await groupsOf(projectId);
    expect(groups).toHaveLength(1);
    expect(groups[0].message).toBe(FIRST.message);
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`;
    expect(n).toBe(121);
    // the row keeps who its text names; the 120 later events of an unchanged text add nobody
    expect(await kept(groups[0].id)).toEqual(["HiddenFirstKid", "31415926"]);
    for (const answer of await everyShareAnswer(projectId, groups[0].id)) expect(leaks(answer)).toEqual([]);
  });

  it("keeps, at most 32, the names of the later event that gives the issue its culprit", async () => {
    const { projectId, apiKey } = await project();
    // one issue whatever the stack (a stack's frames are part of the default grouping)
    const fingerprint = ["kicked-for-flying"];
    await send(apiKey, [{ ...FIRST, fingerprint }]);
    const [{ id, culprit }] = await groupsOf(projectId);
    expect(culprit).toBeNull();
    const crowd = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, `CrowdKid${i}`]));
    await send(apiKey, [
      {
        message: "Kicked CulpritKid for flying",
        player_name: "CulpritKid",
        stack_trace: "ServerScriptService.AntiCheat:12: function kick",
        context: { players: crowd },
        fingerprint,
      },
    ]);
    const [after, ...none] = await groupsOf(projectId);
    expect(none).toEqual([]);
    expect(after.culprit).toBe("ServerScriptService.AntiCheat");
    const list = (await kept(id)) ?? [];
    expect(list).toHaveLength(32);
    expect(list.slice(0, 4)).toEqual(["HiddenFirstKid", "31415926", "CulpritKid", "CrowdKid0"]);
    // set once: a later culprit-carrying event changes nothing
    await send(apiKey, [{ message: "Kicked LaterKid for flying", player_name: "LaterKid", stack_trace: "ServerScriptService.AntiCheat:12: function kick", fingerprint }]);
    expect(await kept(id)).toEqual(list);
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
      ...others(Array.from({ length: 60 }, (_, i) => at - (i + 1) * MINUTE), 0),
      ...others(Array.from({ length: 60 }, (_, i) => at + (i + 1) * MINUTE), 60),
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
});
