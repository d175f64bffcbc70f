import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { SCREENS } from "./support/screens.js";

/**
 * The audit log as an owner reads it: from Settings to the project's log, filtered to one family of
 * actions, exported as CSV; and the instance's log for an instance admin. Screenshots at 390 and
 * 1280 px, light and dark.
 */
let owner: { id: string; email: string };
let projectId: string;

async function signIn(page: Page, email: string) {
  expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
}

test.beforeAll(async ({ browser }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql, `audit-owner-${Date.now()}@studio.test`);
  ({ projectId } = await makeProject(sql, owner.id, [], "Audit Game"));
  await sql`update users set instance_admin = true where id = ${owner.id}`;
  await sql.end();
  // a few changes through the Team API, as the dashboard makes them
  const page = await (await browser.newContext()).newPage();
  await signIn(page, owner.email);
  const api = (method: "post" | "patch" | "delete", path: string, data?: unknown) =>
    page.request[method](`/api/team/projects/${projectId}${path}`, { data, headers: { origin: process.env.E2E_BASE_URL!, "content-type": "application/json" } });
  const key = await (await api("post", "/keys", { name: "ci rotation" })).json();
  expect((await api("delete", `/keys/${key.key.id}`)).status()).toBe(200);
  const ch = await (await api("post", "/channels", { name: "Ops Discord", kind: "discord", url: "https://discord.com/api/webhooks/1234567890/SecretDiscordToken" })).json();
  const rule = await (await api("post", "/rules", { name: "New issues", trigger: "new_group", channel_ids: [ch.channel.id] })).json();
  expect((await api("patch", `/rules/${rule.rule.id}`, { enabled: false })).status()).toBe(200);
  const added = await api("post", "/members", { email: `teammate-${Date.now()}@studio.test`, role: "member" });
  expect(added.status()).toBe(201);
  const member = (await added.json()).member;
  expect((await api("patch", `/members/${member.user_id}`, { role: "admin" })).status()).toBe(200);
  expect((await api("post", "/dsn-keys", { name: "web client", rate_limit_per_minute: 600 })).status()).toBe(201);
  expect((await api("patch", "", { name: "Audit Game — Season 2 (a long project name that has to wrap on a phone)" })).status()).toBe(200);
});

test("an owner reads, filters and exports the project's audit log", async ({ page }) => {
  await signIn(page, owner.email);
  await page.goto(`/projects/${projectId}/settings`);
  await page.getByRole("link", { name: "Audit log" }).click();
  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/audit$`));
  const entries = page.getByTestId("audit-entry");
  await expect(entries.first()).toContainText("Project renamed");
  await expect(entries.first()).toContainText(owner.email);
  await expect(entries.filter({ hasText: "API key revoked" })).toHaveCount(1);
  await expect(entries.filter({ hasText: "Alert rule disabled" })).toHaveCount(1);
  // never the webhook URL nor its token
  await expect(page.locator("body")).not.toContainText("SecretDiscordToken");

  await page.getByLabel("Action").selectOption("member");
  await page.getByRole("button", { name: "Filter" }).click();
  await expect(page).toHaveURL(/action=member/);
  await expect(entries).toHaveCount(2);
  expect(await entries.evaluateAll((els) => els.map((e) => e.getAttribute("data-action")))).toEqual(["member.role_changed", "member.added"]);

  const href = await page.getByTestId("audit-csv").getAttribute("href");
  expect(href).toBe(`/api/team/projects/${projectId}/audit?action=member&format=csv`);
  const csv = await (await page.request.get(href!)).text();
  expect(csv.split("\r\n")[0]).toBe("id,at,actor_id,actor_email,action,target,details");
  expect(csv).toContain(",member.role_changed,");
  expect(csv).not.toContain("api_key.");

  // a bad date is a message beside the form, not an error page
  await page.goto(`/projects/${projectId}/audit?from=not-a-date`);
  await expect(page.getByRole("alert")).toContainText("from must be an ISO 8601 date or time");
  await expect(page.getByLabel("Action")).toBeVisible();
});

test("screenshots of the project and instance audit logs", async ({ browser }) => {
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [390, 1280]) {
      const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      await signIn(page, owner.email);
      await page.goto(`/projects/${projectId}/audit`);
      await expect(page.getByTestId("audit-entry").first()).toBeVisible();
      // nothing wider than the screen
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${SCREENS}/audit-project-${width}-${colorScheme}.png`, fullPage: true });
      await page.goto("/instance/audit");
      await expect(page.getByRole("heading", { name: "Instance audit log" })).toBeVisible();
      await expect(page.getByTestId("audit-entry").first()).toBeVisible();
      await page.screenshot({ path: `${SCREENS}/audit-instance-${width}-${colorScheme}.png`, fullPage: true });
      await context.close();
    }
  }
});
