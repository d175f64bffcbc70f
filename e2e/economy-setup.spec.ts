import { expect, test, type Browser, type Page } from "@playwright/test";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";
import { makeUser, PASSWORD } from "../test/support/team.js";
import { SCREENS } from "./support/screens.js";

/**
 * Setting up the economy in a real browser, at a phone's and a desktop's width: the new-project form's
 * starting layouts, the empty economy page, the settings page holding a map that would skip the last
 * pushed profile, and a player page with one line per currency and its marks. Screenshots go to
 * SCREENS_DIR (default e2e/artifacts/screens).
 */
const WIDTHS = [390, 1280];
let owner = { id: "", email: "" };
let emptyProject = "";
let renamedProject = "";
let renamedKey = "";
let dupeProject = "";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  const actor = { id: owner.id, email: owner.email };
  emptyProject = (await createProject(sql, actor, { name: "Empty Obby", economy_layout: "profilestore" })).project.id;
  const renamed = await createProject(sql, actor, { name: "Renamed Gems", economy_layout: "profilestore" });
  renamedProject = renamed.project.id;
  renamedKey = renamed.api_key;
  const dupe = await createProject(sql, actor, { name: "Dupe Hunters", economy_layout: "profilestore" });
  dupeProject = dupe.project.id;
  const push = async (apiKey: string, userId: number, coins: number, gems: number) => {
    const r = await request.post("/api/economy/ingest", { headers: { "x-api-key": apiKey }, data: { players: [{ user_id: userId, username: "gemlord", profile: { Coins: coins, Gems: gems } }] } });
    expect((await r.json()).stored).toBe(1);
  };
  await push(renamedKey, 123, 5, 1);
  for (const [coins, gems] of [[100, 2_400], [150, 2_400], [150, 120_000], [400, 120_000], [420, 121_000]]) await push(dupe.api_key, 900, coins, gems);
  const hist = await sql<{ id: string; observed_at: Date }[]>`
    select id::text, observed_at from economy_history where project_id = ${dupeProject} and user_id = 900 order by id`;
  // a gain the flows do not explain, as reconciliation records it
  await sql`
    insert into economy_unexplained (project_id, history_id, user_id, currency, from_amount, to_amount, explained, unexplained, from_observed_at, observed_at)
    values (${dupeProject}, ${hist[3].id}, 900, 'coins', 150, 400, 50, 200, ${hist[2].observed_at}, ${hist[3].observed_at})`;
  await sql.end();
});

async function open(browser: Browser, width: number) {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  const r = await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
  return { page, context };
}
const noSideways = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);

test("the new-project form offers four starting layouts, ProfileStore preselected, and saves the choice", async ({ browser }) => {
  for (const width of WIDTHS) {
    const { page, context } = await open(browser, width);
    await page.goto("/projects/new");
    const choice = page.getByTestId("layout-choice");
    await expect(choice.getByRole("radio")).toHaveCount(4);
    await expect(page.getByRole("radio", { name: /ProfileStore or ProfileService/ })).toBeChecked();
    await expect(choice).toContainText('{"Slots":[{"Name":"Knight","Gems":10},{"Name":"Mage","Gems":3}]}');
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-new-project-${width}.png`, fullPage: true });
    if (width === 1280) {
      await page.getByLabel("Name").fill("Slot Keeper");
      await page.getByRole("radio", { name: /Save slots/ }).check();
      await page.getByRole("button", { name: "Create project" }).click();
      await page.getByRole("link", { name: "Open the project" }).click();
      await expect(page).toHaveURL(/\/projects\/[0-9a-f-]{36}$/);
      const id = /\/projects\/([0-9a-f-]{36})/.exec(page.url())![1];
      await page.goto(`/projects/${id}/economy`);
      await expect(page.getByTestId("economy-empty-layout")).toContainText("Save slots layout");
      await expect(page.getByTestId("economy-empty")).toContainText("Gems from Slots[*].Gems");
    }
    await context.close();
  }
});

test("the empty economy page explains Monitor.economy.push and flows, and links to the map", async ({ browser }) => {
  for (const width of WIDTHS) {
    const { page, context } = await open(browser, width);
    await page.goto(`/projects/${emptyProject}/economy`);
    await expect(page.getByTestId("economy-empty-snippet")).toContainText("Monitor.economy.push(player, profile.Data)");
    await expect(page.getByTestId("economy-empty")).toContainText("Coins from Coins");
    await expect(page.getByTestId("economy-empty-flows")).toContainText('Monitor.economy.flow(player, "coins", 50, "quest")');
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-empty-${width}.png`, fullPage: true });
    if (width === 1280) {
      await page.getByTestId("economy-empty-map-link").click();
      await expect(page).toHaveURL(new RegExp(`/projects/${emptyProject}/economy/settings$`));
      await expect(page.getByRole("heading", { name: "Economy settings" })).toBeVisible();
    }
    await context.close();
  }
});

test("moving the currencies under a table the last pushed profile lacks is held with a warning", async ({ browser }) => {
  for (const width of WIDTHS) {
    const { page, context } = await open(browser, width);
    await page.goto(`/projects/${renamedProject}/economy/settings`);
    await expect(page.getByRole("group", { name: "Start from a layout" }).getByRole("button")).toHaveCount(4);
    await page.getByRole("group", { name: "Start from a layout" }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENS}/economy-settings-top-${width}.png` });
    await page.getByRole("group", { name: "Currency 1" }).getByLabel("Paths, one per line").fill("Wallet.Coins");
    await page.getByRole("group", { name: "Currency 2" }).getByLabel("Paths, one per line").fill("Wallet.Gems");
    await page.getByLabel("Match paths, one per line").fill("Wallet");
    await page.getByRole("button", { name: "Save map" }).click();
    const warning = page.getByTestId("map-warning");
    await expect(warning).toContainText("The last profile pushed (user 123,");
    await expect(warning).toContainText("would be skipped: profile has no table at Wallet.");
    await expect(page.getByTestId("map-status")).toContainText("Not saved yet");
    await expect(page.getByRole("button", { name: "Save anyway" })).toBeVisible();
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-settings-warning-${width}.png`, fullPage: true });
    // the warning and the buttons, as the viewport shows them after the answer
    await page.getByRole("button", { name: "Save anyway" }).scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENS}/economy-settings-warning-view-${width}.png` });
    await context.close();
  }
  const { page, context } = await open(browser, 1280);
  await page.goto(`/projects/${renamedProject}/economy/settings`);
  await page.getByLabel("Match paths, one per line").fill("Wallet");
  await page.getByRole("group", { name: "Currency 1" }).getByLabel("Paths, one per line").fill("Wallet.Coins");
  await page.getByRole("button", { name: "Save map" }).click();
  await page.getByRole("button", { name: "Save anyway" }).click();
  await expect(page.getByTestId("map-status")).toHaveText("The currency map is saved.");
  await page.reload();
  await expect(page.getByTestId("saved-map-warning")).toContainText("Saved map: The last profile pushed (user 123,");
  await context.close();
});

test("the player page draws a line per currency with the anomaly and the unexplained gain marked", async ({ browser }) => {
  for (const width of WIDTHS) {
    const { page, context } = await open(browser, width);
    await page.goto(`/projects/${dupeProject}/economy/players/900`);
    const chart = page.getByTestId("currency-lines");
    await expect(chart.getByRole("img", { name: "Balance history per currency" })).toBeVisible();
    await expect(chart.getByTestId("mark-anomaly-gems")).toHaveCount(1);
    await expect(chart.getByTestId("mark-unexplained-coins")).toHaveCount(1);
    await expect(page.getByTestId("lines-legend")).toContainText("unexplained gain");
    const marks = page.getByTestId("player-marks").locator("tbody tr");
    await expect(marks).toHaveCount(2);
    await expect(marks.nth(1)).toContainText("2,400 → 120,000");
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-player-marks-${width}.png`, fullPage: true });
    // each currency on its own axis: Coins' small line is no longer flattened by Gems'
    await page.getByTestId("scale-own").click();
    await expect(page.getByRole("img", { name: "Balance history, Coins" })).toBeVisible();
    await expect(page.getByTestId("currency-lines")).toHaveCount(2);
    await expect(page.getByTestId("currency-lines").nth(0).getByTestId("mark-unexplained-coins")).toHaveCount(1);
    await expect(page.getByTestId("currency-lines").nth(1).getByTestId("mark-anomaly-gems")).toHaveCount(1);
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-player-marks-own-scale-${width}.png`, fullPage: true });
    await context.close();
  }
});
