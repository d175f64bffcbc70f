import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * An event's breadcrumbs on the issue page, at a phone width (390 px) and a desktop width
 * (1280 px): a compact list (time, level, category, message) that wraps long lines instead of
 * scrolling the page sideways. Screenshots: crumbs-390.png and crumbs-1280.png in SCREENS_DIR.
 */
test("an event's breadcrumbs are listed on the issue page, readable at 390 and 1280 px", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "Breadcrumbs E2E");
  await sql.end();
  const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
  const sent = await page.request.post("/api/ingest", {
    headers: { "x-api-key": apiKey },
    data: {
      message: "ServerScriptService.Shop:88: attempt to index nil with 'Price'",
      stack_trace: "ServerScriptService.Shop:88 function buy\nServerScriptService.Shop:20",
      breadcrumbs: [
        { timestamp: at(40), level: "info", category: "log", message: "Round 12 started" },
        { timestamp: at(30), level: "info", category: "shop", message: "Shop opened", data: { shop: "Armory" } },
        { timestamp: at(20), level: "warning", category: "log", message: `Infinite yield possible on 'ReplicatedStorage.Remotes:WaitForChild("PurchaseItemWithAVeryLongNameThatDoesNotBreakAnywhere_${"x".repeat(80)}")'` },
        { timestamp: at(10), level: "error", category: "datastore", message: "DataStore request was added to queue. If request queue fills, further requests will be dropped." },
        { level: "debug", category: "manual" },
      ],
    },
  });
  expect(sent.status()).toBe(200);
  await countersSettled();
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);

  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}/issues`);
    await page.getByRole("link", { name: /attempt to index nil with 'Price'/ }).first().click();
    const crumbs = page.getByTestId("breadcrumbs").first();
    await expect(crumbs).toBeVisible();
    const items = crumbs.locator("li");
    await expect(items).toHaveCount(5);
    await expect(items.nth(0)).toContainText("Round 12 started");
    await expect(items.nth(1)).toContainText("shop");
    await expect(items.nth(1)).toContainText('{"shop":"Armory"}');
    await expect(items.nth(2)).toContainText("warning");
    await expect(items.nth(3)).toContainText("datastore");
    await expect(items.nth(4)).toContainText("—");
    // the time is shown to the millisecond (UTC)
    await expect(items.nth(0).locator("time")).toHaveText(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
    await expectNoSidewaysScroll(page, `the issue page at ${width} px`);
    expect(await crumbs.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await crumbs.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENS}/crumbs-${width}.png`, fullPage: true });
  }
});

async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll, `${what} is ${scroll} px wide in a ${width} px viewport`).toBeLessThanOrEqual(width);
}
