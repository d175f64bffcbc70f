import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { FakeDiscord } from "../test/support/fake-discord.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";

/**
 * An owner adds a Discord channel pointing at a local fake Discord, sends a test alert from the
 * dashboard, and finds it in the delivery log; the saved URL is shown masked.
 */
let discord: FakeDiscord;
test.beforeAll(async () => {
  discord = await new FakeDiscord().start();
});
test.afterAll(async () => {
  await discord?.close();
});

test("create a Discord channel, send a test alert, see it in the delivery log", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId } = await makeProject(sql, user.id, [], "Alerts E2E");
  await sql.end();
  const login = await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } });
  expect(login.status()).toBe(200);

  const url = discord.webhookUrl("123456789", "secret-token-abc");
  await page.goto(`/projects/${projectId}/alerts`);
  await page.getByLabel("Channel name").fill("Discord #alerts");
  await page.getByLabel("Kind").selectOption("discord");
  await page.getByLabel("Webhook URL").fill(url);
  await page.getByRole("button", { name: "Add channel" }).click();
  const row = page.getByTestId("channel-Discord #alerts");
  await expect(row).toBeVisible();
  await expect(row).toContainText("/api/webhooks/123456789/••••••");
  await expect(page.locator("body")).not.toContainText("secret-token-abc");

  await row.getByRole("button", { name: "Send test" }).click();
  await expect(page.getByRole("status")).toContainText("Test alert sent.");
  expect(discord.for(url)).toHaveLength(1);
  expect(discord.for(url)[0].body.embeds[0].title).toContain("Test alert");

  await page.getByRole("link", { name: "Delivery log" }).click();
  const delivery = page.getByTestId("delivery").first();
  await expect(delivery).toContainText("test");
  await expect(delivery).toContainText("sent");
  await expect(delivery).toContainText("204");
  await expect(delivery).toContainText("Discord #alerts");
});

test("create a rule limited to server errors and to issues 3 players had", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId } = await makeProject(sql, user.id, [], "Alerts Rules E2E");
  await sql.end();
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);
  const channel = await page.request.post(`/api/team/projects/${projectId}/channels`, {
    data: { name: "Discord #oncall", kind: "discord", url: discord.webhookUrl() },
  });
  expect(channel.status()).toBe(201);

  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}/alerts`);
    if (width === 390) {
      await page.getByLabel("Rule name").fill("Server pages");
      await page.getByLabel(/Server errors only/).check();
      await page.getByLabel("Minimum players").fill("3");
      await page.getByRole("button", { name: "Create rule" }).click();
      await expect(page.getByRole("status")).toContainText("Rule created.");
    }
    await expect(page.getByRole("row", { name: /Server pages/ })).toContainText("server errors only; 3+ players");
    await page.screenshot({ path: `/tmp/relay-alerts-${width}.png`, fullPage: true });
  }
  const rules = await page.request.get(`/api/team/projects/${projectId}/rules`);
  expect((await rules.json()).data).toEqual([expect.objectContaining({ name: "Server pages", server_only: true, min_players: 3, trigger: "new_group" })]);
});
