import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { SCREENS } from "./support/screens.js";

/**
 * The currency map in a real browser: an owner replaces the default (RP) map with a ProfileStore
 * game's Coins and Gems, previews a pasted profile through the map being edited, sees a bad path
 * named beside its field, saves, and finds the map again after a reload; a profile pushed through
 * the public API then shows Coins and Gems on the player's page (with the value it skipped) and on
 * the economy overview. Screenshots of the settings page (with a preview) and the player page at
 * 390 and 1280 px go to SCREENS_DIR (default e2e/artifacts/screens).
 */
let projectId = "";
let apiKey = "";
let owner = { id: "", email: "" };

/** A ProfileStore save (the wrapper is unwrapped first): Coins, Gems, and a vault of slots with more Gems, one of them text. */
const PROFILE = {
  Data: { Coins: 1200, Gems: 30, Vault: [{ Gems: 5 }, { Gems: "lots" }, { Gems: 2 }], Settings: { Music: true } },
  MetaData: { ProfileCreateTime: 1700000000, SessionLoadCount: 3, ActiveSession: null, MetaTags: {} },
};

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  ({ projectId, apiKey } = await makeProject(sql, owner.id, [], "Gem Miners"));
  await sql.end();
});

async function signIn(page: Page) {
  const r = await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
}

const row = (page: Page, n: number) => page.getByTestId("map-currency").nth(n);

test("an owner replaces the map with Coins and Gems, previews a pasted profile and saves", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/economy/settings`);
  await expect(page.getByRole("heading", { name: "Currencies" })).toBeVisible();
  await expect(page.getByTestId("map-state")).toContainText("default map");
  await expect(page.getByText("A new map applies to each player’s next push or scan; balances already recorded keep the map they were read with.")).toBeVisible();
  // the default map: cash, bank, dark_coin
  await expect(page.getByTestId("map-currency")).toHaveCount(3);
  await expect(row(page, 2).getByLabel("Key")).toHaveValue("dark_coin");

  await page.getByRole("button", { name: "Remove currency 3 (dark_coin)" }).click();
  await expect(page.getByTestId("map-currency")).toHaveCount(2);
  await row(page, 0).getByLabel("Key").fill("coins");
  await row(page, 0).getByLabel("Display name").fill("Coins");
  await row(page, 0).getByLabel("Paths, one per line").fill("Coins");
  await row(page, 1).getByLabel("Key").fill("gems");
  await row(page, 1).getByLabel("Display name").fill("Gems");
  await row(page, 1).getByLabel("Paths, one per line").fill("Gems\nVault[*.Gems");
  await page.getByLabel("Name paths, one per line").fill("");
  await page.getByLabel("Data-code path").fill("");
  await page.getByLabel("Match paths, one per line").fill("");
  await page.getByLabel("Profile to preview (JSON)").fill(JSON.stringify(PROFILE, null, 2));

  // a bad path is named beside its field, and the draft survives the answer
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(row(page, 1).getByLabel("Paths, one per line")).toHaveAccessibleDescription("Path “Vault[*.Gems” is not a path: it has an unclosed [ at character 6.");
  await expect(row(page, 1).getByLabel("Paths, one per line")).toHaveAttribute("aria-invalid", "true");
  await expect(row(page, 0).getByLabel("Key")).toHaveValue("coins");

  await row(page, 1).getByLabel("Paths, one per line").fill("Gems\nVault[*].Gems");
  // a profile that is not JSON, then one this map does not read
  const pasted = page.getByLabel("Profile to preview (JSON)");
  await pasted.fill("{Coins = 5}");
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(pasted).toHaveAccessibleDescription(/The profile is not JSON: /);
  await pasted.fill(JSON.stringify({ Data: { Level: 4 }, MetaData: {} }));
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByTestId("preview-not-read")).toHaveText("This profile is not read (a push of it would skip the player): no path of the currency map is in the profile.");

  await pasted.fill(JSON.stringify(PROFILE, null, 2));
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  const preview = page.getByTestId("map-preview");
  await expect(preview).toContainText("The pasted profile");
  await expect(preview.getByTestId("preview-amount-coins")).toHaveText("1,200");
  await expect(preview.getByTestId("preview-amount-gems")).toHaveText("37");
  await expect(preview.getByTestId("preview-total")).toHaveText("1,237");
  await expect(preview.getByTestId("preview-gems")).toContainText("Vault[3].Gems");
  await expect(preview.getByTestId("skipped-values")).toContainText("Vault[2].Gems");
  await expect(preview.getByTestId("skipped-values")).toContainText("is a string, not a number");
  // previewing saved nothing
  await expect(page.getByTestId("map-state")).toContainText("default map");

  await page.getByRole("button", { name: "Save map" }).click();
  await expect(page.getByTestId("map-status")).toHaveText("The currency map is saved.");
  await expect(page.getByTestId("map-state")).toContainText("Saved map");

  await page.reload();
  await expect(page.getByTestId("map-currency")).toHaveCount(2);
  await expect(row(page, 0).getByLabel("Key")).toHaveValue("coins");
  await expect(row(page, 0).getByLabel("Display name")).toHaveValue("Coins");
  await expect(row(page, 1).getByLabel("Key")).toHaveValue("gems");
  await expect(row(page, 1).getByLabel("Paths, one per line")).toHaveValue("Gems\nVault[*].Gems");
  await expect(page.getByLabel("Data-code path")).toHaveValue("");
  await expect(page.getByRole("button", { name: "Reset to the default map" })).toBeVisible();

  // saving the form unchanged keeps the map exactly
  await page.getByRole("button", { name: "Save map" }).click();
  await expect(page.getByTestId("map-status")).toHaveText("The currency map is saved.");
  await expect(row(page, 1).getByLabel("Paths, one per line")).toHaveValue("Gems\nVault[*].Gems");
});

test("without JavaScript, rows are added and removed by the server and errors still sit beside their field", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page);
  await page.goto(`/projects/${projectId}/economy/settings`);
  await expect(page.getByTestId("map-currency")).toHaveCount(2);
  await row(page, 0).getByLabel("Display name").fill("Gold coins");
  await page.getByRole("button", { name: "Add currency" }).click();
  await expect(page.getByTestId("map-currency")).toHaveCount(3);
  // the typed but unsaved name came back with the new row
  await expect(row(page, 0).getByLabel("Display name")).toHaveValue("Gold coins");
  await row(page, 2).getByLabel("Key").fill("Tickets");
  await row(page, 2).getByLabel("Display name").fill("Tickets");
  await page.getByRole("button", { name: "Save map" }).click();
  await expect(row(page, 2).getByLabel("Key")).toHaveAccessibleDescription("Key must be 1 to 32 lowercase letters, digits or _, starting with a letter.");
  await expect(row(page, 2).getByLabel("Paths, one per line")).toHaveAccessibleDescription("Paths must list at least one path.");
  await expect(page.getByTestId("map-status")).toHaveText("The map has 2 problems, marked above; nothing was saved.");
  await page.getByRole("button", { name: "Remove currency 3 (Tickets)" }).click();
  await expect(page.getByTestId("map-currency")).toHaveCount(2);
  // nothing was saved
  await page.goto(`/projects/${projectId}/economy/settings`);
  await expect(row(page, 0).getByLabel("Display name")).toHaveValue("Coins");
  await context.close();
});

test("a pushed Coins and Gems profile shows on the player page and the overview", async ({ page, request }) => {
  const push = await request.post("/api/economy/ingest", {
    headers: { "x-api-key": apiKey },
    data: { players: [{ user_id: 7001, username: "gem_hoarder", display_name: "Gem Hoarder", profile: PROFILE }] },
  });
  expect(push.status()).toBe(200);
  expect((await push.json()).stored).toBe(1);

  await signIn(page);
  await page.goto(`/projects/${projectId}/economy/players/7001`);
  await expect(page.getByTestId("player-name")).toHaveText("Gem Hoarder");
  await expect(page.getByTestId("balance-coins")).toContainText("1,200");
  await expect(page.getByTestId("balance-coins")).toContainText("Coins");
  await expect(page.getByTestId("balance-gems")).toContainText("37");
  await expect(page.getByTestId("balance-gems")).toContainText("Gems");
  await expect(page.getByTestId("player-total")).toHaveText("1,237");
  await expect(page.getByTestId("balance-cash")).toHaveCount(0);
  await expect(page.getByTestId("skipped-values")).toContainText("Vault[2].Gems");
  const history = page.getByTestId("history");
  await expect(history.locator("thead")).toContainText("Coins");
  await expect(history.locator("thead")).toContainText("Gems");
  await expect(history.locator("tbody tr")).toHaveCount(1);
  await expect(history.locator("tbody tr").first()).toContainText("1,200");

  await page.goto(`/projects/${projectId}/economy`);
  await expect(page.getByTestId("card-gems")).toBeVisible();
  await expect(page.getByTestId("card-gems")).toContainText("Gems");

  // the last pushed profile is what an empty preview reads
  await page.goto(`/projects/${projectId}/economy/settings`);
  await page.getByRole("button", { name: "Preview", exact: true }).click();
  await expect(page.getByTestId("map-preview")).toContainText("The last pushed profile (player 7001");
  await expect(page.getByTestId("preview-amount-gems")).toHaveText("37");
});

test("screenshots of the settings page with a preview and of the player page", async ({ browser }) => {
  const open = async (width: number) => {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    return { page, context };
  };
  const noSideways = async (page: Page) => expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
  for (const width of [390, 1280]) {
    const { page, context } = await open(width);
    await page.goto(`/projects/${projectId}/economy/settings`);
    const gems = page.getByRole("group", { name: "Currency 2" }).getByLabel("Paths, one per line");
    await gems.fill("Gems\nVault[*].Gems\nBad path");
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await expect(gems).toHaveAccessibleDescription(/^Path “Bad path” is not a path/);
    await noSideways(page);
    await gems.fill("Gems\nVault[*].Gems");
    await page.getByLabel("Profile to preview (JSON)").fill(JSON.stringify(PROFILE));
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await expect(page.getByTestId("preview-amount-gems")).toHaveText("37");
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-map-settings-${width}.png`, fullPage: true });
    await context.close();
  }
  for (const width of [390, 1280]) {
    const { page, context } = await open(width);
    await page.goto(`/projects/${projectId}/economy/players/7001`);
    await expect(page.getByTestId("balance-gems")).toBeVisible();
    await noSideways(page);
    await page.screenshot({ path: `${SCREENS}/economy-map-player-${width}.png`, fullPage: true });
    await context.close();
  }
});

test("a preview that reads more places than it lists says how many it left out", async ({ browser }) => {
  // 60 vault slots of Gems: the preview lists 20 places per currency and counts the rest
  const vault = Array.from({ length: 60 }, (_, i) => ({ Gems: i + 1 }));
  for (const width of [390, 1280]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`/projects/${projectId}/economy/settings`);
    await page.getByRole("group", { name: "Currency 2" }).getByLabel("Paths, one per line").fill("Vault[*].Gems");
    await page.getByLabel("Profile to preview (JSON)").fill(JSON.stringify({ Coins: 5, Vault: vault }));
    await page.getByRole("button", { name: "Preview", exact: true }).click();
    await expect(page.getByTestId("preview-amount-gems")).toHaveText("1,830");
    await expect(page.getByTestId("preview-more-gems")).toContainText("and 40 more places");
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${SCREENS}/economy-map-preview-more-${width}.png`, fullPage: true });
    await context.close();
  }
});
