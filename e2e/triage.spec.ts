import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { insertMember } from "../db/members.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * Every dashboard page at a phone width (390 px) and a desktop width (1280 px), in light and dark
 * colour schemes: no page scrolls sideways, and each is saved as a screenshot under
 * e2e/artifacts/screens/. Then the triage flows in a real browser: bulk change of every matching
 * issue after a confirmation with the count, snooze, event paging, player look-up, confirmations of
 * destructive actions, and members not seeing owner-only controls.
 */
let projectId = "";
let apiKey = "";
let owner = { id: "", email: "" };
let member = { id: "", email: "" };
let groupId = "";
let traceId = "";
/** The id the client gave the event that regressed the Combat issue. */
const REGRESSION_EVENT_ID = "5e1f0c3e-9b2d-4e7f-8a1b-2c3d4e5f6a7b";
let shareUrl = "";
const TRACE = "0b4e28ba-2fa1-11d2-883f-0016d3cca427";
const SHOP = (player: string) => `Players.${player}.PlayerGui.ShopGui.BuyButton:42: Shop item 'Sword' has no price`;
const SHOP_TITLE = SHOP("<player>");

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  member = await makeUser(sql);
  ({ projectId, apiKey } = await makeProject(sql, owner.id, [], "Obby Deluxe: a rather long game name to wrap"));
  await insertMember(sql, projectId, member.id, "member");
  await sql.end();
  const now = Date.now();
  const at = (minAgo: number) => new Date(now - minAgo * 60_000).toISOString();
  const names = ["Builderman", "xX_NoobSlayer_Xx", "KittyCat2012", "Guest_8812"];
  const errors = [];
  for (let i = 0; i < 60; i++) {
    const u = i % 4;
    errors.push({
      message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'",
      stack_trace: "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40",
      user_id: 1000 + u,
      player_name: names[u],
      game_version: i < 20 ? 41 : 42,
      environment: i % 5 === 0 ? "staging" : "production",
      place_id: 1818,
      job_id: `6f1c3a1e-aaaa-4bbb-8ccc-00000000000${i % 3}`,
      context: { map: i % 3 ? "Desert" : "City", weapon: "Sword" },
      trace_id: i === 59 ? TRACE : `0b4e28ba-2fa1-11d2-883f-${String(i).padStart(12, "0")}`,
      timestamp: at(300 - i * 4),
    });
  }
  errors.push(
    { message: "DataStore request was added to queue. If request queue fills, further requests will be dropped. Try sending fewer requests.Key = Player_261", level: "warn", game_version: 42, timestamp: at(30) },
    { message: "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'", level: "warn", game_version: 42, environment: "staging", timestamp: at(20) },
    { message: "HTTP 429 (Too Many Requests)", game_version: 43, user_id: 1001, player_name: names[1], timestamp: at(5), count: 12 },
  );
  for (let i = 0; i < errors.length; i += 50) {
    const r = await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors: errors.slice(i, i + 50) } });
    expect(r.status()).toBe(200);
  }
  // 30 different quest handlers missing: 30 issues
  const quests = "alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber coral ivory olive".split(" ");
  await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors: quests.map((q) => ({ message: `Quest step ${q} has no handler`, level: "error" })) } });
  // the shop issue: first had by another player, then by Builderman; its title names neither
  for (const [u, minAgo] of [[1, 45], [0, 15]] as const) {
    const r = await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { message: SHOP(names[u]), user_id: 1000 + u, player_name: names[u], game_version: 42, timestamp: at(minAgo) } });
    expect(r.status()).toBe(200);
  }
  // economy: huge balances and a duplication spike
  const profile = (cash: number, bank: number) => ({ RPCharacterOne: { Name: "Builder Man", Cash: cash, InATM: bank, DarkCoin: 3 } });
  await request.post("/api/economy/ingest", { headers: { "x-api-key": apiKey }, data: { players: [{ user_id: 1000, username: "Builderman", profile: profile(120, 900) }, { user_id: 1002, username: "KittyCat2012", profile: profile(4_370_956_012_345, 93_000_000_000) }] } });
  await request.post("/api/economy/ingest", { headers: { "x-api-key": apiKey }, data: { players: [{ user_id: 1000, username: "Builderman", profile: profile(48_850_689_640, 900) }] } });
  // the Old bug regresses in version 43
  const login = await request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(login.status()).toBe(200);
  const list = await (await request.get(`/api/v1/errors?grouped=true&search=${encodeURIComponent("attempt to index nil")}`, { headers: { "x-api-key": apiKey } })).json();
  groupId = list.data[0].id;
  await request.patch(`/api/team/projects/${projectId}/groups/${groupId}`, { data: { status: "resolved" } });
  await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { message: "ServerScriptService.Combat:123: attempt to index nil with 'Health'", stack_trace: "ServerScriptService.Combat:123 function attack\nServerScriptService.Combat:40", game_version: 43, user_id: 1003, player_name: names[3], event_id: REGRESSION_EVENT_ID } });
  const share = await request.post(`/api/team/projects/${projectId}/share-links`, { data: { group_id: groupId, role: "editor" } });
  shareUrl = new URL((await share.json()).url).pathname;
  await request.post(`/api/team/projects/${projectId}/channels`, { data: { name: "#errors", kind: "webhook", url: "https://example.invalid/hook" } });
  traceId = TRACE;
  await countersSettled();
});

async function signIn(page: Page, who: { email: string }) {
  const r = await page.request.post("/api/auth/login", { data: { email: who.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
}

/** Fails when the page is wider than the viewport (something scrolls the page sideways). */
async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scroll, width, culprits } = await page.evaluate(() => {
    const w = window.innerWidth;
    // the innermost elements that stick out, to name them in the failure
    const out = [...document.body.querySelectorAll("*")].filter(
      (el) => el.getBoundingClientRect().right > w + 0.5 && ![...el.children].some((c) => c.getBoundingClientRect().right > w + 0.5) && !el.closest(".tabs, table"),
    );
    return {
      scroll: document.documentElement.scrollWidth,
      width: w,
      culprits: out.slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${el.className} (${Math.round(el.getBoundingClientRect().right)} px)`),
    };
  });
  expect(scroll, `${what} is ${scroll} px wide in a ${width} px viewport: ${culprits.join(", ")}`).toBeLessThanOrEqual(width);
}

const pages = () => [
  ["projects", "/projects"],
  ["new-project", "/projects/new"],
  ["account", "/account"],
  ["overview", `/projects/${projectId}`],
  ["issues", `/projects/${projectId}/issues?status=all`],
  ["issues-env", `/projects/${projectId}/issues?status=all&environment=staging&sort=count`],
  ["issues-confirm", `/projects/${projectId}/issues?status=open&confirm=resolved`],
  ["issues-no-page", `/projects/${projectId}/issues?page=999`],
  ["issue", `/projects/${projectId}/issues/${groupId}`],
  ["releases", `/projects/${projectId}/releases`],
  ["servers", `/projects/${projectId}/servers`],
  ["players", `/projects/${projectId}/players`],
  ["player", `/projects/${projectId}/players/1000`],
  ["traces", `/projects/${projectId}/traces`],
  ["trace", `/projects/${projectId}/traces/${traceId}`],
  ["economy", `/projects/${projectId}/economy`],
  ["economy-player", `/projects/${projectId}/economy/players/1000`],
  ["economy-settings", `/projects/${projectId}/economy/settings`],
  ["alerts", `/projects/${projectId}/alerts`],
  ["deliveries", `/projects/${projectId}/deliveries`],
  ["settings", `/projects/${projectId}/settings`],
];

for (const width of [390, 1280]) {
  for (const scheme of ["light", "dark"] as const) {
    test(`every page at ${width} px (${scheme}) fits the width`, async ({ browser }) => {
      const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
      const page = await context.newPage();
      await signIn(page, owner);
      for (const [name, path] of pages()) {
        const r = await page.goto(path);
        expect(r?.status(), path).toBe(200);
        await expectNoSidewaysScroll(page, name);
        if (scheme === "light" || ["issues", "issue", "economy", "overview"].includes(name)) {
          await page.screenshot({ path: `${SCREENS}/${name}-${width}${scheme === "dark" ? "-dark" : ""}.png`, fullPage: true });
        }
      }
      // signed-out pages
      await context.clearCookies();
      for (const [name, path] of [["login", "/login"], ["share", shareUrl]]) {
        expect((await page.goto(path))?.status(), path).toBe(200);
        await expectNoSidewaysScroll(page, name);
        if (scheme === "light") await page.screenshot({ path: `${SCREENS}/${name}-${width}.png`, fullPage: true });
      }
      await context.close();
    });
  }
}

test("dark mode really is dark", async ({ browser }) => {
  const context = await browser.newContext({ colorScheme: "dark" });
  const page = await context.newPage();
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/issues`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = bg.match(/\d+/g)!.map(Number);
  expect(r + g + b).toBeLessThan(120);
  await context.close();
});

test("the issue page shows the regression version, versions, players, tags, and pages through all events", async ({ page }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/issues?status=all&regressed=1`);
  await expect(page.locator(".badge.regressed").first()).toBeVisible();
  await page.getByRole("link", { name: /attempt to index nil/ }).first().click();
  await expect(page.getByTestId("regressed")).toContainText("in version 43");
  await expect(page.getByTestId("versions")).toContainText("41");
  await expect(page.getByTestId("affected-players")).toContainText("Builderman");
  await expect(page.getByTestId("tag-breakdown")).toContainText("context.map");
  // 61 stored events: newest 20, then older pages, and back
  const events = page.locator("details.event");
  await expect(events).toHaveCount(20);
  const first = await events.first().locator("time").first().getAttribute("datetime");
  await page.getByRole("link", { name: "Older →" }).click();
  await expect(page).toHaveURL(/before=\d+/);
  await expect(events.first().locator("time").first()).not.toHaveAttribute("datetime", first!);
  await expect(events).toHaveCount(20);
  for (let i = 0; i < 2; i++) {
    const url = page.url();
    await page.getByRole("link", { name: "Older →" }).click();
    await expect(page).not.toHaveURL(url);
  }
  await expect(events).toHaveCount(1);
  await expect(page.getByRole("link", { name: "Older →" })).toHaveCount(0);
  await page.getByRole("link", { name: "← Newer" }).click();
  await expect(events).toHaveCount(20);
  // an absolute time on hover of a relative one
  const title = await page.locator("time.rel").first().getAttribute("title");
  expect(title).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
  // affected player -> player page -> economy page -> back to the player's errors
  await page.goto(`/projects/${projectId}/issues/${groupId}`);
  // the latest event (open) shows the id its client gave it
  await expect(page.locator("details.event").first().locator("dd", { hasText: REGRESSION_EVENT_ID })).toBeVisible();
  await page.getByTestId("affected-players").getByRole("link", { name: "Builderman" }).click();
  await expect(page.getByTestId("player-name")).toHaveText("Builderman");
  await page.getByRole("link", { name: "Economy balances" }).click();
  await expect(page).toHaveURL(/\/economy\/players\/1000$/);
  await page.getByRole("link", { name: "Errors of this player" }).click();
  await expect(page).toHaveURL(/\/players\/1000$/);
  await expect(page.getByTestId("player-issues")).toContainText("attempt to index nil");
});

test("snooze until N more occurrences, from the issue page", async ({ page, request }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/issues?status=all&search=Infinite`);
  await page.getByRole("link", { name: /Infinite yield/ }).click();
  await page.getByText("Snooze: ignore until…").click();
  await page.getByLabel("Ignore").selectOption("occurrences");
  await page.getByLabel("N (more occurrences or players)").fill("2");
  await page.getByRole("button", { name: "Snooze" }).click();
  await expect(page.getByTestId("snooze")).toContainText("2 more");
  for (let i = 0; i < 2; i++) {
    await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { message: "Infinite yield possible on 'ReplicatedStorage:WaitForChild(\"Remotes\")'", level: "warn" } });
  }
  await page.reload();
  await expect(page.locator(".badge.status-open")).toBeVisible();
});

test("issues are titled by their grouping form, not by the data of whoever had them first", async ({ page }) => {
  await signIn(page, owner);
  const issues = page.locator("table.issues");
  await page.goto(`/projects/${projectId}/issues?status=all&search=fewer%20requests`);
  await expect(issues.getByRole("link", { name: /Try sending fewer requests\.Key = <key>$/ })).toBeVisible();
  await expect(issues).not.toContainText("Player_261");
  await page.goto(`/projects/${projectId}/issues?status=all&search=has%20no%20price`);
  await expect(issues.getByRole("link", { name: SHOP_TITLE, exact: true })).toBeVisible();
  await expect(issues).not.toContainText("xX_NoobSlayer_Xx");
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${SCREENS}/issues-title-${width}.png`, fullPage: true });
  }
  await issues.getByRole("link", { name: SHOP_TITLE, exact: true }).click();
  // the heading is the title; the latest event's message is below it as it was sent
  await expect(page.getByTestId("issue-message")).toHaveText(SHOP_TITLE);
  await expect(page.getByTestId("latest-message")).toHaveText(`Latest message: ${SHOP("Builderman")}`);
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await expectNoSidewaysScroll(page, `titled issue at ${width} px`);
    await page.screenshot({ path: `${SCREENS}/issue-title-${width}.png`, fullPage: true });
  }
  // Builderman's page: his shop issue does not carry the other player's name
  await page.goto(`/projects/${projectId}/players/1000`);
  await expect(page.getByTestId("player-issues")).toContainText(SHOP_TITLE);
  await expect(page.getByTestId("player-issues")).not.toContainText("xX_NoobSlayer_Xx");
});

test("find a player by name or id", async ({ page }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/players`);
  await page.getByLabel("User id or name").fill("noob");
  await page.getByRole("button", { name: "Find" }).click();
  await expect(page.getByTestId("players")).toContainText("xX_NoobSlayer_Xx");
  await expect(page.getByTestId("players")).not.toContainText("Builderman");
  await page.getByLabel("User id or name").fill("1003");
  await page.getByRole("button", { name: "Find" }).click();
  await expect(page.getByTestId("players").locator("tbody tr").first()).toContainText("Guest_8812");
});

test("the issues list's filters keep their value through Apply, and search finds issues by player and user id", async ({ browser }) => {
  for (const width of [390, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page, owner);
    await page.goto(`/projects/${projectId}/issues?status=all&environment=staging&version=42`);
    const environment = page.getByLabel("Environment");
    await expect(environment).toHaveValue("staging");
    await expect(environment.locator("option")).toHaveText(["Any", "production", "staging"]);
    await expect(page.getByLabel("New in version")).toHaveValue("42");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/sort=last_seen/); // the form's own submission
    await expect(page).toHaveURL(/environment=staging/);
    await expect(page).toHaveURL(/version=42/);
    await expect(environment).toHaveValue("staging");
    // the Combat issue (new in 41) occurred in both; its latest event was in production
    await page.getByLabel("New in version").selectOption("");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).not.toHaveURL(/version=42/);
    await expect(page.getByTestId("issue-total")).toHaveText("2 issues");
    await expect(environment).toHaveValue("staging");
    const combat = page.locator("tr", { hasText: "attempt to index nil" });
    await expect(combat.locator(".envs .tag")).toHaveText(["production", "staging"]);
    await page.screenshot({ path: `${SCREENS}/search-issues-env-${width}.png`, fullPage: true });
    // a player's name finds the issues they had; the box says what was searched
    await page.getByLabel("Search").fill("KittyCat");
    await page.getByLabel("Environment").selectOption("");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("issue-total")).toHaveText("1 issue");
    await expect(page.locator("table.issues tbody tr").first()).toContainText("attempt to index nil");
    await expect(page.getByTestId("search-scope")).toContainText("Searched messages, culprits, script paths and function names in stack frames, player names and user ids");
    await page.screenshot({ path: `${SCREENS}/search-issues-search-${width}.png`, fullPage: true });
    // a user id: exactly that player's issues (Combat, HTTP 429 and the shop)
    await page.getByLabel("Search").fill("1001");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByTestId("issue-total")).toHaveText("3 issues");
    await page.getByLabel("Search").fill("Spawn99");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page.getByText("No issues match “Spawn99” with these filters.")).toBeVisible();
    await page.screenshot({ path: `${SCREENS}/search-issues-none-${width}.png`, fullPage: true });
    await context.close();
  }
});

test("bulk: resolve every matching issue after a confirmation that shows the count", async ({ page }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/issues?status=open&search=has%20no%20handler`);
  await expect(page.getByTestId("issue-total")).toHaveText("30 issues");
  await page.getByRole("link", { name: "Resolve all…" }).click();
  await expect(page.getByRole("alertdialog")).toContainText("Resolve all 30 issues matching these filters?");
  await page.getByRole("button", { name: "Resolve 30 issues" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Resolved 30 issues matching the filters." })).toBeVisible();
  await page.goto(`/projects/${projectId}/issues?status=resolved&search=has%20no%20handler`);
  await expect(page.getByTestId("issue-total")).toHaveText("30 issues");
});

test("destructive actions ask first; members do not see owner-only controls", async ({ page }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/alerts`);
  let asked = "";
  page.once("dialog", (d) => {
    asked = d.message();
    void d.dismiss();
  });
  await page.getByTestId("channel-#errors").getByRole("button", { name: "Delete" }).click();
  expect(asked).toContain('Delete the channel "#errors"');
  await expect(page.getByTestId("channel-#errors")).toBeVisible();
  await expect(page.getByTestId("public-url-note")).toContainText("PUBLIC_URL");

  await page.context().clearCookies();
  await signIn(page, member);
  await page.goto(`/projects/${projectId}/alerts`);
  await expect(page.getByTestId("channel-#errors")).toBeVisible();
  await expect(page.getByRole("button", { name: "Send test" })).toBeHidden();
  await expect(page.getByRole("button", { name: "Add channel" })).toBeHidden();
  await page.screenshot({ path: `${SCREENS}/alerts-member-1280.png`, fullPage: true });
});

test("a frequency rule needs N and M, and the rule form starts empty after a save", async ({ page }) => {
  await signIn(page, owner);
  await page.goto(`/projects/${projectId}/alerts`);
  await page.getByLabel("Rule name").fill("Spikes");
  await page.getByLabel("Trigger").selectOption("frequency");
  await page.getByRole("checkbox", { name: "error", exact: true }).check();
  await page.getByRole("button", { name: "Create rule" }).click();
  // the browser refuses the empty N (required): nothing was saved
  expect(await page.getByLabel("Threshold count").evaluate((el: HTMLInputElement) => el.validity.valueMissing)).toBe(true);
  await page.getByLabel("Threshold count").fill("50");
  await page.getByLabel("Window minutes").fill("5");
  await page.getByRole("button", { name: "Create rule" }).click();
  await expect(page.getByText("Rule created.")).toBeVisible();
  await expect(page.getByRole("cell", { name: "50 in 5 min" })).toBeVisible();
  await expect(page.getByLabel("Rule name")).toHaveValue("");
  await expect(page.getByRole("checkbox", { name: "error", exact: true })).not.toBeChecked();
  await expect(page.getByLabel("Trigger")).toHaveValue("new_group");
});
