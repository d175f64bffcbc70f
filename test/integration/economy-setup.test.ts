import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LAYOUTS } from "../../app/economy/layouts.server.js";
import { postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeUser } from "../support/team.js";
import { runCli } from "../support/cli.js";
import { insertMember } from "../../db/members.js";

/**
 * Setting up the economy over HTTP: a new project's starting layout (Team API, CLI, the form), the
 * empty economy page, the warning a map that would skip every profile gets before it is saved, and
 * the player page's marks on each currency's line.
 */
let app: TestApp;
let owner: { id: string; email: string; cookie: string };

const createProject = (body: unknown) => call(app, "POST", "/api/team/projects", { cookie: owner.cookie, body });
const getMap = (projectId: string) => call(app, "GET", `/api/team/projects/${projectId}/economy-map`, { cookie: owner.cookie });
const push = (apiKey: string, players: unknown[]) => postJson(app, "/api/economy/ingest", { players }, apiKey);
/** A dashboard page as the browser gets it (server-rendered HTML, React's comment separators removed). */
async function page(pathname: string) {
  const res = await app.request(pathname, { headers: { cookie: owner.cookie }, redirect: "manual" });
  return { status: res.status, html: (await res.text()).replaceAll("<!-- -->", "") };
}
async function postForm(pathname: string, form: URLSearchParams) {
  const res = await app.request(pathname, {
    method: "POST",
    headers: { cookie: owner.cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
    redirect: "manual",
  });
  return { status: res.status, html: (await res.text()).replaceAll("<!-- -->", "") };
}
/** The settings page's map form as the editor posts it: one row per currency, paths one per line. */
function mapForm(intent: string, currencies: { key: string; name: string; paths: string[] }[], rest: { match?: string; profile?: string } = {}) {
  const form = new URLSearchParams({ intent, names: "", data_code: "", match: rest.match ?? "", profile: rest.profile ?? "" });
  currencies.forEach((c, i) => {
    form.set(`currencies[${i}].key`, c.key);
    form.set(`currencies[${i}].name`, c.name);
    form.set(`currencies[${i}].paths`, c.paths.join("\n"));
  });
  return form;
}

/** The text of the element carrying `data-testid="id"` (tags removed, entities decoded, spaces collapsed), or null. */
function testId(html: string, id: string): string | null {
  const at = html.indexOf(`data-testid="${id}"`);
  if (at < 0) return null;
  const open = html.lastIndexOf("<", at);
  const tag = /^<([a-z0-9]+)/.exec(html.slice(open))![1];
  // to the element's own closing tag, counting nested elements of the same name
  const re = new RegExp(`<${tag}[\\s>]|</${tag}>`, "g");
  re.lastIndex = open + 1;
  let depth = 1;
  let end = html.length;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[0].startsWith("</") ? -1 : 1;
    if (depth === 0) {
      end = m.index;
      break;
    }
  }
  return html
    .slice(html.indexOf(">", at) + 1, end)
    .replace(/<[^>]+>/g, " ")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&gt;/g, ">")
    .replace(/&lt;/g, "<")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

beforeAll(async () => {
  app = await startTestApp();
  const u = await makeUser(app.sql);
  owner = { ...u, cookie: await login(app, u.email) };
}, 60_000);
afterAll(() => app?.close());

describe("a new project's starting layout", () => {
  it("is the seed's when none is named: the Team API answers as before and no map is saved", async () => {
    const r = await createProject({ name: "Seed Game" });
    expect(r.status).toBe(201);
    expect(r.body.project).toMatchObject({ name: "Seed Game", economy_layout: "seed", role: "owner" });
    const map = await getMap(r.body.project.id);
    expect(map.body).toMatchObject({ is_default: true, updated_at: null, layout: "seed", warnings: [] });
    expect(map.body.map.currencies.map((c: { key: string }) => c.key)).toEqual(["cash", "bank", "dark_coin"]);
    expect(await app.sql`select 1 from economy_maps where project_id = ${r.body.project.id}`).toHaveLength(0);
    // null is the default too
    expect((await createProject({ name: "Seed Game 2", economy_layout: null })).body.project.economy_layout).toBe("seed");
  });

  it.each(["profilestore", "flat", "slots"] as const)("saves the %s layout's map with the project, and its sample profile pushes as documented", async (id) => {
    const r = await createProject({ name: `Game ${id}`, economy_layout: id });
    expect(r.status).toBe(201);
    expect(r.body.project.economy_layout).toBe(id);
    const projectId = r.body.project.id;
    const map = await getMap(projectId);
    expect(map.body).toMatchObject({ is_default: false, map: LAYOUTS[id].map, layout: id });
    const [row] = await app.sql`select updated_by::text from economy_maps where project_id = ${projectId}`;
    expect(row.updated_by).toBe(owner.id);
    // the layout's sample, as the SDK pushes it (a ProfileStore profile may also come wrapped)
    const profile = id === "profilestore" ? { Data: LAYOUTS[id].sample, MetaData: { SessionLoadCount: 1 } } : LAYOUTS[id].sample;
    const pushed = await push(r.body.api_key, [{ user_id: 77, profile }]);
    expect(pushed.body).toMatchObject({ stored: 1, skipped: 0 });
    const [snap] = await app.sql`select balances, display_names from economy_snapshots where project_id = ${projectId} and user_id = 77`;
    const expected = { profilestore: { coins: "1250", gems: "40" }, flat: { coins: "1250", gems: "40" }, slots: { gems: "13" } }[id];
    expect(snap.balances).toEqual(expected);
    if (id === "slots") expect(snap.display_names).toEqual(["Knight", "Mage"]);
  });

  it("refuses an unknown layout with a 400 naming the valid ones, and creates nothing", async () => {
    for (const bad of ["ProfileStore", "datastore2", 3, ""]) {
      const r = await createProject({ name: "Wrong Layout", economy_layout: bad });
      expect(r.status, String(bad)).toBe(400);
      expect(r.body.error).toBe("invalid_payload");
      expect(r.body.message).toContain("economy_layout must be one of seed, profilestore, flat, slots");
      expect(r.body.details).toEqual([{ path: "economy_layout", message: "must be one of seed, profilestore, flat, slots" }]);
    }
    expect(await app.sql`select 1 from projects where name = 'Wrong Layout'`).toHaveLength(0);
  });

  it("is offered by the new-project form, four layouts with a sample each; the form's choice is saved", async () => {
    const form = await page("/projects/new");
    expect(form.status).toBe(200);
    for (const id of ["profilestore", "flat", "slots", "seed"]) expect(form.html).toContain(`value="${id}"`);
    // ProfileStore is preselected on the form (the API's default stays the seed's)
    const radios = form.html.match(/<input[^>]*name="economy_layout"[^>]*>/g)!;
    expect(radios).toHaveLength(4);
    expect(radios.filter((t) => t.includes("checked"))).toEqual([expect.stringContaining('value="profilestore"')]);
    expect(form.html).toContain("{&quot;Coins&quot;:1250,&quot;Gems&quot;:40");
    const created = await postForm("/projects/new", new URLSearchParams({ name: "Form Slots", economy_layout: "slots" }));
    expect(created.status).toBe(200);
    const [p] = await app.sql`select id from projects where name = 'Form Slots'`;
    expect((await getMap(p.id)).body.map).toEqual(LAYOUTS.slots.map);
    const bad = await postForm("/projects/new", new URLSearchParams({ name: "Form Bad", economy_layout: "nope" }));
    expect(bad.status).toBe(400);
    expect(bad.html).toContain("Starting layout must be one of seed, profilestore, flat, slots.");
    expect(await app.sql`select 1 from projects where name = 'Form Bad'`).toHaveLength(0);
  });

  it("is taken by the CLI's project:create --layout; a wrong one exits 2 and creates nothing", async () => {
    const cli = (...args: string[]) => runCli(app.databaseUrl, ...args);
    const flat = await cli("project:create", "--name", "CLI Flat", "--layout", "flat");
    expect(flat.code).toBe(0);
    expect(flat.out).toMatchObject({ economy_layout: "flat", api_key: expect.stringMatching(/^rbx_/) });
    const [row] = await app.sql`select map from economy_maps where project_id = ${flat.out.project_id}`;
    expect(row.map).toEqual(LAYOUTS.flat.map);
    const plain = await cli("project:create", "--name", "CLI Seed");
    expect(plain.out.economy_layout).toBe("seed");
    expect(await app.sql`select 1 from economy_maps where project_id = ${plain.out.project_id}`).toHaveLength(0);
    const bad = await cli("project:create", "--name", "CLI Bad", "--layout", "datastore2");
    expect(bad).toMatchObject({ code: 2, out: { error: "usage", message: expect.stringContaining("economy_layout must be one of seed, profilestore, flat, slots") } });
    expect(await app.sql`select 1 from projects where name = 'CLI Bad'`).toHaveLength(0);
  }, 60_000);
});

describe("the empty economy page", () => {
  it("shows Monitor.economy.push from PlayerRemoving, the layout's currencies and a link to the map, the HTTP endpoint second", async () => {
    const r = await createProject({ name: "Empty Game", economy_layout: "profilestore" });
    const projectId = r.body.project.id;
    const empty = await page(`/projects/${projectId}/economy`);
    expect(empty.status).toBe(200);
    const text = testId(empty.html, "economy-empty")!;
    expect(text).toContain("Players.PlayerRemoving:Connect(function(player)");
    expect(text).toContain("Monitor.economy.push(player, profile.Data)");
    expect(testId(empty.html, "economy-empty-layout")).toContain("ProfileStore or ProfileService layout");
    expect(text).toContain("Coins from Coins");
    expect(text).toContain("Gems from Gems");
    const link = /<a [^>]*data-testid="economy-empty-map-link"[^>]*>/.exec(empty.html)![0];
    expect(link).toContain(`href="/projects/${projectId}/economy/settings"`);
    expect(text.indexOf("Monitor.economy.push")).toBeLessThan(text.indexOf("/api/economy/ingest"));
    // the seed's layout names its match tables
    const seed = await createProject({ name: "Empty Seed" });
    const seedText = testId((await page(`/projects/${seed.body.project.id}/economy`)).html, "economy-empty")!;
    expect(seedText).toContain("A profile is read only when it has a table at RPCharacterOne or RPCharacterTwo");

    // a member who may not change the map is told where it is, without a link they could not follow
    const m = await makeUser(app.sql);
    await insertMember(app.sql, projectId, m.id, "member");
    const res = await app.request(`/projects/${projectId}/economy`, { headers: { cookie: await login(app, m.email) } });
    const memberHtml = (await res.text()).replaceAll("<!-- -->", "");
    expect(memberHtml).not.toContain("economy-empty-map-link");
    expect(testId(memberHtml, "economy-empty")).toContain("change the map in Economy → Settings (owners and admins)");

    // once a player is stored, the overview shows the figures instead
    expect((await push(r.body.api_key, [{ user_id: 5, profile: { Coins: 1, Gems: 2 } }])).body.stored).toBe(1);
    const filled = await page(`/projects/${projectId}/economy`);
    expect(testId(filled.html, "economy-empty")).toBeNull();
    expect(testId(filled.html, "player-count")).toBe("1");
  });
});

describe("a map that would skip every profile", () => {
  const renamed = (match: string[]) => ({
    currencies: [
      { key: "coins", name: "Coins", paths: ["Wallet.Coins"] },
      { key: "gems", name: "Gems", paths: ["Wallet.Gems"] },
    ],
    match,
  });

  it("warns against the last pushed profile: Team API PUT and GET, the preview, and the settings page without pressing Preview", async () => {
    const r = await createProject({ name: "Renamed Game", economy_layout: "profilestore" });
    const projectId = r.body.project.id;
    expect((await push(r.body.api_key, [{ user_id: 123, profile: { Coins: 5, Gems: 1 } }])).body.stored).toBe(1);

    // the paths moved under Wallet, and a match path was kept that the pushed profile lacks
    const put = await call(app, "PUT", `/api/team/projects/${projectId}/economy-map`, { cookie: owner.cookie, body: renamed(["Wallet"]) });
    expect(put.status).toBe(200);
    expect(put.body.layout).toBeNull();
    expect(put.body.warnings).toEqual([
      {
        kind: "last_pushed",
        user_id: "123",
        observed_at: expect.any(String),
        reason: "profile has no table at Wallet",
        message: "The last profile pushed (user 123, just now) would be skipped: profile has no table at Wallet.",
      },
    ]);
    expect((await getMap(projectId)).body.warnings).toEqual(put.body.warnings);

    const settings = await page(`/projects/${projectId}/economy/settings`);
    expect(testId(settings.html, "map-state")).toMatch(/^Saved map, last changed /);
    expect(testId((await page(`/projects/${(await createProject({ name: "Flat One", economy_layout: "flat" })).body.project.id}/economy/settings`)).html, "map-state")).toMatch(
      /^Saved map \(the DataStore2-style flat layout\), last changed /,
    );
    expect(testId(settings.html, "saved-map-warning")).toContain("Saved map: The last profile pushed (user 123, just now) would be skipped: profile has no table at Wallet.");

    const preview = await call(app, "POST", `/api/team/projects/${projectId}/economy-map/preview`, { cookie: owner.cookie, body: {} });
    expect(preview.body).toMatchObject({ profile_source: "last_pushed", sample: { user_id: "123" }, result: { ok: false, reason: "profile has no table at Wallet" } });
    const form = mapForm("preview-map", renamed([]).currencies, { match: "Wallet" });
    const previewPage = await postForm(`/projects/${projectId}/economy/settings`, form);
    expect(testId(previewPage.html, "preview-not-read")).toBe("The last profile pushed (user 123, just now) would be skipped: profile has no table at Wallet.");

    // a map that reads the pushed profile has no warning
    const fixed = await call(app, "PUT", `/api/team/projects/${projectId}/economy-map`, { cookie: owner.cookie, body: { currencies: renamed([]).currencies.map((c) => ({ ...c, paths: [c.paths[0].slice(7)] })) } });
    expect(fixed.body.warnings).toEqual([]);
    expect(testId((await page(`/projects/${projectId}/economy/settings`)).html, "saved-map-warning")).toBeNull();
  });

  it("warns by its match paths before any push; the settings page holds the save until Save anyway", async () => {
    const r = await createProject({ name: "Fresh Renamed" });
    const projectId = r.body.project.id;
    // the seed's match paths kept after renaming the currencies
    const form = mapForm("save-map", [{ key: "coins", name: "Coins", paths: ["Coins"] }], { match: "RPCharacterOne\nRPCharacterTwo" });
    const held = await postForm(`/projects/${projectId}/economy/settings`, form);
    expect(held.status).toBe(200);
    expect(testId(held.html, "map-warning")).toContain(
      "Before saving: Every profile would likely be skipped: the match paths “RPCharacterOne”, “RPCharacterTwo” are kept, and none of them leads to a table the currency or name paths read from.",
    );
    expect(held.html).toContain('value="save-map-anyway"');
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);

    form.set("intent", "save-map-anyway");
    const saved = await postForm(`/projects/${projectId}/economy/settings`, form);
    expect(testId(saved.html, "map-status")).toBe("The currency map is saved.");
    const [row] = await app.sql`select map from economy_maps where project_id = ${projectId}`;
    expect(row.map.match).toEqual(["RPCharacterOne", "RPCharacterTwo"]);
    // the saved map keeps its warning where the map is read
    expect((await getMap(projectId)).body.warnings).toMatchObject([{ kind: "match_paths", paths: ["RPCharacterOne", "RPCharacterTwo"] }]);
    expect(testId((await page(`/projects/${projectId}/economy/settings`)).html, "saved-map-warning")).toContain("Saved map: Every profile would likely be skipped");

    // a map whose match path leads into its currencies saves at the first press
    form.set("intent", "save-map");
    form.set("match", "Wallet");
    form.set("currencies[0].paths", "Wallet.Coins");
    const ok = await postForm(`/projects/${projectId}/economy/settings`, form);
    expect(testId(ok.html, "map-status")).toBe("The currency map is saved.");
    expect(testId(ok.html, "map-warning")).toBeNull();
  });
});

describe("starting layouts in the map editor", () => {
  it("load a layout into the editor without saving it, keeping the pasted profile", async () => {
    const r = await createProject({ name: "Switching Game" });
    const projectId = r.body.project.id;
    const settings = await page(`/projects/${projectId}/economy/settings`);
    for (const id of ["profilestore", "flat", "slots", "seed"]) expect(settings.html).toContain(`value="load-layout:${id}"`);
    const form = mapForm("load-layout:slots", [{ key: "cash", name: "Cash", paths: ["Cash"] }], { profile: '{"Slots":[]}' });
    const loaded = await postForm(`/projects/${projectId}/economy/settings`, form);
    expect(loaded.status).toBe(200);
    expect(testId(loaded.html, "map-status")).toBe("The Save slots layout is in the editor; preview it, then save.");
    expect(loaded.html).toMatch(/<textarea[^>]*name="currencies\[0\]\.paths"[^>]*>Slots\[\*\]\.Gems<\/textarea>/);
    expect(loaded.html).toMatch(/<textarea[^>]*name="names"[^>]*>Slots\[\*\]<\/textarea>/);
    expect(loaded.html).toContain("{&quot;Slots&quot;:[]}</textarea>");
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
    form.set("intent", "load-layout:nope");
    expect(testId((await postForm(`/projects/${projectId}/economy/settings`, form)).html, "map-status")).toBe("Unknown layout.");
  });
});

describe("the player page", () => {
  it("draws one line per currency and marks the anomaly and the unexplained gain on their currency's line", async () => {
    const r = await createProject({ name: "Dupe Game", economy_layout: "profilestore" });
    const projectId = r.body.project.id;
    const step = async (coins: number, gems: number) => expect((await push(r.body.api_key, [{ user_id: 900, profile: { Coins: coins, Gems: gems } }])).body.stored).toBe(1);
    await step(100, 2_400);
    await step(150, 2_400); // ordinary income: a rise, no anomaly
    await step(150, 120_000); // a 50× dupe, over the default threshold (10× and more than 100,000)
    await step(400, 120_000); // a gain the flows do not explain (written as reconciliation writes it)
    const hist = await app.sql<{ id: string; observed_at: Date }[]>`
      select id::text, observed_at from economy_history where project_id = ${projectId} and user_id = 900 order by id`;
    expect(hist).toHaveLength(4);
    await app.sql`
      insert into economy_unexplained (project_id, history_id, user_id, currency, from_amount, to_amount, explained, unexplained, from_observed_at, observed_at)
      values (${projectId}, ${hist[3].id}, 900, 'coins', 150, 400, 50, 200, ${hist[2].observed_at}, ${hist[3].observed_at})`;
    // another player's rows never show on this page
    await app.sql`
      insert into economy_unexplained (project_id, history_id, user_id, currency, from_amount, to_amount, explained, unexplained, from_observed_at, observed_at)
      values (${projectId}, ${hist[3].id}, 901, 'gems', 1, 9, 0, 8, ${hist[2].observed_at}, ${hist[3].observed_at})`;

    const p = await page(`/projects/${projectId}/economy/players/900`);
    expect(p.status).toBe(200);
    expect(p.html).toContain('data-testid="line-coins"');
    expect(p.html).toContain('data-testid="line-gems"');
    expect(p.html.match(/data-testid="mark-anomaly-gems"/g)).toHaveLength(1);
    expect(p.html.match(/data-testid="mark-unexplained-coins"/g)).toHaveLength(1);
    expect(p.html).not.toContain("mark-anomaly-coins");
    expect(p.html).not.toContain("mark-unexplained-gems");
    const legend = testId(p.html, "lines-legend")!;
    expect(legend).toMatch(/Coins.*Gems.*anomaly.*unexplained gain/);
    const rows = p.html.split('data-testid="player-marks"')[1].split("</table>")[0].split("<tr").slice(2).map((t) => t.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim());
    expect(rows).toHaveLength(2);
    // newest first
    expect(rows[0]).toContain("Coins");
    expect(rows[0]).toContain("150 → 400");
    expect(rows[0]).toContain("Unexplained gain: +200 no recorded flow explains");
    expect(rows[1]).toContain("Gems");
    expect(rows[1]).toContain("2,400 → 120,000");
    expect(rows[1]).toContain("Anomaly: 50×, over 10× and +100,000 (default threshold)");
  });

  it("says when nothing is marked", async () => {
    const r = await createProject({ name: "Calm Game", economy_layout: "profilestore" });
    await push(r.body.api_key, [{ user_id: 1, profile: { Coins: 1, Gems: 1 } }]);
    await push(r.body.api_key, [{ user_id: 1, profile: { Coins: 2, Gems: 1 } }]);
    const p = await page(`/projects/${r.body.project.id}/economy/players/1`);
    expect(testId(p.html, "player-no-marks")).toBe("No anomaly and no unexplained gain in these observations.");
    expect(p.html).not.toContain('data-testid="mark-');
  });
});
