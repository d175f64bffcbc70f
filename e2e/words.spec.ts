import { expect, test, type Page } from "@playwright/test";
import { startFreshServer } from "./support/fresh-server";
import { SCREENS } from "./support/screens.js";

/**
 * A new studio's first hour in the words it would use, on a server of its own (first run, and
 * WEBHOOK_ALLOW_PRIVATE unset as in production): setup errors name the field, the new key comes with
 * the server Script filled in and Copy buttons, the onboarding heading follows the first event, a
 * loopback DSN is flagged, the alerts form labels its boxes and names its triggers, and a local
 * webhook is refused with the variable that allows it.
 */
const EMAIL = "studio@example.test";
const PASSWORD = "a long first password";

let server: { url: string; close: () => Promise<void> };
let projectPath: string;
let apiKey: string;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  server = await startFreshServer();
});
test.afterAll(async () => {
  await server?.close();
});

async function signIn(page: Page) {
  expect((await page.request.post(`${server.url}/api/auth/login`, { data: { email: EMAIL, password: PASSWORD } })).status()).toBe(200);
}

async function shoot(page: Page, name: string) {
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.screenshot({ path: `${SCREENS}/words-${name}-${width}.png`, fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBeLessThanOrEqual(width);
  }
}

test("setup names the field in plain words; the new key page gives the Luau script with the key and Copy buttons", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await page.goto(`${server.url}/setup`);
  await page.getByLabel("Email").fill(EMAIL);
  await page.getByLabel("Password (at least 8 characters, not a common one)").fill("12345678");
  await page.getByLabel("Repeat the password").fill("12345678");
  await page.getByRole("button", { name: "Create account" }).click();
  const refused = page.getByRole("alert");
  await expect(refused).toHaveText("Password is one of the most common passwords; choose another.");
  await shoot(page, "setup-error");

  await page.getByLabel("Password (at least 8 characters, not a common one)").fill(PASSWORD);
  await page.getByLabel("Repeat the password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page).toHaveURL(/\/projects\/new$/);
  await page.getByLabel("Name").fill("Words Obby");
  await page.getByRole("button", { name: "Create project" }).click();

  apiKey = (await page.getByTestId("api-key").textContent())!;
  expect(apiKey).toMatch(/^rbx_[A-Za-z0-9_-]{32}$/);
  const script = page.getByTestId("new-key-script");
  await expect(script).toContainText(`apiKey = "${apiKey}"`);
  await expect(script).toContainText(`url = "${server.url}"`);
  await expect(script).toContainText("sendInStudio = true");
  await expect(page.locator("body")).not.toContainText("curl");
  // the server listens on loopback: the page says Roblox cannot reach it
  await expect(page.getByTestId("url-warning")).toContainText("loopback");

  const copyScript = page.getByRole("button", { name: "Copy the server script" });
  await copyScript.click();
  await expect(copyScript).toHaveText("Copied");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain(`apiKey = "${apiKey}"`);
  expect(copied).toContain("sendInStudio = true");
  await page.getByRole("button", { name: "Copy the API key" }).click();
  await expect(page.getByRole("button", { name: "Copy the API key" })).toHaveText("Copied");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
  await shoot(page, "new-key");

  await page.getByRole("link", { name: "Open the project" }).click();
  await expect(page).toHaveURL(/\/projects\/[0-9a-f-]{36}$/);
  projectPath = new URL(page.url()).pathname;
});

test("without the clipboard API (plain http on a LAN address) the Copy button still copies", async ({ page }) => {
  await page.addInitScript(() => {
    Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined });
    // record what the old copy command copies
    document.addEventListener("copy", () => {
      (window as unknown as { copiedText: string }).copiedText = String(document.getSelection() ?? "") ||
        ((document.activeElement as HTMLTextAreaElement | null)?.value ?? "");
    });
  });
  await signIn(page);
  await page.goto(`${server.url}${projectPath}`);
  const copy = page.getByRole("button", { name: "Copy the server script" });
  await copy.click();
  await expect(copy).toHaveText("Copied");
  expect(await page.evaluate(() => (window as unknown as { copiedText: string }).copiedText)).toContain("sendInStudio = true");
});

test("after the first event the onboarding heading no longer says there are none", async ({ page, request }) => {
  await signIn(page);
  await page.goto(`${server.url}${projectPath}`);
  const heading = page.getByTestId("onboarding").getByRole("heading");
  await expect(heading).toHaveText("No events yet: send them from Roblox");
  await expect(page.getByTestId("server-script")).toContainText("sendInStudio = true");
  await shoot(page, "onboarding-waiting");

  const sent = await request.post(`${server.url}/api/ingest`, {
    headers: { "x-api-key": apiKey },
    data: { message: "ServerScriptService.Round:12: attempt to index nil with 'Character'", stack_trace: "ServerScriptService.Round:12", game_version: "7" },
  });
  expect(sent.status()).toBe(200);
  await expect(page.getByTestId("first-event").getByRole("link", { name: "open the first issue" })).toBeVisible({ timeout: 15_000 });
  await expect(heading).toHaveText("Roblox is sending events");
  await expect(page.getByTestId("onboarding")).not.toContainText("No events yet");
  await shoot(page, "onboarding-first-event");
});

test("one issue is 'the 1 issue'; an issue's count is its occurrences; the tab says Release health", async ({ page }) => {
  await signIn(page);
  await page.goto(`${server.url}${projectPath}/issues?confirm=resolved`);
  await expect(page.getByRole("alertdialog")).toContainText("Resolve the 1 issue matching these filters?");
  await expect(page.getByRole("button", { name: "Resolve 1 issue" })).toBeVisible();
  await expect(page.getByTestId("issue-total")).toHaveText("1 issue");
  await expect(page.getByRole("columnheader", { name: "Occurrences" })).toBeVisible();
  await shoot(page, "issues-confirm");
  await page.getByRole("link", { name: "Release health" }).click();
  await expect(page).toHaveTitle(/^Release health/);
  await expect(page.getByTestId("releases")).toContainText("7");
  await shoot(page, "versions");
});

test("the DSN and a key made in Settings: loopback flagged, script filled in", async ({ page, context }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await signIn(page);
  await page.goto(`${server.url}${projectPath}/settings`);
  await page.getByLabel("DSN name").fill("web");
  await page.getByRole("button", { name: "Create DSN" }).click();
  await expect(page.getByTestId("dsn")).toContainText("@127.0.0.1");
  await expect(page.getByTestId("dsn-warning")).toContainText("loopback");
  await page.getByLabel("Key name").fill("second");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.getByTestId("api-key").textContent())!;
  await expect(page.getByTestId("new-key-script")).toContainText(`apiKey = "${key}"`);
  await page.getByRole("button", { name: "Copy the server script" }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toContain(`apiKey = "${key}"`);
  await shoot(page, "settings");
});

test("alerts: URL example follows the kind, labelled cooldown and levels, triggers by name, a local webhook refused with the way to allow it", async ({ page }) => {
  await signIn(page);
  await page.goto(`${server.url}${projectPath}/alerts`);
  const url = page.getByLabel("Webhook URL");
  await expect(url).toHaveAttribute("placeholder", /discord\.com\/api\/webhooks/);
  await page.getByLabel("Kind").selectOption("webhook");
  await expect(url).toHaveAttribute("placeholder", "https://example.com/alerts");
  await expect(page.getByLabel("Secret")).toBeVisible();
  await page.getByLabel("Kind").selectOption("slack");
  await expect(url).toHaveAttribute("placeholder", /hooks\.slack\.com/);
  await expect(page.getByLabel("Secret")).toHaveCount(0);

  await page.getByLabel("Channel name").fill("local receiver");
  await page.getByLabel("Kind").selectOption("webhook");
  await url.fill("http://127.0.0.1:8080/hook");
  await page.getByRole("button", { name: "Add channel" }).click();
  const refused = page.getByRole("alert");
  await expect(refused).toContainText("url must be an https URL.");
  await expect(refused).toContainText("WEBHOOK_ALLOW_PRIVATE=true");
  await shoot(page, "alerts-refused");

  await page.getByLabel("Channel name").fill("#errors");
  await page.getByLabel("Kind").selectOption("discord");
  await url.fill("https://discord.com/api/webhooks/1/abc");
  await page.getByRole("button", { name: "Add channel" }).click();
  await expect(page.getByTestId("channel-#errors").getByRole("cell", { name: "Discord", exact: true })).toBeVisible();

  // visible labels, not only accessible names
  const ruleForm = page.locator("form").filter({ has: page.getByRole("button", { name: "Create rule" }) });
  await expect(ruleForm.locator("label").filter({ has: page.getByLabel("Cooldown minutes") })).toContainText("Cooldown");
  await expect(page.getByLabel("Cooldown minutes")).toHaveValue("30");
  await expect(ruleForm.getByRole("group", { name: "Levels (all if none ticked)" })).toBeVisible();
  await expect(ruleForm.getByText("Levels (all if none ticked)")).toBeVisible();
  await expect(ruleForm.getByText("Send to")).toBeVisible();
  const options = await page.getByLabel("Trigger").locator("option").allTextContents();
  expect(options.map((o) => o.split(":")[0])).toEqual(["New issue", "Regression", "Spike", "Economy anomaly", "Money supply growth"]);

  for (const [name, trigger, cell] of [["New ones", "new_group", "New issue"], ["Comebacks", "regression", "Regression"], ["Storms", "frequency", "Spike: 50 in 5 min"]] as const) {
    await page.getByLabel("Rule name").fill(name);
    await page.getByLabel("Trigger").selectOption(trigger);
    if (trigger === "frequency") {
      await page.getByLabel("Threshold count").fill("50");
      await page.getByLabel("Window minutes").fill("5");
    }
    await page.getByRole("button", { name: "Create rule" }).click();
    await expect(page.getByRole("status")).toContainText("Rule created.");
    await expect(page.getByRole("row", { name: new RegExp(name) }).getByRole("cell", { name: cell, exact: true })).toBeVisible();
  }
  await expect(page.locator("body")).not.toContainText("new_group");
  await expect(page.locator("body")).not.toContainText("new group");
  // the API keeps its values
  const rules = await page.request.get(`${server.url}/api/team${projectPath}/rules`);
  expect(((await rules.json()).data as { trigger: string }[]).map((r) => r.trigger).sort()).toEqual(["frequency", "new_group", "regression"]);
  await shoot(page, "alerts");
});
