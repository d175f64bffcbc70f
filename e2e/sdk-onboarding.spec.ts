import { expect, test } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";
import { SCREENS } from "./support/screens.js";

/**
 * A new project's overview shows how to install the Roblox SDK: a ready-to-paste server Script
 * with the service URL (flagged, since this server listens on loopback), the HTTP step, a copy
 * button, and a waiting indicator that becomes a link to the first issue when an event arrives.
 */
const PASSWORD = "correct horse battery";
let projectId: string;
let apiKey: string;
let email: string;

test.beforeAll(async () => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  email = `sdk-${randomBytes(4).toString("hex")}@example.test`;
  const user = await createUser(sql, { email, password: PASSWORD });
  const created = await createProject(sql, { id: user.id, email }, { name: "SDK Onboarding" });
  projectId = created.project.id;
  apiKey = created.api_key;
  await sql.end();
});

for (const width of [390, 1280]) {
  test(`onboarding panel at ${width} px`, async ({ page, baseURL }) => {
    await page.setViewportSize({ width, height: 900 });
    expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
    await page.goto(`/projects/${projectId}`);
    const panel = page.getByTestId("onboarding");
    await expect(panel).toBeVisible();
    await expect(panel.getByText("Allow HTTP Requests")).toBeVisible();
    await expect(page.getByTestId("server-script")).toContainText(`url = "${baseURL}"`);
    await expect(page.getByTestId("server-script")).toContainText(`apiKey = "YOUR_API_KEY"`);
    await expect(page.getByTestId("url-warning")).toContainText("loopback");
    await expect(page.getByTestId("first-event")).toContainText("Waiting for the first event");
    await expect(panel.getByRole("link", { name: "download RobloxMonitor.luau" })).toHaveAttribute("href", "/sdk/RobloxMonitor.luau");
    // the panel fits the screen; long script lines scroll inside their own box
    const box = (await panel.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(width);
    expect(await panel.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
    await page.screenshot({ path: `${SCREENS}/onboarding-${width}.png`, fullPage: true });
  });
}

test("the copy button copies the script, and the first event turns the indicator into a link", async ({ page, context, request, baseURL }) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
  await page.goto(`/projects/${projectId}`);
  await page.getByRole("button", { name: "Copy the server script" }).click();
  await expect(page.getByRole("button", { name: "Copy the server script" })).toHaveText("Copied");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain(`url = "${baseURL}"`);
  expect(copied).toContain(`require(ReplicatedStorage:WaitForChild("RobloxMonitor"))`);

  const sdk = await request.get("/sdk/RobloxMonitor.luau");
  expect(sdk.status()).toBe(200);
  expect(await sdk.text()).toContain("RobloxMonitor");

  const sent = await request.post("/api/ingest", {
    headers: { "x-api-key": apiKey },
    data: { message: "ServerScriptService.Main:3: first error from Roblox", stack_trace: "ServerScriptService.Main:3" },
  });
  expect(sent.status()).toBe(200);
  const link = page.getByTestId("first-event").getByRole("link", { name: "open the first issue" });
  await expect(link).toBeVisible({ timeout: 15_000 });
  await page.screenshot({ path: `${SCREENS}/onboarding-first-event.png`, fullPage: true });
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/issues/[0-9a-f-]{36}$`));
  await expect(page.getByText("first error from Roblox").first()).toBeVisible();
});
