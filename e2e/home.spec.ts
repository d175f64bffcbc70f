import { expect, test } from "@playwright/test";

test("the home page renders in a real browser and links the health check", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Roblox Monitor" })).toBeVisible();
  await page.getByRole("link", { name: "/api/ingest" }).click();
  await expect(page.locator("body")).toContainText('"status":"ok"');
});
