import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * A member ticks two issues on the Issues list and asks to merge them; a confirmation lists both and
 * lets them pick the issue that stays. The merged-away issue's page names and links the issue it is
 * in, without status actions; one part is split out again from the merged issue's page. Screenshots
 * at 1280 and 390 px land in SCREENS_DIR (e2e/support/screens.ts).
 */
test("merge two issues into the one picked in the confirmation, then unmerge it from the issue page", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "Merge E2E");
  await sql.end();
  const login = await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } });
  expect(login.status()).toBe(200);
  const big = "ServerScriptService.Pets:14: attempt to index nil with 'Owner'";
  const small = "ServerScriptService.Pets:22: attempt to index nil with 'Owner'";
  const errors = [...Array.from({ length: 3 }, () => ({ message: big })), { message: small }, { message: "Egg hatch animation failed" }];
  const r = await page.request.post("/api/ingest", { data: { errors }, headers: { "x-api-key": apiKey } });
  expect(r.status()).toBe(200);
  await countersSettled();

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/projects/${projectId}/issues`);
  await expect(page.getByText("3 issues", { exact: true })).toBeVisible();
  const bigHref = await page.getByRole("link", { name: big }).getAttribute("href");

  // asking to merge only opens the confirmation; Cancel leaves everything as it was
  const tick = async () => {
    await page.getByLabel(`Select ${big}`).check();
    await page.getByLabel(`Select ${small}`).check();
    await page.getByRole("button", { name: "Merge…" }).click();
  };
  await tick();
  const dialog = page.getByRole("alertdialog", { name: "Merge 2 issues into one?" });
  await expect(dialog).toBeVisible({ timeout: 15_000 });
  await dialog.getByRole("link", { name: "Cancel" }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByText("3 issues", { exact: true })).toBeVisible();

  await tick();
  await expect(dialog).toBeVisible({ timeout: 15_000 });
  // the issue with the most occurrences is suggested; the user keeps the other one
  await expect(dialog.getByRole("radio", { name: new RegExp(big.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) })).toBeChecked();
  await page.screenshot({ path: `${SCREENS}/merge-confirm-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SCREENS}/merge-confirm-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await dialog.getByText(small).click();
  await dialog.getByRole("button", { name: "Merge 2 issues" }).click();
  await expect(page.getByRole("status")).toContainText(`Merged 2 issues into “${small}”`, { timeout: 15_000 });
  await expect(page.getByText("2 issues", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: big })).toHaveCount(0);

  // the merged-away issue names the issue it is in and has no status actions
  await page.goto(bigHref!);
  const note = page.getByTestId("merged-into");
  await expect(note).toContainText("Merged into another issue");
  await expect(page.getByRole("button", { name: "Resolve" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Ignore" })).toHaveCount(0);
  await expect(page.getByText("Snooze: ignore until…")).toHaveCount(0);
  await page.screenshot({ path: `${SCREENS}/merged-away-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SCREENS}/merged-away-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await note.getByRole("link", { name: small }).click();

  const merged = page.getByRole("region", { name: "Merged issues" });
  await expect(page.getByTestId("issue-message")).toHaveText(small);
  await expect(merged).toContainText("this issue's own");
  await expect(merged.getByRole("row")).toHaveCount(3);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${SCREENS}/issue-merged-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await merged.getByRole("button", { name: "Unmerge" }).click();
  await expect(page.getByRole("status")).toContainText("Split out 1 issue", { timeout: 15_000 });
  await expect(page.getByRole("region", { name: "Merged issues" })).toHaveCount(0);
  await page.goto(`/projects/${projectId}/issues`);
  await expect(page.getByText("3 issues", { exact: true })).toBeVisible();
});
