import { expect, test } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";

/** The economy overview and a player page, in a real browser, over data pushed through the API. */
const PASSWORD = "correct horse battery";
let projectId: string;
let email: string;

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  email = `econ-${randomBytes(4).toString("hex")}@example.test`;
  const user = await createUser(sql, { email, password: PASSWORD });
  const created = await createProject(sql, { id: user.id, email }, { name: "Economy E2E" });
  projectId = created.project.id;
  await sql.end();
  const push = (players: unknown[]) =>
    request.post("/api/economy/ingest", { headers: { "x-api-key": created.api_key }, data: { players } });
  const profile = (name: string, cash: number, bank: number) => ({ RPCharacterOne: { Name: name, Cash: cash, InATM: bank, DarkCoin: 1 } });
  expect((await push([
    { user_id: 501, username: "alice_rp", display_name: "Alice", profile: profile("Alice Vale", 100, 1000) },
    { user_id: 502, username: "bob", profile: profile("Bob Stone", 50, 25) },
    { user_id: 503, profile: profile("Cara", 2500, 0) },
  ])).status()).toBe(200);
  // Bob duplicates money: 76 -> 5,000,076
  expect((await push([{ user_id: 502, username: "bob", profile: profile("Bob Stone", 5_000_050, 25) }])).status()).toBe(200);
});

test("economy overview and player page", async ({ page }) => {
  const login = await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } });
  expect(login.status()).toBe(200);

  await page.goto(`/projects/${projectId}/economy`);
  await expect(page.getByRole("heading", { name: "Economy", exact: true })).toBeVisible();
  await expect(page.getByTestId("player-count")).toHaveText("3");
  await expect(page.getByTestId("money-supply")).toHaveText("5,003,678");
  await expect(page.getByRole("img", { name: "Money supply per day" })).toBeVisible();
  await expect(page.getByRole("img", { name: "Wealth histogram" })).toBeVisible();
  const top = page.getByTestId("top-players");
  await expect(top.locator("tbody tr")).toHaveCount(3);
  await expect(top.locator("tbody tr").first()).toContainText("bob");
  await expect(page.getByTestId("anomalies")).toContainText("5,000,076");

  await page.getByRole("searchbox", { name: "Search players" }).fill("alice");
  await page.getByRole("button", { name: "Search" }).click();
  const results = page.getByTestId("search-results");
  await expect(results.locator("tbody tr")).toHaveCount(1);
  await results.getByRole("link", { name: "Alice" }).click();

  await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/economy/players/501$`));
  await expect(page.getByTestId("player-name")).toHaveText("Alice");
  await expect(page.getByTestId("player-total")).toHaveText("1,101");
  await expect(page.getByRole("img", { name: "Balance history" })).toBeVisible();
  await expect(page.getByTestId("history").locator("tbody tr")).toHaveCount(1);

  await page.goto(`/projects/${projectId}/economy/players/502`);
  await expect(page.getByTestId("history").locator("tbody tr")).toHaveCount(2);
});

test("economy settings store the Open Cloud key without ever showing it", async ({ page }) => {
  expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
  await page.goto(`/projects/${projectId}/economy/settings`);
  await expect(page.getByTestId("key-status")).toHaveText("No key stored.");
  await page.getByLabel("API key").fill("oc-secret-key-value-wxyz");
  await page.getByLabel("Universe id").fill("4815162342");
  await page.getByLabel("Data store name").fill("PlayerData");
  await page.getByRole("button", { name: "Save key" }).click();
  await expect(page.getByRole("status")).toHaveText("The Open Cloud key is saved (encrypted).");
  await expect(page.getByTestId("key-status")).toContainText("…wxyz for universe 4815162342");
  expect(await page.content()).not.toContain("oc-secret-key-value");
  await expect(page.getByRole("button", { name: "Start scan" })).toBeEnabled();
});
