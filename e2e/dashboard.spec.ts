import { expect, test as base, type Page } from "@playwright/test";
import { startFreshServer } from "./support/fresh-server";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * The team's morning in a real Chromium: first-run setup, sign-in, a project with its key shown
 * once, events sent through the public API showing up, triage from the issue page, share links
 * opened by someone without an account, sign-out. Screenshots land in SCREENS_DIR (e2e/support/screens.ts).
 */
// this spec starts from an empty database: the first-run setup page only exists while no user does
const test = base.extend<object, { fresh: { url: string } }>({
  fresh: [
    async ({}, use) => {
      const server = await startFreshServer();
      await use(server);
      await server.close();
    },
    { scope: "worker" },
  ],
  baseURL: async ({ fresh }, use) => use(fresh.url),
});
test.describe.configure({ mode: "serial" });

const EMAIL = "lead@studio.test";
const PASSWORD = "a long e2e password";
let projectUrl = "";
let apiKey = "";
let viewerUrl = "";
let editorUrl = "";

async function signIn(page: Page) {
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login/);
}

test("first-run setup creates the first account and signs it in", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/setup$/);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password (at least 8 characters, not a common one)").fill(PASSWORD);
  await page.getByLabel("Repeat the password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/projects\/new$/);
  await expect(page.getByRole("link", { name: EMAIL })).toBeVisible();
  // setup is gone once an account exists
  await page.goto("/setup");
  await expect(page).not.toHaveURL(/\/setup$/);
});

test("sign-in is required, and brings you back where you were going", async ({ page }) => {
  await page.goto("/projects");
  await expect(page).toHaveURL(/\/login\?next=%2Fprojects$/);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert")).toContainText("email or password is wrong");
  await signIn(page);
  await expect(page).toHaveURL(/\/projects$/);
  await expect(page.getByRole("heading", { name: "Projects" })).toBeVisible();
});

test("creating a project shows its API key once", async ({ page }) => {
  await page.goto("/login");
  await signIn(page);
  await page.getByRole("link", { name: "New project" }).click();
  await page.getByLabel("Name").fill("E2E Obby");
  await page.getByRole("button", { name: "Create project" }).click();
  const key = page.getByTestId("api-key");
  await expect(key).toHaveText(/^rbx_[A-Za-z0-9_-]{32}$/);
  apiKey = (await key.textContent())!;
  await page.getByRole("link", { name: "Open the project" }).click();
  await expect(page).toHaveURL(/\/projects\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { name: "E2E Obby", exact: true })).toBeVisible();
  projectUrl = new URL(page.url()).pathname;
  await expect(page.getByText("No events yet")).toBeVisible();
  // the key is not shown again anywhere
  await page.goto(`${projectUrl}/settings`);
  await expect(page.getByText(apiKey)).toHaveCount(0);
  await expect(page.getByText(apiKey.slice(0, 10) + "…")).toBeVisible();
});

test("events sent through the API appear in the overview and the issues list", async ({ page, request }) => {
  const trace = "{6F9619FF-8B86-D011-B42D-00CF4FC964FF}";
  const now = Date.now();
  const errors = [
    ...Array.from({ length: 6 }, (_, i) => ({
      message: "Workspace.Tools.Sword.Handler:42: attempt to index nil with 'Humanoid'",
      level: "error",
      stack_trace: "Workspace.Tools.Sword.Handler:42 function onTouched\nWorkspace.Tools.Sword.Handler:17",
      user_id: 1000 + (i % 3),
      player_name: ["builderman", "Shedletsky", "Roblox"][i % 3],
      trace_id: i === 0 ? trace : undefined,
      environment: "production",
      game_version: "1.4.2",
      place_id: 4483381587,
      context: { tool: "Sword", round: i },
      tags: ["combat"],
      timestamp: new Date(now - i * 3_600_000).toISOString(),
    })),
    { message: "DataStore request was added to queue", level: "warn", user_id: 1001, player_name: "Shedletsky", trace_id: trace, environment: "production" },
    { message: "Shop opened", level: "info", count: 12, environment: "staging" },
  ];
  const r = await request.post("/api/ingest", { data: { errors }, headers: { "x-api-key": apiKey } });
  expect(r.status()).toBe(200);
  await countersSettled();

  await page.goto("/login");
  await signIn(page);
  await page.goto(`${projectUrl}?timeframe=24h`);
  await expect(page.getByTestId("total-errors")).toHaveText("19");
  await expect(page.getByRole("img", { name: /Occurrences per hour over the last 24h/ })).toBeVisible();
  await expect(page.getByRole("link", { name: /attempt to index nil/ })).toBeVisible();
  await page.screenshot({ path: `${SCREENS}/overview.png`, fullPage: true });

  await page.getByRole("link", { name: "Issues", exact: true }).click();
  await expect(page.getByRole("link", { name: /attempt to index nil with 'Humanoid'/ })).toBeVisible();
  await expect(page.getByRole("link", { name: "DataStore request was added to queue" })).toBeVisible();
  await expect(page.getByRole("link", { name: "Shop opened" })).toBeVisible();
  await expect(page.getByTestId("issue-total")).toHaveText("3 issues");

  // filters work without client JavaScript too: they are a plain GET form
  await page.getByLabel("Level").selectOption("warn");
  await page.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/level=warn/);
  await expect(page.getByText("1 issue", { exact: true })).toBeVisible();
  await expect(page.getByRole("link", { name: "Shop opened" })).toHaveCount(0);

  // bulk triage
  await page.goto(`${projectUrl}/issues`);
  await page.getByRole("checkbox", { name: "Select Shop opened" }).check();
  await page.getByRole("button", { name: "Ignore" }).click();
  await expect(page.getByRole("status")).toHaveText("Ignored 1 issue.");
  await expect(page.getByRole("link", { name: "Shop opened" })).toHaveCount(0);
});

test("the issue page shows the details and resolves the issue", async ({ page }) => {
  await page.goto("/login");
  await signIn(page);
  await page.goto(`${projectUrl}/issues`);
  await page.getByRole("link", { name: /attempt to index nil with 'Humanoid'/ }).click();
  await expect(page.getByTestId("issue-message")).toHaveText("Workspace.Tools.Sword.Handler:42: attempt to index nil with 'Humanoid'");
  await expect(page.getByText("Stack trace").first()).toBeVisible();
  await expect(page.getByRole("img", { name: /per hour over the last 7 days/ })).toBeVisible();
  await expect(page.locator("dl.facts").first()).toContainText("Players affected3");
  await expect(page.getByText("builderman").first()).toBeVisible();
  await page.screenshot({ path: `${SCREENS}/issue-detail.png`, fullPage: true });

  // the trace link leads to every event of the trace, across issues
  await page.getByRole("link", { name: "6f9619ff-8b86-d011-b42d-00cf4fc964ff" }).first().click();
  await expect(page.getByRole("heading", { name: /Trace/ })).toBeVisible();
  await expect(page.getByRole("link", { name: "DataStore request was added to queue" })).toBeVisible();
  await page.goBack();

  await page.getByRole("button", { name: "Resolve" }).click();
  await expect(page.getByRole("status")).toHaveText("Marked resolved.");
  await expect(page.locator(".badge.status-resolved").first()).toBeVisible();
  await expect(page.getByRole("button", { name: "Reopen" })).toBeVisible();

  // share links: one viewer, one editor
  await page.getByLabel("Role").selectOption("viewer");
  await page.getByRole("button", { name: "Create share link" }).click();
  await expect(page.getByTestId("share-url")).toContainText("/share/shr_");
  viewerUrl = (await page.getByTestId("share-url").textContent())!;
  expect(viewerUrl).toMatch(/\/share\/shr_/);
  await page.getByLabel("Role").selectOption("editor");
  await page.getByLabel("Expires").selectOption("");
  await page.getByRole("button", { name: "Create share link" }).click();
  await expect(page.getByTestId("share-url")).not.toHaveText(viewerUrl);
  await expect(page.getByTestId("share-url")).toContainText("/share/shr_");
  editorUrl = (await page.getByTestId("share-url").textContent())!;
  await expect(page.getByRole("button", { name: "Revoke" })).toHaveCount(2);
});

test("a viewer share link opened without an account shows the issue but cannot change it", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(viewerUrl);
  await expect(page.getByRole("heading", { name: /attempt to index nil/ })).toBeVisible();
  await expect(page.getByText("read only")).toBeVisible();
  await expect(page.getByRole("button", { name: /Resolve|Reopen|Ignore/ })).toHaveCount(0);
  await expect(page.locator("body")).not.toContainText("builderman");
  await expect(page.locator("body")).not.toContainText("1000");
  await page.screenshot({ path: `${SCREENS}/share.png`, fullPage: true });
  // the page is public, the dashboard is not
  await page.goto(projectUrl);
  await expect(page).toHaveURL(/\/login/);
  await context.close();
});

test("an editor share link can change the status", async ({ browser }) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(editorUrl);
  await expect(page.getByText("you can change its status")).toBeVisible();
  await expect(page.locator(".badge.status-resolved")).toBeVisible();
  await page.getByRole("button", { name: "Reopen" }).click();
  await expect(page.getByRole("status")).toHaveText("Marked open.");
  await expect(page.locator(".badge.status-open")).toBeVisible();
  await page.getByRole("button", { name: "Resolve" }).click();
  await expect(page.locator(".badge.status-resolved")).toBeVisible();
  await context.close();
});

test("a teammate added by email chooses their own password at first sign-in", async ({ page, browser }) => {
  await page.goto("/login");
  await signIn(page);
  await page.goto(`${projectUrl}/settings`);
  await page.getByLabel("Email").fill("teammate@studio.test");
  await page.getByRole("button", { name: "Add member" }).click();
  const temp = page.getByTestId("temporary-password");
  await expect(temp).toHaveText(/^[A-Za-z0-9_-]{16}$/);
  const temporary = (await temp.textContent())!;

  const context = await browser.newContext();
  const mate = await context.newPage();
  await mate.goto(projectUrl);
  await mate.getByLabel("Email").fill("teammate@studio.test");
  await mate.getByLabel("Password").fill(temporary);
  await mate.getByRole("button", { name: "Sign in" }).click();
  // the dashboard waits until the temporary password is replaced
  await expect(mate).toHaveURL(/\/account$/);
  await expect(mate.getByTestId("must-change-password")).toBeVisible();
  await mate.goto(projectUrl);
  await expect(mate).toHaveURL(/\/account$/);
  await mate.getByLabel("Current password").fill(temporary);
  await mate.getByLabel(/^New password/).fill("password1");
  await mate.getByRole("button", { name: "Change password" }).click();
  await expect(mate.getByRole("alert").filter({ hasText: "most common passwords" })).toBeVisible();
  await mate.getByLabel("Current password").fill(temporary);
  await mate.getByLabel(/^New password/).fill("the teammate's own passphrase");
  await mate.getByRole("button", { name: "Change password" }).click();
  await expect(mate).toHaveURL(/\/projects$/);
  await mate.goto(projectUrl);
  await expect(mate.getByRole("heading", { name: "E2E Obby", exact: true })).toBeVisible();
  await context.close();
});

test("signing out ends the session", async ({ page }) => {
  await page.goto("/login");
  await signIn(page);
  await expect(page).toHaveURL(/\/projects$/);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login$/);
  await page.goto("/projects");
  await expect(page).toHaveURL(/\/login\?next=/);
});
