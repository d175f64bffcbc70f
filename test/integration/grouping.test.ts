import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultFingerprint, defaultFingerprintV2, defaultFingerprintV3, GROUPING_VERSION } from "../../app/ingest/fingerprint.server.js";
import { defaultFingerprint as v1 } from "../../app/ingest/fingerprint-v1.server.js";
import { shiftLines } from "../support/grouping-corpus.js";
import { createProject, getJson, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/** Grouping through the real ingest path, and the upgrades from v1 and v2 without split issues. */

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const groups = async (apiKey: string) =>
  (await getJson(app, "/api/v1/errors?grouped=true&limit=100&sort=count", apiKey)).body.data as {
    id: string;
    message: string;
    count: number;
    grouping_version: number;
    fingerprint: string;
  }[];

/** A group as grouping v1 made it before the upgrade: its fingerprint is v1's, its version 1. */
async function makeV1Group(projectId: string, message: string, stack?: string) {
  const [g] = await app.sql<{ id: string }[]>`
    insert into error_groups (project_id, fingerprint, message, level, count, first_seen, last_seen, environment, grouping_version)
    values (${projectId}, ${v1(message, stack)}, ${message}, 'error', 1, now() - interval '1 hour', now() - interval '1 hour', 'production', 1)
    returning id`;
  return g.id;
}

/** A group as an earlier grouping version made it, with that version's fingerprint. */
async function makeGroup(projectId: string, fingerprint: string, message: string, version: number) {
  const [g] = await app.sql<{ id: string }[]>`
    insert into error_groups (project_id, fingerprint, message, level, count, first_seen, last_seen, environment, grouping_version)
    values (${projectId}, ${fingerprint}, ${message}, 'error', 1, now() - interval '1 hour', now() - interval '1 hour', 'production', ${version})
    returning id`;
  return g.id;
}

describe("grouping at ingest", () => {
  it("a runtime error with a stack joins the issue its stackless form made, and a DataStore warning over many keys is one issue", async () => {
    const { apiKey } = await createProject(app.sql);
    const msg = "ServerScriptService.Combat:123: attempt to index nil with 'Health'";
    await ingest(app, apiKey, { message: msg });
    await ingest(app, apiKey, {
      errors: [
        { message: msg, stack_trace: "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40", count: 796 },
        ...[261, 7, 4412].map((id) => ({ message: `DataStore request was added to queue. Try sending fewer requests.Key = Player_${id}`, level: "warn" })),
      ],
    });
    const list = await groups(apiKey);
    expect(list.map((g) => [g.count, g.grouping_version])).toEqual([
      [797, GROUPING_VERSION],
      [3, GROUPING_VERSION],
    ]);
  });

  it("uses player_name to recognise a character under Workspace", async () => {
    const { apiKey } = await createProject(app.sql);
    await ingest(app, apiKey, {
      errors: ["Builderman", "Roblox"].map((p) => ({ message: `Humanoid is not a valid member of Model "Workspace.${p}"`, player_name: p })),
    });
    expect((await groups(apiKey)).map((g) => g.count)).toEqual([2]);
  });
});

describe("upgrading from grouping v1", () => {
  it("an event whose v2 fingerprint has no group joins the group of its v1 fingerprint, which keeps version 1", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const msg = "ServerScriptService.Shop:40: attempt to index nil with 'Price'";
    const stack = "ServerScriptService.Shop:40 function buy\nServerScriptService.Main:3";
    const old = await makeV1Group(projectId, msg);
    await ingest(app, apiKey, { errors: [{ message: msg }, { message: msg, count: 4 }] });
    const list = await groups(apiKey);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id: old, count: 6, grouping_version: 1, fingerprint: v1(msg, undefined) });
    // the v2 fingerprint (the stackless form's, unchanged since) is now an alias of the group: the form
    // with a stack joins it too, through its v3 fingerprint (the location, as the stackless form's)
    await ingest(app, apiKey, { message: msg, stack_trace: stack });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 7 }]);
    const aliases = await app.sql`select group_id from group_aliases where project_id = ${projectId}`;
    // the stackless form's fingerprint and the stacked form's (version 4's), both leading to the v1 issue
    expect(aliases.map((a) => a.group_id)).toEqual([old, old]);
    // errors v1 never saw make version-2 groups
    await ingest(app, apiKey, { message: "Brand new failure" });
    expect((await groups(apiKey)).find((g) => g.message === "Brand new failure")).toMatchObject({ grouping_version: GROUPING_VERSION, count: 1 });
  });

  it("issues v1 split are not split further: the first one v2 reaches takes the later events", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const spawn = (n: number) => `Spawn${n} is not a valid member of Folder "Workspace.Map.Spawns"`;
    const s1 = await makeV1Group(projectId, spawn(1));
    const s3 = await makeV1Group(projectId, spawn(3));
    await ingest(app, apiKey, { message: spawn(3) });
    await ingest(app, apiKey, { errors: [{ message: spawn(1) }, { message: spawn(5) }] });
    const list = await groups(apiKey);
    expect(list.map((g) => [g.id, g.count])).toEqual([
      [s3, 4],
      [s1, 1],
    ]);
  });
});

describe("upgrading from grouping v2", () => {
  const teleport = (p: string) => `Teleport failed for ${p}: The server is full (Error Code: 772)`;
  // without a stack: an event with one names its v3 fingerprint instead (see "upgrading from grouping v3")
  const stack = null;

  it("an issue v2 made for a text naming the player keeps getting it, and takes the other players' events", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const old = await makeGroup(projectId, defaultFingerprintV2(teleport("Builderman"), stack, "Builderman"), teleport("Builderman"), 2);
    await ingest(app, apiKey, { message: teleport("Builderman"), stack_trace: stack, player_name: "Builderman", user_id: 156 });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, grouping_version: 2 }]);
    await ingest(app, apiKey, {
      errors: [
        { message: teleport("Shedletsky"), stack_trace: stack, player_name: "Shedletsky", user_id: 261 },
        { message: teleport("xX_Noob_Xx"), stack_trace: stack, player_name: "xX_Noob_Xx", user_id: 1538394712, count: 3 },
      ],
    });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 6 }]);
    const aliases = await app.sql`select fingerprint, group_id from group_aliases where project_id = ${projectId}`;
    expect(aliases).toEqual([{ fingerprint: defaultFingerprint(teleport("Builderman"), stack, "Builderman"), group_id: old }]);
  });

  it("a v1 issue that v2 events joined keeps getting the text through v2's alias", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const msg = "ProcessReceipt: receipt 9f8e7d6c5b4a39281706f5e4d3c2b1a0 for user 1538394712 not granted: Profile_1538394712 is not loaded";
    const old = await makeGroup(projectId, v1(msg, null), msg, 1);
    await app.sql`insert into group_aliases (project_id, fingerprint, group_id) values (${projectId}, ${defaultFingerprintV2(msg, null)}, ${old})`;
    await ingest(app, apiKey, { message: msg, user_id: 1538394712, player_name: "xX_Noob_Xx" });
    await ingest(app, apiKey, {
      message: "ProcessReceipt: receipt 04c1e2f3a4b5c6d7e8f90a1b2c3d4e5f for user 2207731150 not granted: Profile_2207731150 is not loaded",
      user_id: 2207731150,
    });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 3, grouping_version: 1 }]);
  });

  it("a text v3 does not change keeps its v2 fingerprint: its issue gets it without an alias", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const msg = "ServerScriptService.Combat:123: attempt to index nil with 'Health'";
    const old = await makeGroup(projectId, defaultFingerprintV2(msg, null), msg, 2);
    await ingest(app, apiKey, { message: msg, player_name: "Builderman", user_id: 156 });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, fingerprint: defaultFingerprint(msg, null) }]);
    expect(await app.sql`select 1 from group_aliases where project_id = ${projectId}`).toHaveLength(0);
    // an error never seen before makes a version-3 issue, one for every player
    await ingest(app, apiKey, { errors: ["Builderman", "Shedletsky"].map((p) => ({ message: teleport(p), player_name: p })) });
    expect((await groups(apiKey)).find((g) => g.message === teleport("Builderman"))).toMatchObject({ count: 2, grouping_version: GROUPING_VERSION });
  });
});

describe("upgrading from grouping v3", () => {
  const msg = "ServerScriptService.Shop:40: attempt to index nil with 'Price'";
  const stack = "ServerScriptService.Shop:40 function buy\nServerScriptService.Main:5";
  const moved = (by: number) => [shiftLines(msg, by), shiftLines(stack, by)] as const;

  it("an issue v3 made (frames by line) keeps getting its error, and through the alias the error's later lines", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const old = await makeGroup(projectId, defaultFingerprintV3(msg, stack), msg, 3);
    await ingest(app, apiKey, { message: msg, stack_trace: stack });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, grouping_version: 3 }]);
    const aliases = await app.sql`select fingerprint, group_id from group_aliases where project_id = ${projectId}`;
    expect(aliases).toEqual([{ fingerprint: defaultFingerprint(msg, stack), group_id: old }]);
    // after an update that moved the function, v3 would have made a new issue; v4 keeps it in the old one
    const [m2, s2] = moved(12);
    expect(defaultFingerprintV3(m2, s2)).not.toBe(defaultFingerprintV3(msg, stack));
    await ingest(app, apiKey, { message: m2, stack_trace: s2, count: 3 });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 5 }]);
  });

  it("an error without a stack keeps its v3 fingerprint: its issue gets it without an alias", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const old = await makeGroup(projectId, defaultFingerprintV3(msg, null), msg, 3);
    await ingest(app, apiKey, { message: msg });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, fingerprint: defaultFingerprint(msg, null) }]);
    expect(await app.sql`select 1 from group_aliases where project_id = ${projectId}`).toHaveLength(0);
  });

  it("an issue v3 made for a text holding a request id keeps getting it, and through the alias every other id's (no stack needed)", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const text = (id: string) => `Matchmaking: HTTP 503 (Service Unavailable) X-Request-Id: ${id}, retry later`;
    const first = text("01HGW2N7Q8ZK3X4Y5V6T7R8S9A");
    const old = await makeGroup(projectId, defaultFingerprintV3(first, null), first, 3);
    await ingest(app, apiKey, { message: first });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, grouping_version: 3 }]);
    // version 3 made one issue per id; version 4 sends them all to the old one
    expect(defaultFingerprintV3(text("aZ9kQ2mX7pL0c3Vb"), null)).not.toBe(defaultFingerprintV3(first, null));
    await ingest(app, apiKey, { errors: ["aZ9kQ2mX7pL0c3Vb", "JBSWY3DPEHPK3PXP", "7KX9M2QPZ4W8"].map((id) => ({ message: text(id) })) });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 5 }]);
    const aliases = await app.sql`select fingerprint, group_id from group_aliases where project_id = ${projectId}`;
    expect(aliases).toEqual([{ fingerprint: defaultFingerprint(first, null), group_id: old }]);
  });
});

describe("upgrading across versions", () => {
  const teleport = (p: string) => `Teleport failed for ${p}: The server is full (Error Code: 772)`;
  const stack = "ServerScriptService.Teleport:40 function go\nServerScriptService.Main:5";

  it("an issue v2 made that no v3 event reached is still found by v4 (its v3 fingerprint has no group)", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    // every version keys this event differently: v3 names the player a variable, v4 counts the function
    const [v2fp, v3fp, v4fp] = [defaultFingerprintV2, defaultFingerprintV3, defaultFingerprint].map((f) => f(teleport("Builderman"), stack, "Builderman"));
    expect(new Set([v2fp, v3fp, v4fp]).size).toBe(3);
    const old = await makeGroup(projectId, v2fp, teleport("Builderman"), 2);
    await ingest(app, apiKey, { message: teleport("Builderman"), stack_trace: stack, player_name: "Builderman" });
    // the other players' events reach it through the alias the first one recorded
    await ingest(app, apiKey, { message: teleport("Shedletsky"), stack_trace: stack, player_name: "Shedletsky", count: 2 });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 4, grouping_version: 2 }]);
    const aliases = await app.sql`select fingerprint, group_id from group_aliases where project_id = ${projectId}`;
    expect(aliases).toEqual([{ fingerprint: v4fp, group_id: old }]);
  });

  it("an issue v1 made that neither v2 nor v3 reached is still found by v4", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const old = await makeV1Group(projectId, teleport("Builderman"), stack);
    expect(v1(teleport("Builderman"), stack)).not.toBe(defaultFingerprintV2(teleport("Builderman"), stack, "Builderman"));
    await ingest(app, apiKey, { message: teleport("Builderman"), stack_trace: stack, player_name: "Builderman" });
    expect(await groups(apiKey)).toMatchObject([{ id: old, count: 2, grouping_version: 1 }]);
  });

  it("the newest earlier version's issue wins when several versions made one", async () => {
    const { projectId, apiKey } = await createProject(app.sql);
    const older = await makeGroup(projectId, defaultFingerprintV2(teleport("Builderman"), stack, "Builderman"), teleport("Builderman"), 2);
    const newer = await makeGroup(projectId, defaultFingerprintV3(teleport("Builderman"), stack, "Builderman"), teleport("Builderman"), 3);
    await ingest(app, apiKey, { message: teleport("Builderman"), stack_trace: stack, player_name: "Builderman" });
    const list = await groups(apiKey);
    expect(list.find((g) => g.id === newer)).toMatchObject({ count: 2 });
    expect(list.find((g) => g.id === older)).toMatchObject({ count: 1 });
  });
});

describe("grouping v3 on the Sentry path", () => {
  it("a Sentry event's user id and username are the event's own variables, as on the native path", async () => {
    const owner = await makeUser(app.sql);
    const cookie = await login(app, owner.email);
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const r = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
    expect(r.status).toBe(201);
    const dsnId = String(r.body.dsn).split("/").pop()!;
    const store = async (id: string, username: string) => {
      const res = await app.request(`/api/${dsnId}/store/?sentry_key=${r.body.public_key}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ message: `Inventory Inventory_${id} of ${username} failed to load at 2026-11-25T14:03:1${id.length % 10}Z`, user: { id, username } }),
      });
      expect(res.status).toBe(200);
    };
    await store("156", "Builderman");
    await store("1538394712", "xX_Noob_Xx");
    await ingest(app, apiKey, { message: "Inventory Inventory_261 of Shedletsky failed to load at 2026-11-26T00:00:00.5Z", user_id: 261, player_name: "Shedletsky" });
    expect((await groups(apiKey)).map((g) => g.count)).toEqual([3]);
  });
});
