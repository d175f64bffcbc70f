import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { login, makeProject, makeUser } from "../support/team.js";
import { MINUTE, ingest, iso, list } from "../support/query-fixtures.js";

/**
 * The issues list's filters and search, through real HTTP: each filter lists the values the project has
 * seen and keeps the one in force selected (through Apply and paging), rows name the environments an
 * issue occurred in, and search finds an issue by any of its stored messages, its culprit, or a player
 * who had it (name or user id), on the page and in the v1 API's grouped list alike.
 */
let app: TestApp;
let apiKey: string;
let projectId: string;
let cookie: string;
const now = Date.now();
const at = (minutesAgo: number) => iso(now - minutesAgo * MINUTE);

/** Page text without React's markers between adjacent text parts; entities of quotes decoded. */
const page = async (query: string) => {
  const r = await app.request(`/projects/${projectId}/issues?${query}`, { headers: { cookie }, redirect: "manual" });
  expect(r.status, query).toBe(200);
  return (await r.text()).replaceAll("<!-- -->", "").replaceAll("&quot;", '"').replaceAll("&#x27;", "'");
};
/** The options of a select on the page and which one is selected. */
const select = (html: string, id: string) => {
  const m = html.match(new RegExp(`<select[^>]*id="${id}"[^>]*>(.*?)</select>`, "s"));
  expect(m, id).not.toBeNull();
  const options = [...m![1].matchAll(/<option value="([^"]*)"( selected="")?[^>]*>/g)];
  return { values: options.map((o) => o[1]), selected: options.filter((o) => o[2]).map((o) => o[1]) };
};
const issueLinks = (html: string) => [...html.matchAll(/<a class="msg"[^>]*href="[^"]*\/issues\/([0-9a-f-]{36})"/g)].map((m) => m[1]);

let spawn: string, shop: string, tween: string, badge: string;

beforeAll(async () => {
  app = await startTestApp();
  const owner = await makeUser(app.sql);
  ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
  cookie = await login(app, owner.email);
  const base = { level: "error", trace_id: undefined as string | undefined };
  await ingest(app, apiKey, [
    // the spawn issue: first seen in studio as Spawn3, later in production as Spawn7
    { ...base, message: "Spawn3 is not a valid member of Workspace.Map", environment: "studio", user_id: 11, player_name: "Alice", game_version: "42", timestamp: at(50) },
    { ...base, message: "Spawn7 is not a valid member of Workspace.Map", environment: "production", user_id: 12, player_name: "Bob", game_version: "43", timestamp: at(10) },
    // found by its culprit and by the player who had it
    {
      ...base,
      message: "Purchase failed: not enough coins",
      stack_trace: "ServerScriptService.ShopHandler:42: function onPurchase\nServerScriptService.Main:3",
      environment: "production",
      user_id: 156,
      player_name: "Builderman",
      game_version: "43",
      timestamp: at(20),
    },
    // user id 261 exactly, and a user id that merely starts with it
    { ...base, message: "Tween failed on Part", environment: "production", user_id: 261, player_name: "Noob", timestamp: at(15) },
    { ...base, message: "Badge award failed", environment: "staging", user_id: 2612, player_name: "Guest_9", timestamp: at(12) },
  ].map((e) => ({ ...e, trace_id: crypto.randomUUID() })));
  const ids = await app.sql<{ id: string; message: string }[]>`select id, message from error_groups where project_id = ${projectId}`;
  const by = (s: string) => ids.find((g) => g.message.includes(s))!.id;
  [spawn, shop, tween, badge] = [by("Spawn"), by("Purchase"), by("Tween"), by("Badge")];
  expect(ids).toHaveLength(4); // Spawn3 and Spawn7 are one issue
});
afterAll(() => app?.close());

describe("issues list filters", () => {
  it("list every environment the project has seen, not only issues' latest ones", async () => {
    // no issue's latest event is in studio: only the spawn issue's first one was
    const [{ n }] = await app.sql<{ n: number }[]>`select count(*)::int as n from error_groups where project_id = ${projectId} and environment = 'studio'`;
    expect(n).toBe(0);
    const html = await page("");
    expect(select(html, "environment")).toEqual({ values: ["", "production", "staging", "studio"], selected: [""] });
    expect(select(html, "version").values).toEqual(expect.arrayContaining(["", "42", "43"]));
  });

  it("keep the value in force selected, so Apply submits it again, and filter by it", async () => {
    const html = await page("environment=studio&version=42&level=error&status=all&sort=count&regressed=");
    expect(select(html, "environment").selected).toEqual(["studio"]);
    expect(select(html, "version").selected).toEqual(["42"]);
    expect(select(html, "level").selected).toEqual(["error"]);
    expect(select(html, "status").selected).toEqual(["all"]);
    expect(select(html, "sort").selected).toEqual(["count"]);
    expect(issueLinks(html)).toEqual([spawn]);
  });

  it("still show a value from the address that the project has not seen, selected", async () => {
    const html = await page("environment=qa&version=99");
    expect(select(html, "environment")).toEqual({ values: ["", "qa", "production", "staging", "studio"], selected: ["qa"] });
    expect(select(html, "version").selected).toEqual(["99"]);
    expect(html).toContain("No issues match these filters.");
  });

  it("keep every filter in the pager's links", async () => {
    const { projectId: pid, apiKey: key } = await makeProject(app.sql, (await app.sql<{ user_id: string }[]>`select user_id from project_members where project_id = ${projectId}`)[0].user_id);
    const words = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel", "India", "Juliett", "Kilo", "Lima", "Mike", "November",
      "Oscar", "Papa", "Quebec", "Romeo", "Sierra", "Tango", "Uniform", "Victor", "Whiskey", "Xray", "Yankee", "Zulu", "Omega"];
    await ingest(app, key, words.map((w) => ({ message: `${w} module failed to load`, environment: "studio", trace_id: crypto.randomUUID() })));
    const r = await app.request(`/projects/${pid}/issues?environment=studio&level=error&search=module`, { headers: { cookie } });
    const html = (await r.text()).replaceAll("&amp;", "&");
    expect(html).toContain(`/issues?environment=studio&level=error&search=module&page=2"`);
    const second = (await (await app.request(`/projects/${pid}/issues?environment=studio&level=error&search=module&page=2`, { headers: { cookie } })).text());
    expect(select(second, "environment").selected).toEqual(["studio"]);
    expect(second).toContain('value="module"');
  });

  it("name the environments each issue occurred in, most occurrences first", async () => {
    const html = await page("");
    const row = html.slice(html.indexOf(`/issues/${spawn}"`));
    const chips = row.match(/<span class="envs" title="([^"]*)"[^>]*>((?:<span class="tag(?: env)?">[^<]*<\/span>)*)<\/span>/);
    expect(chips).not.toBeNull();
    expect(chips![1]).toBe("Occurred in production (1), studio (1)");
    expect([...chips![2].matchAll(/<span class="tag(?: env)?">([^<]*)<\/span>/g)].map((m) => m[1])).toEqual(["production", "studio"]);
  });

  it("bound the environment chips to three and count the rest", async () => {
    const { projectId: pid, apiKey: key } = await makeProject(app.sql, (await app.sql<{ user_id: string }[]>`select user_id from project_members where project_id = ${projectId}`)[0].user_id);
    const envs = ["production", "production", "staging", "studio", "qa", "dev"];
    await ingest(app, key, envs.map((environment) => ({ message: "Everywhere failure", environment, trace_id: crypto.randomUUID() })));
    const html = (await (await app.request(`/projects/${pid}/issues`, { headers: { cookie } })).text()).replaceAll("<!-- -->", "");

    const chips = html.match(/<span class="envs" title="([^"]*)"[^>]*>((?:<span class="tag(?: env)?">[^<]*<\/span>)*)<\/span>/)!;
    expect([...chips[2].matchAll(/<span class="tag(?: env)?">([^<]*)<\/span>/g)].map((m) => m[1])).toEqual(["production", "dev", "qa", "+2"]);
  });
});

describe("issue search", () => {
  const cases: [string, string, () => string[]][] = [
    ["a later message of the issue", "Spawn7", () => [spawn]],
    ["the first message, case-insensitive", "spawn3", () => [spawn]],
    ["the culprit", "ShopHandler", () => [shop]],
    ["a player's name, any part of it", "builder", () => [shop]],
    ["a player's name in an event", "Bob", () => [spawn]],
    ["a user id, exactly", "261", () => [tween]],
    ["another user id", "2612", () => [badge]],
  ];
  for (const [what, query, want] of cases) {
    it(`finds an issue by ${what} (${query}), on the page and in the API`, async () => {
      const html = await page(`search=${encodeURIComponent(query)}`);
      expect(issueLinks(html), query).toEqual(want());
      expect(html).toContain("Searched messages, culprits, script paths and function names in stack frames, player names and user ids, and the messages of every stored event.");
      const api = await list(app, apiKey, { grouped: true, search: query });
      expect(api.status).toBe(200);
      expect(api.body.data.map((g: any) => g.id), query).toEqual(want());
      expect(api.body.total).toBe(want().length);
      expect(api.body).not.toHaveProperty("search_window_full");
    });
  }

  it("says when nothing matches", async () => {
    const html = await page("search=Spawn99");
    expect(issueLinks(html)).toEqual([]);
    expect(html).toContain("No issues match “Spawn99” with these filters.");
    expect(html).toContain("Searched messages, culprits");
    expect((await list(app, apiKey, { grouped: true, search: "Spawn99" })).body).toMatchObject({ data: [], total: 0 });
  });

  it("combines with the other filters, and the bulk action by filter acts on what the search found", async () => {
    expect(issueLinks(await page("search=Spawn7&environment=staging"))).toEqual([]);
    expect(issueLinks(await page("search=Spawn7&environment=studio"))).toEqual([spawn]);
    const r = await app.request(`/projects/${projectId}/issues?index`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: new URLSearchParams({ scope: "filter", filter: "status=open&search=builderman", as_of: new Date(Date.now() + 60_000).toISOString(), intent: "ignored" }).toString(),
      redirect: "manual",
    });
    expect(r.status).toBeLessThan(400);
    const statuses = await app.sql<{ id: string; status: string }[]>`select id, status from error_groups where project_id = ${projectId} and status = 'ignored'`;
    expect(statuses.map((s) => s.id)).toEqual([shop]);
    await app.sql`update error_groups set status = 'open' where project_id = ${projectId} and id = ${shop}`;
  });

  it("finds a merged issue by its member's messages", async () => {
    const [{ id: member }] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${projectId} and id = ${badge}`;
    await app.sql`update error_groups set merged_into = ${tween} where project_id = ${projectId} and id = ${member}`;
    try {
      expect(issueLinks(await page("search=Badge%20award"))).toEqual([tween]);
    } finally {
      await app.sql`update error_groups set merged_into = null where project_id = ${projectId} and id = ${member}`;
    }
  });

  it("finds an issue by the message of any of its stored events, however many newer events there are", async () => {
    const ownerId = (await app.sql<{ user_id: string }[]>`select user_id from project_members where project_id = ${projectId}`)[0].user_id;
    const { projectId: pid, apiKey: key } = await makeProject(app.sql, ownerId);
    await ingest(app, key, [
      { message: "Spawn3 is not a valid member of Workspace.Map", timestamp: at(60), trace_id: crypto.randomUUID() },
      { message: "Spawn7 is not a valid member of Workspace.Map", timestamp: at(55), trace_id: crypto.randomUUID() },
      { message: "Filler", timestamp: at(50), trace_id: crypto.randomUUID() },
    ]);
    const [filler] = await app.sql<{ id: string }[]>`select id from error_groups where project_id = ${pid} and message = 'Filler'`;
    // 25,000 newer events, more than any window the search could read (written directly: through ingest this would take minutes)
    await app.sql`
      insert into events (project_id, group_id, message, level, environment, "timestamp")
      select ${pid}, ${filler.id}, 'Filler', 'error', 'production', ${new Date(now - 40 * MINUTE)}::timestamptz + i * interval '1 millisecond'
      from generate_series(1, 25000) i`;
    const api = await list(app, key, { grouped: true, search: "Spawn7" });
    expect(api.body).toMatchObject({ total: 1 });
    expect(api.body.data.map((g: any) => g.message)).toEqual(["Spawn3 is not a valid member of Workspace.Map"]);
    expect(api.body).not.toHaveProperty("search_window_full");
    const html = (await (await app.request(`/projects/${pid}/issues?search=Spawn7`, { headers: { cookie } })).text()).replaceAll("<!-- -->", "");
    expect(issueLinks(html)).toEqual(api.body.data.map((g: any) => g.id));
    expect(html).toContain("the messages of every stored event.");
  });
});
