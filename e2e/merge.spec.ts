import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";

/**
 * A member ticks two issues on the Issues list and merges them; the merged issue lists both parts and
 * one is split out again from the issue page. Screenshots at 1280 and 390 px land in e2e/artifacts/.
 */
test("merge two issues from the list, unmerge one from the issue page", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "Merge E2E");
  await sql.end();
  const login = await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } });
  expect(login.status()).toBe(200);
  const errors = [
    ...Array.from({ length: 3 }, () => ({ message: "ServerScriptService.Pets:14: attempt to index nil with 'Owner'" })),
    { message: "ServerScriptService.Pets:22: attempt to index nil with 'Owner'" },
    { message: "Egg hatch animation failed" },
  ];
  const r = await page.request.post("/api/ingest", { data: { errors }, headers: { "x-api-key": apiKey } });
  expect(r.status()).toBe(200);

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/projects/${projectId}/issues`);
  await expect(page.getByText("3 issues", { exact: true })).toBeVisible();
  await page.getByLabel("Select ServerScriptService.Pets:14: attempt to index nil with 'Owner'").check();
  await page.getByLabel("Select ServerScriptService.Pets:22: attempt to index nil with 'Owner'").check();
  await page.getByRole("button", { name: "Merge" }).click();
  await expect(page.getByRole("status")).toContainText("Merged 2 issues", { timeout: 15_000 });
  await expect(page.getByText("2 issues", { exact: true })).toBeVisible();
  await page.screenshot({ path: "e2e/artifacts/issues-merged-1280.png", fullPage: true });

  await page.getByRole("link", { name: "ServerScriptService.Pets:14: attempt to index nil with 'Owner'" }).click();
  const merged = page.getByRole("region", { name: "Merged issues" });
  await expect(merged).toContainText("this issue's own");
  await expect(merged.getByRole("row")).toHaveCount(3);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: "e2e/artifacts/issue-merged-390.png", fullPage: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await merged.getByRole("button", { name: "Unmerge" }).click();
  await expect(page.getByRole("status")).toContainText("Split out 1 issue", { timeout: 15_000 });
  await expect(page.getByRole("region", { name: "Merged issues" })).toHaveCount(0);
  await page.goto(`/projects/${projectId}/issues`);
  await expect(page.getByText("3 issues", { exact: true })).toBeVisible();
});
