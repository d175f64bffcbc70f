import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { SCREENS } from "./support/screens.js";

/**
 * Grouping rules in Settings: preview a rule against stored events, a bad regex shown beside its field,
 * add, reorder, apply (merge the issues it covers) — with JavaScript, and again without it (plain form
 * posts). Screenshots at 390 and 1280 px.
 */

async function setUp(name: string) {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], name);
  await sql.end();
  return { user, projectId, apiKey };
}

async function signIn(page: Page, email: string) {
  expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
}

async function sendEvents(page: Page, apiKey: string) {
  const errors = [
    ...[1, 2, 3].map((u) => ({ message: "Quest 'Dragon' failed: missing reward", user_id: u })),
    { message: "Quest 'Dragon' failed: missing item", count: 4 },
    ...[4, 5].map((u) => ({ message: "Quest 'Dragon' failed: missing npc", user_id: u })),
    { message: "Spam from the lobby board" },
    { message: "ServerScriptService.Shop:7: attempt to index nil with 'Price'" },
  ];
  const r = await page.request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors } });
  expect(r.status()).toBe(200);
}

const regexField = (page: Page) => page.getByLabel("Message matches (RE2 regex)");

async function rulesOf(page: Page, projectId: string) {
  return (await (await page.request.get(`/api/team/projects/${projectId}/grouping-rules`)).json()).data as { id: string; name: string | null; action: string }[];
}

async function runScenario(page: Page, projectId: string, shots: (name: string) => Promise<void>) {
  await page.goto(`/projects/${projectId}/settings`);
  const panel = page.locator("#grouping-rules");
  await expect(panel.getByRole("heading", { name: "Grouping rules" })).toBeVisible();
  await expect(panel).toContainText("No grouping rules yet");

  // a regex RE2 does not support: the error sits beside the field, nothing saved
  await page.getByLabel("Name (the issue's title)").fill("Quest failures");
  await regexField(page).fill("(?<=Quest) '");
  await panel.getByRole("button", { name: "Add rule" }).click();
  await expect(regexField(page)).toHaveAccessibleDescription(/invalid regular expression: .*invalid named capture/);
  await expect(page.getByLabel("Name (the issue's title)")).toHaveValue("Quest failures");
  await shots("error");
  expect(await rulesOf(page, projectId)).toEqual([]);

  // preview before saving
  await regexField(page).fill("^Quest '.*' failed");
  await panel.getByRole("button", { name: "Preview" }).click();
  const preview = page.getByLabel("Preview");
  await expect(preview).toContainText("Matches 6 of the latest 8 stored events, in 3 issues.");
  await expect(preview).toContainText("Applying it would merge 2 issues into one.");
  await expect(preview.locator("tbody tr")).toHaveCount(3);
  await shots("preview");
  expect(await rulesOf(page, projectId)).toEqual([]);

  await panel.getByRole("button", { name: "Add rule" }).click();
  await expect(panel.getByText("Rule added")).toBeVisible();
  await expect(regexField(page)).toHaveValue("");

  // a second rule: ignore
  await page.getByLabel("Message matches (RE2 regex)").fill("^Spam");
  await page.getByLabel("Action").selectOption("ignore");
  await panel.getByRole("button", { name: "Add rule" }).click();
  await expect(panel.getByText("Rule added")).toBeVisible();
  const list = panel.locator("table.grule-list tbody tr");
  await expect(list).toHaveCount(2);
  await expect(list.nth(0)).toContainText("Quest failures");

  // reorder: the ignore rule first
  await panel.getByRole("button", { name: "Move rule 2 up" }).click();
  await expect(panel.getByText("Rule moved.")).toBeVisible();
  await expect(list.nth(0)).toContainText("^Spam");
  await expect(list.nth(1)).toContainText("Quest failures");
  expect((await rulesOf(page, projectId)).map((r) => r.action)).toEqual(["ignore", "group"]);

  // apply: the three quest issues become one titled by the rule
  await list.nth(1).getByRole("button", { name: "Merge existing" }).click();
  await expect(panel.getByText("Merged 2 issues into “Quest failures”.")).toBeVisible();
  await shots("list");
  await panel.getByRole("link", { name: "Open the rule's issue" }).click();
  await expect(page.getByTestId("issue-message")).toHaveText("Quest failures");
}

test("grouping rules with JavaScript: preview, bad regex, add, reorder, apply; 390 and 1280 px", async ({ page }) => {
  for (const width of [1280, 390]) {
    const { user, projectId, apiKey } = await setUp(`Rules E2E ${width}`);
    await signIn(page, user.email);
    await sendEvents(page, apiKey);
    await page.setViewportSize({ width, height: 900 });
    await runScenario(page, projectId, async (name) => {
      await page.locator("#grouping-rules").screenshot({ path: `${SCREENS}/grouping-rules-${name}-${width}.png` });
    });
    // nothing wider than the screen
    await page.goto(`/projects/${projectId}/settings`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  }
});

test("grouping rules without JavaScript: the same, by plain form posts", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 900 } });
  const page = await context.newPage();
  const { user, projectId, apiKey } = await setUp("Rules E2E no JS");
  await signIn(page, user.email);
  await sendEvents(page, apiKey);
  await runScenario(page, projectId, async (name) => {
    if (name === "preview") await page.locator("#grouping-rules").screenshot({ path: `${SCREENS}/grouping-rules-nojs-preview-390.png` });
  });
  // edit through the link (a page load) and delete
  await page.goto(`/projects/${projectId}/settings`);
  await page.getByRole("link", { name: "Edit rule 2" }).click();
  await expect(page.getByLabel("Name (the issue's title)")).toHaveValue("Quest failures");
  await page.getByLabel("Name (the issue's title)").fill("Quests");
  await page.locator("#grouping-rules").getByRole("button", { name: "Save rule" }).click();
  await expect(page.locator("#grouping-rules").getByText("Rule saved")).toBeVisible();
  expect((await rulesOf(page, projectId)).map((r) => r.name)).toEqual([null, "Quests"]);
  await page.locator("#grouping-rules table.grule-list tbody tr").nth(0).getByRole("button", { name: "Delete" }).click();
  await expect(page.locator("#grouping-rules").getByText("Rule deleted.")).toBeVisible();
  expect((await rulesOf(page, projectId)).map((r) => r.name)).toEqual(["Quests"]);
  await context.close();
});
