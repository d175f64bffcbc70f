import { mkdirSync } from "node:fs";
import { expect, test, type Browser, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * The dashboard's details at 390 and 1280 px, light and dark: long issue titles that stay readable
 * on a phone (the title spans the row, its figures under it, breaks only after dots and slashes),
 * player ids and trace ids that never wrap mid-number, the client-only badge and the origin filter,
 * every environment of a mixed issue in its header, versions in version order with their dates on
 * hover, a new share link's Copy button and loopback warning, the DSN create form (name cleared,
 * rate limit at creation) and the snooze form's labelled count. Screenshots go to SCREENS_DIR
 * (default e2e/artifacts/screens).
 */
let projectId = "";
let apiKey = "";
let owner = { id: "", email: "" };
const ids: Record<string, string> = {};
const LONG_ID = "4112233445566";
const TRACE = "7c1d2e3f-4a5b-4c6d-8e7f-0000000000aa";
const COMBAT = "ServerScriptService.CombatController.WeaponService:123: attempt to index nil with 'Humanoid'";
const COMBAT2 = "ServerScriptService.CombatController.WeaponService:456: attempt to perform arithmetic on nil";
const CLIENT = "Players.Builderman.PlayerScripts.ClientMain:9: exploit says hello";
const MIXED = "ReplicatedStorage.Shared.Inventory:77: bad item id";
const VERSIONS = ["9", "10", "1.2.10", "1.2.9", "2"];

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  mkdirSync(SCREENS, { recursive: true });
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  ({ projectId, apiKey } = await makeProject(sql, owner.id, [], "Details Derby"));
  await sql.end();
  const now = Date.now();
  const at = (minAgo: number) => new Date(now - minAgo * 60_000).toISOString();
  const post = async (errors: unknown[]) => {
    const r = await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors } });
    expect(r.status()).toBe(200);
  };
  // the versions arrive out of version order, one day apart, so relative times read alike
  await post(
    VERSIONS.map((v, i) => ({
      message: COMBAT,
      stack_trace: "ServerScriptService.CombatController.WeaponService:123 function swing\nServerScriptService.CombatController:12",
      game_version: v,
      environment: ["production", "staging", "studio", "production", "qa-long-environment-name"][i],
      user_id: LONG_ID,
      player_name: "AVeryLongPlayerNameForTesting",
      trace_id: TRACE,
      timestamp: at(60 * 24 * (5 - i) + 30),
    })),
  );
  await post([
    { message: COMBAT2, user_id: LONG_ID, player_name: "AVeryLongPlayerNameForTesting", trace_id: TRACE, timestamp: at(20) },
    { message: CLIENT, tags: ["origin:client"], user_id: LONG_ID, timestamp: at(15) },
    { message: MIXED, tags: ["origin:client"], timestamp: at(12) },
    { message: MIXED, timestamp: at(11) },
  ]);
  await countersSettled();
  const all = await (await request.get("/api/v1/errors?grouped=true&limit=100", { headers: { "x-api-key": apiKey } })).json();
  for (const g of all.data) ids[g.message] = g.id;
});

async function signIn(page: Page) {
  const r = await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
}

async function open(browser: Browser, width: number, colorScheme: "light" | "dark") {
  const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
  const page = await context.newPage();
  await signIn(page);
  return { context, page };
}

const shot = (page: Page, name: string, width: number, scheme: string) =>
  page.screenshot({ path: `${SCREENS}/details-${name}-${width}-${scheme}.png`, fullPage: true });

/** No page may scroll sideways on a phone. */
async function noSideScroll(page: Page) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(await page.evaluate(() => window.innerWidth));
}

for (const width of [390, 1280]) {
  test(`issues list at ${width} px: titles across the row, figures below them on a phone, client badge and origin filter`, async ({ browser }) => {
    const { context, page } = await open(browser, width, "light");
    await page.goto(`/projects/${projectId}/issues`);
    const row = (m: string) => page.locator("table.issues tbody tr").filter({ has: page.locator(`a[href$="/issues/${ids[m]}"]`) });
    const title = row(COMBAT).locator("a.msg");
    // the title breaks only after its dots and colons
    expect(await title.locator("wbr").count()).toBeGreaterThanOrEqual(3);
    await expect(title).toHaveText(COMBAT);
    const t = (await title.boundingBox())!;
    const figures = (await row(COMBAT).locator("td.num").first().boundingBox())!;
    if (width === 390) {
      // the title spans the card (not a 105 px column); the figures sit under it, labelled
      expect(t.width).toBeGreaterThan(260);
      expect(figures.y).toBeGreaterThan(t.y + t.height);
      await expect(row(COMBAT).locator("td.num").first()).toHaveAttribute("data-label", "occurrences");
      await expect(row(CLIENT).locator("td.num").first()).toHaveAttribute("data-label", "occurrence");
      await noSideScroll(page);
    } else {
      expect(Math.abs(figures.y - t.y)).toBeLessThan(t.height);
    }
    // the client-only issue has a badge; the mixed one (a server event too) has none
    await expect(row(CLIENT).getByTestId("client-only")).toHaveText("client");
    await expect(row(MIXED).getByTestId("client-only")).toHaveCount(0);
    await expect(row(COMBAT).getByTestId("client-only")).toHaveCount(0);
    // the origin filter: client only, then server (the mixed issue counts as server)
    await page.getByLabel("Origin").selectOption("client");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/origin=client/);
    await expect(page.getByTestId("issue-total")).toHaveText("1 issue");
    await expect(row(CLIENT)).toHaveCount(1);
    await shot(page, "issues-client", width, "light");
    await page.getByLabel("Origin").selectOption("server");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect(page).toHaveURL(/origin=server/);
    await expect(page.getByTestId("issue-total")).toHaveText("3 issues");
    await expect(row(MIXED)).toHaveCount(1);
    await expect(row(CLIENT)).toHaveCount(0);
    await context.close();
  });

  test(`player and traces at ${width} px: user ids and trace ids never wrap mid-number`, async ({ browser }) => {
    const { context, page } = await open(browser, width, "light");
    await page.goto(`/projects/${projectId}/players/${LONG_ID}`);
    const uid = page.locator(".uid").first();
    await expect(uid).toHaveText(LONG_ID);
    await expect(uid).toHaveAttribute("title", LONG_ID);
    const lineHeight = await uid.evaluate((el) => parseFloat(getComputedStyle(el).lineHeight) || 24);
    for (const box of await page.locator(".uid").all()) expect((await box.boundingBox())!.height).toBeLessThan(lineHeight * 1.5);
    if (width === 390) await noSideScroll(page);
    await page.goto(`/projects/${projectId}/players`);
    await expect(page.getByTestId("players").locator(".uid")).toHaveText(LONG_ID);
    await page.goto(`/projects/${projectId}/traces`);
    const cell = page.getByTestId("traces").locator("tbody tr").first().locator("td").first();
    const id = (await cell.locator("code").boundingBox())!;
    if (width === 390) {
      // the time is on its own line under the id, not run into it
      const time = (await cell.locator("time").boundingBox())!;
      expect(time.y).toBeGreaterThanOrEqual(id.y + id.height - 1);
    } else {
      await expect(cell.locator("time")).toBeHidden();
    }
    await shot(page, "traces", width, "light");
    await context.close();
  });

  test(`issue page at ${width} px: environments, origin, versions in order with dates, snooze label, share link`, async ({ browser }) => {
    const { context, page } = await open(browser, width, "light");
    await context.grantPermissions(["clipboard-read", "clipboard-write"]);
    await page.goto(`/projects/${projectId}/issues/${ids[COMBAT]}`);
    // every environment of the mixed issue, most occurrences first (ties by name)
    await expect(page.getByTestId("environments").first().locator(".tag")).toHaveText(["production", "qa-long-environment-name", "staging", "studio"]);
    await expect(page.getByTestId("client-only")).toHaveCount(0);
    // versions in version order, newest first, each first-seen date exact on hover
    const versions = page.getByTestId("versions");
    await expect(versions.locator("tbody tr td:first-child .version")).toHaveText(["10", "9", "2", "1.2.10", "1.2.9"]);
    const first = versions.locator("tbody tr").first().locator("time").first();
    await expect(first).toHaveAttribute("title", /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ d ago\)$/);
    await expect(first).toHaveText(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
    // the snooze count has a name
    await page.getByText("Snooze: ignore until…").click();
    await expect(page.getByLabel("N (more occurrences or players)")).toBeVisible();
    // a new share link: Copy button, and the loopback warning (the service runs on 127.0.0.1)
    await page.getByRole("button", { name: "Create share link" }).click();
    const url = page.getByTestId("share-url");
    await expect(url).toContainText("/share/");
    await page.getByRole("button", { name: "Copy the share link" }).click();
    await expect(page.getByRole("button", { name: "Copy the share link" })).toHaveText("Copied");
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await url.textContent());
    await expect(page.getByTestId("share-created").getByTestId("url-warning")).toContainText("loopback");
    await expect(page.getByTestId("share-created").getByTestId("url-warning")).toContainText("a teammate on another machine");
    if (width === 390) await noSideScroll(page);
    await shot(page, "issue-shared", width, "light");
    await page.goto(`/projects/${projectId}/issues/${ids[CLIENT]}`);
    await expect(page.getByTestId("client-only")).toHaveText("client");
    await shot(page, "issue-client", width, "light");
    await context.close();
  });

  test(`DSN form at ${width} px: a rate limit at creation, the name box empty afterwards`, async ({ browser }) => {
    const { context, page } = await open(browser, width, "light");
    await page.goto(`/projects/${projectId}/settings`);
    const panel = page.locator("section", { has: page.getByRole("heading", { name: "Sentry DSN" }) });
    const name = panel.getByLabel("DSN name");
    const limit = panel.getByLabel("Rate limit (events per minute; empty: none)");
    await expect(limit).toHaveValue("6000");
    // a bad limit: the API's message, nothing made, the typed text kept
    await name.fill(`bad-${width}`);
    await limit.fill("0");
    await panel.getByRole("button", { name: "Create DSN" }).click();
    await expect(panel.locator(".alert.error, [role=alert]").first()).toContainText("at least 1");
    await expect(panel.getByTestId("dsn-key").filter({ hasText: `bad-${width}` })).toHaveCount(0);
    await expect(name).toHaveValue(`bad-${width}`);
    await name.fill(`web-${width}`);
    await limit.fill("250");
    await panel.getByRole("button", { name: "Create DSN" }).click();
    const key = panel.getByTestId("dsn-key").filter({ hasText: `web-${width}` });
    await expect(key).toHaveCount(1);
    await expect(key.getByRole("textbox", { name: /Events per minute/ })).toHaveValue("250");
    await expect(name).toHaveValue("");
    await expect(limit).toHaveValue("6000");
    if (width === 390) await noSideScroll(page);
    await context.close();
  });
}

test("screenshots", async ({ browser }) => {
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [390, 1280]) {
      const { context, page } = await open(browser, width, colorScheme);
      await page.goto(`/projects/${projectId}/issues`);
      await shot(page, "issues", width, colorScheme);
      await page.goto(`/projects/${projectId}/traces`);
      await shot(page, "traces", width, colorScheme);
      await page.goto(`/projects/${projectId}/players/${LONG_ID}`);
      await shot(page, "player", width, colorScheme);
      await page.goto(`/projects/${projectId}/issues/${ids[COMBAT]}`);
      await shot(page, "issue", width, colorScheme);
      // the header and the versions at their own size, to read them
      await page.locator(".panel").first().screenshot({ path: `${SCREENS}/details-issue-head-${width}-${colorScheme}.png` });
      await page.locator("section", { has: page.getByTestId("versions") }).screenshot({ path: `${SCREENS}/details-versions-${width}-${colorScheme}.png` });
      await page.getByRole("button", { name: "Create share link" }).click();
      await page.getByTestId("share-created").locator("..").screenshot({ path: `${SCREENS}/details-share-${width}-${colorScheme}.png` });
      await page.goto(`/projects/${projectId}/settings`);
      await shot(page, "settings", width, colorScheme);
      await page.locator("section", { has: page.getByRole("heading", { name: "Sentry DSN" }) }).screenshot({ path: `${SCREENS}/details-dsn-${width}-${colorScheme}.png` });
      await context.close();
    }
  }
});
