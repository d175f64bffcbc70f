import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { FakeDiscord } from "../test/support/fake-discord.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { putEconomyMap } from "../db/economy-maps.js";
import { countersApplied } from "../test/support/counters.js";
import { COINS_GEMS_MAP, coinsGemsPlayer } from "../test/support/economy-maps.js";
import { SCREENS } from "./support/screens.js";

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
    await page.screenshot({ path: `${SCREENS}/relay-alerts-${width}.png`, fullPage: true });
  }
  const rules = await page.request.get(`/api/team/projects/${projectId}/rules`);
  expect((await rules.json()).data).toEqual([expect.objectContaining({ name: "Server pages", server_only: true, min_players: 3, trigger: "new_group" })]);
});

test("economy rules: the form shows each economy trigger's fields, at 390 and 1280 px", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "Economy Alerts E2E");
  await putEconomyMap(sql, projectId, COINS_GEMS_MAP, null);
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);
  const channel = await page.request.post(`/api/team/projects/${projectId}/channels`, {
    data: { name: "Discord #economy", kind: "discord", url: discord.webhookUrl() },
  });
  expect(channel.status()).toBe(201);

  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}/alerts`);
    const trigger = page.getByLabel("Trigger");
    if (width === 390) {
      await page.getByLabel("Rule name").fill("Gem dupes");
      await trigger.selectOption("economy_anomaly");
      // the error filters do not apply to the economy
      await expect(page.getByLabel(/Server errors only/)).toBeHidden();
      await expect(page.getByTestId("rule-create-environments")).toBeHidden();
      await expect(page.getByLabel("Cooldown minutes")).toBeHidden();
      await expect(page.getByLabel("Currency")).toContainText("Any currency");
      await page.getByLabel("Currency").selectOption("gems");
      await page.getByLabel("Minimum amount").fill("1,000");
      await expect(page.getByTestId("economy-rule-help")).toContainText("naming the player and the jump");
      await page.screenshot({ path: `${SCREENS}/economy-alert-form-${width}.png`, fullPage: true });
      await page.getByRole("button", { name: "Create rule" }).click();
      await expect(page.getByRole("status")).toContainText("Rule created.");
    } else {
      await page.getByLabel("Rule name").fill("Inflation");
      await trigger.selectOption("supply_growth");
      await expect(page.getByLabel("Minimum amount")).toHaveCount(0);
      await expect(page.getByLabel("Currency")).toContainText("Each currency");
      await page.getByLabel("Growth percent").fill("25");
      await page.screenshot({ path: `${SCREENS}/economy-alert-form-${width}.png`, fullPage: true });
      await page.getByRole("button", { name: "Create rule" }).click();
      await expect(page.getByRole("status")).toContainText("Rule created.");
      await expect(page.getByRole("row", { name: /Inflation/ })).toContainText("Money supply growth: more than 25% a day, each currency");
    }
    await expect(page.getByRole("row", { name: /Gem dupes/ })).toContainText("Economy anomaly: Gems, at least 1,000");
    await page.screenshot({ path: `${SCREENS}/economy-alert-rules-${width}.png`, fullPage: true });
  }
  const rules = (await (await page.request.get(`/api/team/projects/${projectId}/rules`)).json()).data;
  expect(rules).toEqual([
    expect.objectContaining({ name: "Gem dupes", trigger: "economy_anomaly", currency: "gems", min_amount: "1000", levels: [] }),
    expect.objectContaining({ name: "Inflation", trigger: "supply_growth", currency: null, growth_pct: 25 }),
  ]);

  // the delivery log names what an economy alert was about (this server runs no jobs: the row is
  // written as the evaluation writes it, for a rise a push made)
  const push = (gems: number) =>
    page.request.post("/api/economy/ingest", { headers: { "x-api-key": apiKey }, data: { players: [coinsGemsPlayer(77, { coins: 1, gems })] } });
  expect((await push(40)).status()).toBe(200);
  expect((await push(5_000_000)).status()).toBe(200);
  await sql`insert into alert_deliveries (project_id, rule_id, channel_id, subject, trigger, status, response_code, attempts)
    select ${projectId}, ${rules[0].id}, ${channel.ok() ? (await channel.json()).channel.id : null}, 'rise:' || id, 'economy_anomaly', 'sent', 204, 1
    from economy_rises where project_id = ${projectId} and user_id = 77`;
  await sql.end();
  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}/deliveries`);
    await expect(page.getByTestId("delivery-subject")).toContainText("Anomaly (rise");
    await expect(page.getByTestId("delivery-subject").getByRole("link", { name: "player 77" })).toHaveAttribute("href", `/projects/${projectId}/economy/players/77`);
    await page.screenshot({ path: `${SCREENS}/economy-deliveries-${width}.png`, fullPage: true });
  }
});

test("edit a rule: every field labelled, environments picked from the data, state when its channel is off, trigger names in the log, at 390 and 1280 px", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "Alerts Edit E2E");
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);
  const ingest = await page.request.post("/api/ingest", {
    headers: { "x-api-key": apiKey },
    data: { errors: [{ message: "Shop broke", environment: "production" }, { message: "Shop broke in staging", environment: "staging" }] },
  });
  expect(ingest.status()).toBe(200);
  // the issues' environments are counted shortly after the write
  await countersApplied(sql);
  await sql.end();
  const url = discord.webhookUrl();
  const channel = await page.request.post(`/api/team/projects/${projectId}/channels`, { data: { name: "Discord #oncall", kind: "discord", url } });
  const channelId = (await channel.json()).channel.id;
  const created = await page.request.post(`/api/team/projects/${projectId}/rules`, {
    data: { name: "Prod issues", trigger: "new_group", environments: ["production"], channel_ids: [channelId] },
  });
  expect(created.status()).toBe(201);

  await page.setViewportSize({ width: 390, height: 900 });
  await page.goto(`/projects/${projectId}/alerts`);
  // visible labels, not placeholders: the label's text is on the page next to its box
  const create = page.locator("form").filter({ has: page.getByRole("button", { name: "Create rule" }) });
  for (const label of ["Rule name", "Trigger", "Message contains", "Other environments", "Cooldown (minutes)"]) {
    await expect(create.locator("label").filter({ hasText: label }).first()).toBeVisible();
  }
  // the environments the project's data has seen are a pick-list
  const picker = page.getByTestId("rule-create-environments");
  await expect(picker.getByRole("checkbox", { name: "production" })).toBeVisible();
  await expect(picker.getByRole("checkbox", { name: "staging" })).toBeVisible();

  await page.getByRole("link", { name: "Edit the rule Prod issues" }).click();
  const edit = page.getByTestId("rule-edit-form");
  await expect(edit).toContainText('Edit the rule "Prod issues"');
  await expect(edit.getByLabel("Rule name")).toHaveValue("Prod issues");
  await expect(edit.getByRole("checkbox", { name: "production" })).toBeChecked();
  await edit.getByLabel("Rule name").fill("Prod and staging issues");
  await edit.getByRole("checkbox", { name: "staging" }).check();
  await edit.getByLabel("Other environments").fill("beta");
  await edit.getByRole("checkbox", { name: "warn" }).check();
  await page.screenshot({ path: `${SCREENS}/alerts-rule-edit-390.png`, fullPage: true });
  await edit.getByRole("button", { name: "Save rule" }).click();
  await expect(page.getByRole("status")).toContainText('Rule "Prod and staging issues" saved.');
  await expect(page.getByTestId("rule-edit-form")).toHaveCount(0);
  const row = page.getByTestId("rule-Prod and staging issues");
  await expect(row).toContainText("levels: warn; env: production, staging, beta");
  await expect(row.getByTestId("rule-state")).toHaveText("enabled");

  // its only channel off: the rule says it sends nothing
  await page.getByTestId("channel-Discord #oncall").getByRole("button", { name: "Disable" }).click();
  await expect(page.getByRole("status")).toContainText("Channel disabled.");
  await expect(row.getByTestId("rule-state")).toHaveText("enabled — no active channel");
  await page.getByTestId("channel-Discord #oncall").getByRole("button", { name: "Enable" }).click();
  await expect(row.getByTestId("rule-state")).toHaveText("enabled");

  // an email channel: recipients instead of a URL, a test send logged with the SMTP reply
  await page.getByLabel("Channel name").last().fill("Email on-call");
  await page.getByLabel("Kind").selectOption("email");
  await page.getByLabel("Recipients").fill("oncall@example.com, lead@example.com");
  await page.getByRole("button", { name: "Add channel" }).click();
  const email = page.getByTestId("channel-Email on-call");
  await expect(email).toContainText("oncall@example.com, lead@example.com");
  await email.getByRole("button", { name: "Send test" }).click();
  await expect(page.getByRole("status")).toContainText("Test alert sent.");

  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}/alerts?edit=${(await created.json()).rule.id}`);
    await expect(page.getByTestId("rule-edit-form")).toBeVisible();
    await page.screenshot({ path: `${SCREENS}/alerts-rules-${width}.png`, fullPage: true });
    await page.goto(`/projects/${projectId}/deliveries`);
    // the Alerts tab is the highlighted one, and the trigger reads as people say it
    await expect(page.locator("nav.tabs a.active")).toHaveText("Alerts");
    await expect(page.getByTestId("delivery-trigger").first()).toHaveText("Test alert");
    await expect(page.getByTestId("delivery").first()).toContainText("250");
    await page.screenshot({ path: `${SCREENS}/alerts-deliveries-${width}.png`, fullPage: true });
  }
});

test.describe("health rules without JavaScript", () => {
  test.use({ javaScriptEnabled: false });

  test("create a health rule, see a 400 named, and edit the rule, at 390 and 1280 px", async ({ page }) => {
    const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
    const user = await makeUser(sql);
    const { projectId } = await makeProject(sql, user.id, [], "Health Alerts E2E");
    await sql.end();
    expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);
    const channel = await page.request.post(`/api/team/projects/${projectId}/channels`, {
      data: { name: "Discord #health", kind: "discord", url: discord.webhookUrl() },
    });
    expect(channel.status()).toBe(201);

    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(`/projects/${projectId}/alerts`);
    const form = page.getByTestId("health-rule-form");
    await form.locator("summary").click();
    // a memory rule without its threshold: the answer names the field, and nothing is written
    await page.getByLabel("Health alert name").fill("Leaking servers");
    await page.getByLabel("Health condition").selectOption("server_memory");
    await page.getByRole("button", { name: "Create health rule" }).click();
    await expect(page.getByRole("alert")).toContainText("memory_mb");
    expect((await (await page.request.get(`/api/team/projects/${projectId}/rules`)).json()).data).toHaveLength(0);

    await page.getByLabel("Health alert name").fill("Leaking servers");
    await page.getByLabel("Health condition").selectOption("server_memory");
    await page.getByLabel("Threshold", { exact: true }).fill("2500");
    await page.getByLabel("Minutes", { exact: true }).fill("10");
    await page.getByRole("button", { name: "Create health rule" }).click();
    const row = page.getByRole("row", { name: /Leaking servers/ });
    await expect(row).toContainText("a server above 2,500 MB for 10 min");

    await row.locator("summary").click();
    const edit = page.getByTestId("health-rule-edit-Leaking servers");
    await edit.getByLabel("Threshold", { exact: true }).fill("3000");
    await edit.getByRole("button", { name: "Save" }).click();
    await expect(page.getByRole("status")).toContainText("Health rule updated.");
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`/projects/${projectId}/alerts`);
      await expect(page.getByRole("row", { name: /Leaking servers/ })).toContainText("a server above 3,000 MB for 10 min");
      await page.getByTestId("health-rule-form").locator("summary").click();
      await page.screenshot({ path: `${SCREENS}/health-alert-rules-${width}.png`, fullPage: true });
    }
    const rules = (await (await page.request.get(`/api/team/projects/${projectId}/rules`)).json()).data;
    expect(rules).toEqual([expect.objectContaining({ name: "Leaking servers", trigger: "server_memory", memory_mb: 3000, window_minutes: 10, cooldown_minutes: 30 })]);
  });
});
