import { expect, test } from "@playwright/test";

test("the health check answers in a real browser", async ({ page }) => {
  await page.goto("/api/ingest");
  await expect(page.locator("body")).toContainText('"status":"ok"');
});

test("the front door leads to setup or sign-in", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/(setup|login)$/);
});
