import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * A team triages together: the owner assigns an issue to a teammate from the Issues list, filters on
 * it, comments on the issue with a link and sees the timeline (first seen, assignment, status change,
 * comment); the teammate sees "Assigned 1" in the nav and the notice. Screenshots at 1280 and 390 px,
 * light and dark, land in SCREENS_DIR (e2e/support/screens.ts).
 */
async function shots(page: Page, name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      await page.screenshot({ path: `${SCREENS}/${name}-${width}-${scheme}.png`, fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 900 });
}

test("assign from the list, comment, see the timeline; the assignee is told", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const owner = await makeUser(sql, `owner-${Date.now()}@studio.test`);
  const mate = await makeUser(sql, `mate-${Date.now()}@studio.test`);
  const { projectId, apiKey } = await makeProject(sql, owner.id, [{ userId: mate.id, role: "member" }], "Collab E2E");
  await sql.end();
  const signIn = async (email: string) => {
    const r = await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } });
    expect(r.status()).toBe(200);
  };
  await signIn(owner.email);
  const shop = "ServerScriptService.Shop:42: attempt to index nil with 'Price'";
  const pets = "ServerScriptService.Pets:14: attempt to index nil with 'Owner'";
  const r = await page.request.post("/api/ingest", { data: { errors: [{ message: shop, game_version: "1.8.0" }, { message: pets }] }, headers: { "x-api-key": apiKey } });
  expect(r.status()).toBe(200);
  await countersSettled();

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/projects/${projectId}/issues`);
  await page.getByLabel(`Select ${shop}`).check();
  await page.getByLabel("Assign to").selectOption({ label: mate.email });
  await page.getByRole("button", { name: "Assign", exact: true }).click();
  await expect(page.getByRole("status")).toContainText("Assigned 1 issue.", { timeout: 15_000 });
  const shopRow = page.getByRole("row").filter({ hasText: shop });
  // the row names the assignee by the part of the address before the @ (the whole address on hover)
  await expect(shopRow.getByTestId("assignee-tag")).toHaveText(`→ ${mate.email.split("@")[0]}`);
  await expect(shopRow.getByTestId("assignee-tag")).toHaveAttribute("title", `Assigned to ${mate.email}`);

  // the filter: unassigned leaves only the other issue
  await page.getByLabel("Assigned", { exact: true }).selectOption("none");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByText("1 issue", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: pets })).toBeVisible();
  await page.getByLabel("Assigned", { exact: true }).selectOption({ label: mate.email });
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page.getByRole("link", { name: shop })).toBeVisible();
  await expect(page.getByRole("link", { name: pets })).toHaveCount(0);
  await shots(page, "collab-list");

  // on the issue: resolve, comment with a link, and read the timeline
  await page.getByRole("link", { name: shop }).click();
  await expect(page.getByLabel("Assignee", { exact: true })).toHaveValue(mate.id);
  await page.getByRole("button", { name: "Resolve" }).click();
  await expect(page.getByRole("button", { name: "Reopen" })).toBeVisible({ timeout: 15_000 });
  await page.getByLabel("Comment", { exact: true }).fill("Price is nil when the shop opens before data loads. <b>not bold</b> See https://create.roblox.com/docs/reference/engine/classes/DataStoreService.");
  await page.getByRole("button", { name: "Comment", exact: true }).click();
  await expect(page.getByRole("status")).toContainText("Comment added.", { timeout: 15_000 });
  const timeline = page.getByTestId("timeline");
  await expect(timeline.getByTestId("comment-body")).toContainText("<b>not bold</b>");
  await expect(timeline.getByRole("link", { name: "https://create.roblox.com/docs/reference/engine/classes/DataStoreService" })).toHaveAttribute(
    "href",
    "https://create.roblox.com/docs/reference/engine/classes/DataStoreService",
  );
  await expect(timeline.getByRole("listitem")).toHaveCount(4);
  await expect(timeline).toContainText("First seen in version 1.8.0");
  await expect(timeline).toContainText(`You assigned this issue to ${mate.email}`);
  await expect(timeline).toContainText("You resolved this issue in version 1.8.0");
  await timeline.getByRole("heading", { name: "Activity" }).scrollIntoViewIfNeeded();
  await shots(page, "collab-issue");

  // the teammate: one unread notice in the nav, read once the list is opened
  await signIn(mate.email);
  await page.goto("/projects");
  await expect(page.getByTestId("unread-count")).toHaveText("1");
  await page.getByRole("link", { name: /Assigned to you/ }).click();
  await expect(page.getByTestId("notices")).toContainText(shop);
  await expect(page.getByTestId("notices")).toContainText(`${owner.email} assigned you`);
  await shots(page, "collab-notices");
  await page.reload();
  await expect(page.getByTestId("unread-count")).toHaveCount(0);
});
