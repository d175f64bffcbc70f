import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { freshDatabaseUrl, getJson as getJsonNow, startTestApp, type TestApp } from "../support/server.js";
import { countersApplied } from "../support/counters.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/** API reads wait for the deferred counters of the writes before them (db/counter-deltas.ts). */
const getJson = async (...args: Parameters<typeof getJsonNow>) => {
  await countersApplied(args[0].sql);
  return getJsonNow(...args);
};

/**
 * An issue's first seen, first version and "new in version" follow its earliest event's timestamp,
 * whatever order the events arrive in (servers that flush late, offline queues, retries); last seen
 * follows the latest and never moves back. The issue API, the issue page, the issues list, the
 * `new_in_version` filter and the releases all say the same. A timestamp from before the retention
 * window counts for the issue as the window's start. Existing issues get their first version from
 * their earliest occurrence when the schema is upgraded.
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
const DAY = 24 * 60 * MIN;
const RETENTION_DAYS = 30;
const at = (msAgo: number) => new Date(Date.now() - msAgo).toISOString();
const BUGS = ["ServerScriptService.Quests:10: attempt to index nil", "ServerScriptService.Shop:22: bad argument #1", "Workspace.Door:5: Open is not a valid member"];

async function issue(apiKey: string, message: string) {
  const list = await getJson(app, "/api/v1/errors?grouped=true&limit=100", apiKey);
  const g = list.body.data.find((x: any) => x.message === message);
  return (await getJson(app, `/api/v1/errors/${g.id}`, apiKey)).body.group;
}
const newIn = async (apiKey: string, version: string) =>
  (await getJson(app, `/api/v1/errors?grouped=true&new_in_version=${version}`, apiKey)).body.data.map((x: any) => x.message).sort();
const releases = async (apiKey: string) =>
  Object.fromEntries((await getJson(app, "/api/v1/releases", apiKey)).body.data.map((v: any) => [v.version, v.new_issues]));
/** A page's HTML without its line-break hints (<wbr>: they are not text). */
const page = async (path: string) => (await (await countersApplied(app.sql), await app.request(path, { headers: { cookie } })).text()).replaceAll("<wbr/>", "");

describe("old events arriving after new ones", () => {
  let projectId: string;
  let apiKey: string;
  const now = Date.now();
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
    // today's version 43 arrives first, then the queued events of version 41 from six days ago
    await ingest(app, apiKey, { errors: BUGS.map((message) => ({ message, game_version: "43", timestamp: at(MIN) })) });
    await ingest(app, apiKey, {
      errors: BUGS.flatMap((message) => [
        { message, game_version: "41", timestamp: new Date(now - 6 * DAY).toISOString() },
        { message, game_version: "42", timestamp: new Date(now - 3 * DAY).toISOString() },
      ]),
    });
  });

  it("the issue's first seen and first version are the earliest event's; last seen stays the latest", async () => {
    for (const message of BUGS) {
      const g = await issue(apiKey, message);
      expect(g.first_seen).toBe(new Date(now - 6 * DAY).toISOString());
      expect(g.first_version).toBe("41");
      expect(g.last_version).toBe("43");
      expect(Date.parse(g.last_seen)).toBeGreaterThan(now - 2 * MIN);
    }
  });

  it("new in version and the releases name the version of the earliest event", async () => {
    expect(await newIn(apiKey, "41")).toEqual([...BUGS].sort());
    expect(await newIn(apiKey, "43")).toEqual([]);
    expect(await releases(apiKey)).toEqual({ "41": BUGS.length, "42": 0, "43": 0 });
  });

  it("the issue page and the issues list say the same", async () => {
    const g = await issue(apiKey, BUGS[0]);
    const issuePage = await page(`/projects/${projectId}/issues/${g.id}`);
    expect(issuePage).toMatch(/First seen.*? in version <strong>41<\/strong>/);
    // its versions table marks the same version as the first
    expect(issuePage).toContain(`<td><span class="version">41</span><span class="small muted"> · first</span>`);
    const releasesPage = await page(`/projects/${projectId}/releases`);
    expect(releasesPage).toContain(`issues?status=all&amp;version=41`);
    expect(releasesPage).not.toContain(`version=43`);
    const list = await page(`/projects/${projectId}/issues?status=all&version=41`);
    for (const m of BUGS) expect(list).toContain(m.split(":")[0]);
    const none = await page(`/projects/${projectId}/issues?status=all&version=43`);
    for (const m of BUGS) expect(none).not.toContain(m.split(":")[0]);
  });

  it("an event older than the latest never moves last seen or the latest version back", async () => {
    const before = await issue(apiKey, BUGS[1]);
    await ingest(app, apiKey, { errors: [{ message: BUGS[1], game_version: "40", timestamp: at(2 * DAY), environment: "staging" }] });
    const after = await issue(apiKey, BUGS[1]);
    expect(after.last_seen).toBe(before.last_seen);
    expect(after.last_version).toBe("43");
    expect(after.environment).toBe("production");
    expect(after.first_version).toBe("41");
    expect(after.count).toBe(before.count + 1);
  });
});

describe("a timestamp older than the retention window", () => {
  let apiKey: string;
  let projectId: string;
  beforeAll(async () => {
    ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
  });

  it("counts for the issue as the window's start: first seen, first version and the version's first occurrence", async () => {
    const message = "ServerScriptService.Clock:1: bogus time";
    await ingest(app, apiKey, { errors: [{ message, game_version: "9", timestamp: at(DAY) }] });
    const before = Date.now();
    await ingest(app, apiKey, { errors: [{ message, game_version: "1", timestamp: "1970-01-01T00:00:00Z" }] });
    const after = Date.now();
    const g = await issue(apiKey, message);
    const windowStart = (t: number) => t - RETENTION_DAYS * DAY;
    expect(Date.parse(g.first_seen)).toBeGreaterThanOrEqual(windowStart(before));
    expect(Date.parse(g.first_seen)).toBeLessThanOrEqual(windowStart(after));
    expect(g.first_version).toBe("1");
    const detail = (await getJson(app, `/api/v1/errors/${g.id}`, apiKey)).body;
    const v1 = detail.versions.find((v: any) => v.version === "1");
    expect(Date.parse(v1.first_seen)).toBeGreaterThanOrEqual(windowStart(before));
    const env = detail.environments.find((e: any) => e.environment === "production");
    expect(Date.parse(env.first_seen)).toBeGreaterThanOrEqual(windowStart(before));
    const [release] = (await getJson(app, "/api/v1/releases", apiKey)).body.data.filter((r: any) => r.version === "1");
    expect(Date.parse(release.first_seen)).toBeGreaterThanOrEqual(windowStart(before));
    // the event itself keeps the time it was sent with (the retention job removes it)
    const [row] = await app.sql<{ timestamp: Date }[]>`select "timestamp" from events where project_id = ${projectId} and game_version = '1'`;
    expect(row.timestamp.getTime()).toBe(0);
  });

  it("a new issue made of one ancient event is first and last seen at the window's start", async () => {
    const message = "ServerScriptService.Clock:2: ancient";
    const before = Date.now();
    await ingest(app, apiKey, { errors: [{ message, timestamp: at(200 * DAY) }] });
    const g = await issue(apiKey, message);
    expect(Date.parse(g.first_seen)).toBeGreaterThanOrEqual(before - RETENTION_DAYS * DAY);
    expect(g.last_seen).toBe(g.first_seen);
  });
});

describe("merged issues", () => {
  it("a merged issue is new in its members' earliest version; an unmerge gives each its own back", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const [P, Q] = ["ServerScriptService.Bank:3: deposit failed", "ServerScriptService.Bank:9: withdraw failed"];
    await ingest(app, apiKey, { errors: [{ message: P, game_version: "43", timestamp: at(MIN) }, { message: P, game_version: "43", timestamp: at(MIN) }] });
    await ingest(app, apiKey, { errors: [{ message: Q, game_version: "41", timestamp: at(6 * DAY) }] });
    const [p, q] = [await issue(apiKey, P), await issue(apiKey, Q)];
    const merged = await call(app, "POST", `/api/team/projects/${projectId}/groups/merge`, { cookie, body: { ids: [p.id, q.id], target_id: p.id } });
    expect(merged.status).toBe(200);

    const g = (await getJson(app, `/api/v1/errors/${p.id}`, apiKey)).body.group;
    expect(g.first_version).toBe("41");
    expect(await newIn(apiKey, "41")).toEqual([P]);
    expect(await newIn(apiKey, "43")).toEqual([]);
    expect(await releases(apiKey)).toEqual({ "41": 1, "43": 0 });

    // a later event of the target's own fingerprint does not take the version back
    await ingest(app, apiKey, { errors: [{ message: P, game_version: "44", timestamp: at(0) }] });
    expect((await getJson(app, `/api/v1/errors/${p.id}`, apiKey)).body.group.first_version).toBe("41");

    const back = await call(app, "POST", `/api/team/projects/${projectId}/groups/${p.id}/unmerge`, { cookie, body: { ids: [q.id] } });
    expect(back.status).toBe(200);
    expect((await getJson(app, `/api/v1/errors/${p.id}`, apiKey)).body.group.first_version).toBe("43");
    expect((await getJson(app, `/api/v1/errors/${q.id}`, apiKey)).body.group.first_version).toBe("41");
    expect(await releases(apiKey)).toEqual({ "41": 1, "43": 1, "44": 0 });
  });
});

describe("migrating existing issues", () => {
  const dir = path.resolve(import.meta.dirname, "../../db/migrations");
  const project = "91f50000-0000-4000-8000-000000000001";
  const [plain, target, own, member] = [2, 3, 4, 5].map((n) => `91f50000-0000-4000-8000-00000000000${n}`);
  let sql: Sql;
  let tmp: string;
  afterAll(async () => {
    await sql?.end();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("takes each issue's first version from its earliest occurrence, a merged issue's from its members", async () => {
    sql = createSql(await freshDatabaseUrl(), 2);
    tmp = mkdtempSync(path.join(os.tmpdir(), "rbx-migrations-"));
    const files = readdirSync(dir);
    const mine = files.find((f) => f.includes("first_version_by_event_time"))!;
    for (const f of files) if (f < mine) cpSync(path.join(dir, f), path.join(tmp, f));
    await migrate(sql, tmp);
    const t = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY);
    await sql`insert into projects (id, name) values (${project}, 'Before first versions by time')`;
    // what arrival order left: the version received first, not the earliest
    const group = (id: string, fp: string, version: string | null, mergedInto: string | null = null, mergedOwn = false) => sql`
      insert into error_groups (project_id, id, fingerprint, message, level, first_seen, last_seen, environment, first_version, merged_into, merged_own)
      values (${project}, ${id}, ${fp}, ${fp}, 'error', ${t(6)}, ${t(0)}, 'production', ${version}, ${mergedInto}, ${mergedOwn})`;
    await group(plain, "plain", "43");
    await group(target, "merged:target", "43");
    await group(own, "own", null, target, true);
    await group(member, "member", "41", target);
    const versions = [[plain, "43", 1], [plain, "41", 6], [target, "43", 2], [member, "41", 5]] as const;
    for (const [id, version, daysAgo] of versions) {
      await sql`insert into group_versions (project_id, group_id, version, count, first_seen, last_seen)
                values (${project}, ${id}, ${version}, 1, ${t(daysAgo)}, ${t(daysAgo)})`;
    }
    await migrate(sql, dir);
    const rows = await sql<{ id: string; first_version: string | null; first_version_at: Date | null }[]>`
      select id, first_version, first_version_at from error_groups where project_id = ${project}`;
    const by = Object.fromEntries(rows.map((r) => [r.id, r.first_version]));
    expect(by).toEqual({ [plain]: "41", [target]: "41", [own]: "43", [member]: "41" });
    expect(rows.every((r) => r.first_version_at !== null)).toBe(true);
  });
});

describe("Sentry events", () => {
  it("follow the same rules: an old event arriving late and one from before the window", async () => {
    const { projectId, apiKey } = await makeProject(app.sql, owner.id);
    const key = await call(app, "POST", `/api/team/projects/${projectId}/dsn-keys`, { cookie, body: {} });
    expect(key.status).toBe(201);
    const store = (event: Record<string, unknown>) =>
      app.request(`/api/${String(key.body.dsn).split("/").pop()}/store/?sentry_key=${key.body.public_key}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ platform: "other", level: "error", ...event }),
      });
    const message = "ServerScriptService.Sync:4: late flush";
    const now = Date.now();
    expect((await store({ message, release: "43", timestamp: (now - MIN) / 1000 })).status).toBe(200);
    expect((await store({ message, release: "41", timestamp: new Date(now - 6 * DAY).toISOString() })).status).toBe(200);
    let g = await issue(apiKey, message);
    expect([g.first_seen, g.first_version, g.last_version]).toEqual([new Date(now - 6 * DAY).toISOString(), "41", "43"]);
    expect(await newIn(apiKey, "41")).toEqual([message]);

    const before = Date.now();
    expect((await store({ message, release: "2", timestamp: (now - 400 * DAY) / 1000 })).status).toBe(200);
    g = await issue(apiKey, message);
    expect(Date.parse(g.first_seen)).toBeGreaterThanOrEqual(before - RETENTION_DAYS * DAY);
    expect(g.first_version).toBe("2");
  });
});
