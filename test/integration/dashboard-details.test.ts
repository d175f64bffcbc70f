import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * The origin filter (client-only issues apart from the rest) on GET /api/v1/errors, the issues page
 * and bulk changes by filter, with a mixed issue counted as server-origin; and a DSN key's rate limit
 * set when it is created, through the Team API and the Settings form, checked as a change is.
 */
let app: TestApp;
let cookie: string;
let ownerId: string;
beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ownerId = owner.id;
  cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

const CLIENT = "Players.LocalScript:3: made-up client text";
const OLD_CLIENT = "Players.LocalScript:9: tagged by an old SDK";
const MIXED = "ReplicatedStorage.Shared:7: raised on both sides";
const SERVER = "ServerScriptService.Main:1: server only";

describe("origin filter", () => {
  let projectId: string;
  let apiKey: string;
  const errors = (q: string) => call(app, "GET", `/api/v1/errors?${q}`, { headers: { "x-api-key": apiKey } });
  const messages = (r: { body: { data: { message: string }[] } }) => r.body.data.map((g) => g.message).sort();
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, ownerId, [], "Origins"));
    await ingest(app, apiKey, {
      errors: [
        { message: CLIENT, tags: ["origin:client"] },
        { message: CLIENT, tags: ["origin:client", "weapon:sword"] },
        { message: OLD_CLIENT, tags: ["client"] },
        { message: MIXED, tags: ["origin:client"] },
        { message: MIXED },
        { message: SERVER, tags: ["weapon:bow"] },
      ],
    });
  });

  it("keeps client-only issues with origin=client and the rest, a mixed issue included, with origin=server", async () => {
    const client = await errors("grouped=true&origin=client");
    expect(client.status).toBe(200);
    expect(messages(client)).toEqual([OLD_CLIENT, CLIENT].sort());
    expect(client.body.total).toBe(2);
    expect(client.body.data.every((g: { client_only: boolean }) => g.client_only)).toBe(true);
    const server = await errors("grouped=true&origin=server");
    expect(messages(server)).toEqual([MIXED, SERVER].sort());
    expect(server.body.data.every((g: { client_only: boolean }) => !g.client_only)).toBe(true);
    const all = await errors("grouped=true");
    expect(all.body.total).toBe(4);
    // an empty value counts as absent
    expect((await errors("grouped=true&origin=")).body.total).toBe(4);
  });

  it("refuses an unknown origin and origin on raw events with a 400 naming it", async () => {
    const bad = await errors("grouped=true&origin=player");
    expect(bad.status).toBe(400);
    expect(bad.body.details[0]).toMatchObject({ path: "origin", message: "must be one of client, server" });
    const raw = await errors("origin=client");
    expect(raw.status).toBe(400);
    expect(raw.body.details[0].path).toBe("origin");
    expect(raw.body.message).toMatch(/grouped/);
  });

  it("counts a merged issue as client-only only when all its members are", async () => {
    const ids = Object.fromEntries((await errors("grouped=true")).body.data.map((g: { id: string; message: string }) => [g.message, g.id]));
    const merged = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, {
      cookie,
      body: { ids: [ids[CLIENT], ids[OLD_CLIENT]], target_id: ids[CLIENT] },
    });
    expect(merged.status).toBe(200);
    expect(messages(await errors("grouped=true&origin=client"))).toEqual([CLIENT]);
    const withServer = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, {
      cookie,
      body: { ids: [ids[CLIENT], ids[SERVER]], target_id: ids[CLIENT] },
    });
    expect(withServer.status).toBe(200);
    expect((await errors("grouped=true&origin=client")).body.total).toBe(0);
    expect(messages(await errors("grouped=true&origin=server"))).toEqual([CLIENT, MIXED].sort());
    // split out again: each member is what its own events say
    const back = await call(app, "POST", `/api/team/projects/${projectId}/groups/${ids[CLIENT]}/unmerge`, { cookie, body: { ids: [ids[SERVER], ids[OLD_CLIENT]] } });
    expect(back.status).toBe(200);
    expect(messages(await errors("grouped=true&origin=client"))).toEqual([OLD_CLIENT, CLIENT].sort());
  });

  it("filters the issues page and bulk changes by filter the same way", async () => {
    const res = await app.request(`/projects/${projectId}/issues?origin=client`, { headers: { cookie } });
    expect(res.status).toBe(200);
    const html = (await res.text()).replaceAll("<!-- -->", "");
    expect(html).toContain("2 issues");
    expect(html).toContain('data-testid="client-only"');
    expect(html).not.toContain("raised on both sides");
    expect(html).toMatch(/<option value="client" selected="">Client only<\/option>/);
    const url = `/api/team/projects/${projectId}/groups/bulk`;
    const dry = await call(app, "POST", url, { cookie, body: { status: "ignored", filter: { origin: "server" }, dry_run: true } });
    expect(dry.status).toBe(200);
    expect(dry.body.matched).toBe(2);
    const done = await call(app, "POST", url, { cookie, body: { status: "ignored", filter: { origin: "client" } } });
    expect(done.body.updated).toBe(2);
    const ignored = await errors("grouped=true&status=ignored");
    expect(messages(ignored)).toEqual([OLD_CLIENT, CLIENT].sort());
    const bad = await call(app, "POST", url, { cookie, body: { status: "open", filter: { origin: "both" } } });
    expect(bad.status).toBe(400);
    expect(bad.body.details[0].path).toBe("filter.origin");
    expect((await errors("grouped=true&status=ignored")).body.total).toBe(2);
  });
});

describe("a DSN key's rate limit at creation", () => {
  let projectId: string;
  const url = () => `/api/team/projects/${projectId}/dsn-keys`;
  const keys = async () =>
    app.sql<{ name: string | null; rate_limit_per_minute: number | null }[]>`
      select name, rate_limit_per_minute from dsn_keys where project_id = ${projectId} order by created_at, id`;
  const form = (fields: Record<string, string>) =>
    app.request(`/projects/${projectId}/settings`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: new URLSearchParams(fields).toString(),
      redirect: "manual",
    });
  beforeAll(async () => {
    ({ projectId } = await makeProject(app.sql, ownerId, [], "Limits at birth"));
  });

  it("takes rate_limit_per_minute in the Team API's create, null for none, the default without it", async () => {
    const before = (await keys()).length;
    const limited = await call(app, "POST", url(), { cookie, body: { name: "web", rate_limit_per_minute: 250 } });
    expect(limited.status).toBe(201);
    expect(limited.body).toMatchObject({ name: "web", rate_limit_per_minute: 250 });
    const unlimited = await call(app, "POST", url(), { cookie, body: { name: "tools", rate_limit_per_minute: null } });
    expect(unlimited.body.rate_limit_per_minute).toBeNull();
    const plain = await call(app, "POST", url(), { cookie, body: { name: "plain" } });
    expect(plain.body.rate_limit_per_minute).toBe(6000);
    expect((await keys()).slice(before)).toEqual([
      { name: "web", rate_limit_per_minute: 250 },
      { name: "tools", rate_limit_per_minute: null },
      { name: "plain", rate_limit_per_minute: 6000 },
    ]);
  });

  it("checks it as a change is checked: a bad limit is a 400 naming it and makes no key", async () => {
    const key = (await call(app, "POST", url(), { cookie, body: { name: "to change" } })).body;
    const before = (await keys()).length;
    for (const bad of [0, -5, 1.5, 100_000_001, "100", true]) {
      const r = await call(app, "POST", url(), { cookie, body: { name: "nope", rate_limit_per_minute: bad } });
      expect(r.status).toBe(400);
      expect(r.body.details[0].path).toBe("rate_limit_per_minute");
      // the same check as PATCH: the same message
      const patched = await call(app, "PATCH", `${url()}/${key.id}`, { cookie, body: { rate_limit_per_minute: bad } });
      expect(patched.body.details[0].message).toBe(r.body.details[0].message);
    }
    expect((await keys()).length).toBe(before);
  });

  it("is set from the Settings form's create, an empty field for none, a bad one refused with nothing made", async () => {
    const before = (await keys()).length;
    expect((await form({ intent: "dsn-create", name: "game", rate_limit_per_minute: "2,500" })).status).toBe(200);
    expect((await form({ intent: "dsn-create", name: "open", rate_limit_per_minute: "" })).status).toBe(200);
    // a form without the field (an older page) makes a key with the default
    expect((await form({ intent: "dsn-create", name: "older page" })).status).toBe(200);
    const bad = await form({ intent: "dsn-create", name: "bad", rate_limit_per_minute: "lots" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("rate_limit_per_minute");
    expect((await keys()).slice(before)).toEqual([
      { name: "game", rate_limit_per_minute: 2500 },
      { name: "open", rate_limit_per_minute: null },
      { name: "older page", rate_limit_per_minute: 6000 },
    ]);
    // the page offers the field with the default filled in
    const page = await (await app.request(`/projects/${projectId}/settings`, { headers: { cookie } })).text();
    expect(page).toMatch(/<input name="rate_limit_per_minute" inputMode="numeric" size="10" value="6000"\/>/i);
  });
});
