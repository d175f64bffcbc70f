import { expect, test } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";
import { SCREENS } from "./support/screens.js";

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
  // the seed's map: a card per currency, each a link to that currency's view
  await expect(page.getByTestId("card-cash")).toContainText("Cash");
  await expect(page.getByTestId("card-bank")).toContainText("Bank");
  await expect(page.getByTestId("card-dark_coin")).toContainText("Dark coin");
  await expect(page.getByRole("img", { name: "Money supply per day" })).toBeVisible();
  await expect(page.getByRole("img", { name: "Wealth histogram" })).toBeVisible();
  const top = page.getByTestId("top-players");
  await expect(top.locator("tbody tr")).toHaveCount(3);
  await expect(top.locator("tbody tr").first()).toContainText("bob");
  // found in Cash on its own (50 -> 5,000,050), named, under the default threshold (too few rises to learn from yet)
  const anomaly = page.getByTestId("anomalies").locator("tbody tr");
  await expect(anomaly).toHaveCount(1);
  await expect(anomaly).toContainText("Cash");
  await expect(anomaly).toContainText("5,000,050");
  await expect(page.getByTestId("anomaly-thresholds")).toContainText("Cash over 10× and +2,500 (default)");

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

/** The overview of a Coins/Gems game per currency, at a phone's and a desktop's width. */
test.describe("economy overview per currency", () => {
  let coinsProject: string;
  test.beforeAll(async () => {
    const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
    const owner = await sql<{ id: string }[]>`select id::text as id from users where email = ${email}`;
    const created = await createProject(sql, { id: owner[0].id, email }, { name: "Coins and Gems" });
    coinsProject = created.project.id;
    await sql`insert into economy_maps (project_id, map) values (${coinsProject}, ${sql.json({
      currencies: [
        { key: "coins", name: "Coins", paths: ["Data.Wallet.Coins"] },
        { key: "gems", name: "Gems", paths: ["Data.Wallet.Gems"] },
      ],
      names: [],
      data_code: null,
      match: ["Data"],
    })})`;
    // twelve players observed over six weeks (history rows, one statement each, in order); on the last
    // day player 7 dupes gems
    const latest = new Map<number, { coins: number; gems: number; day: number }>();
    const firstDay = new Map<number, number>();
    for (let day = 42; day >= 0; day -= 3) {
      for (let user = 1; user <= 12; user++) {
        if (user > 8 && day > 12) continue; // four newcomers in the last two weeks
        const prev = latest.get(user) ?? { coins: 0, gems: 0, day };
        const coins = Math.max(0, prev.coins + ((user * 37 + day * 11) % 900) - (day % 2 ? 380 : 120));
        const gems = user === 7 && day === 0 ? 2_500_000 : prev.gems + ((user + day) % 5);
        const balances = { coins: String(coins), gems: String(gems) };
        await sql`insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source)
          values (${coinsProject}, ${user}, 0, 0, 0, ${coins + gems}, ${sql.json(balances)},
            date_trunc('day', now(), 'UTC') - make_interval(days => ${day}) + make_interval(secs => ${user}), 'push')`;
        latest.set(user, { coins, gems, day });
        if (!firstDay.has(user)) firstDay.set(user, day);
      }
    }
    for (const [user, l] of latest) {
      const at = sql`date_trunc('day', now(), 'UTC') - make_interval(days => ${l.day}) + make_interval(secs => ${user})`;
      await sql`insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
          history_observed_at, first_observed_at, username)
        values (${coinsProject}, ${user}, 0, 0, 0, ${l.coins + l.gems}, ${sql.json({ coins: String(l.coins), gems: String(l.gems) })},
          ${at}, 'push', ${at}, date_trunc('day', now(), 'UTC') - make_interval(days => ${firstDay.get(user)!}), ${`gamer_${user}`})`;
    }
    await sql.end();
  });

  /** Cards per row, by their top edge. */
  const cardRows = async (page: import("@playwright/test").Page) => {
    const tops = await page.locator(".even-cards > .card").evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
    const rows = new Map<number, number>();
    for (const t of tops) rows.set(t, (rows.get(t) ?? 0) + 1);
    return [...rows.values()];
  };

  for (const width of [390, 1280]) {
    test(`switches currency, cards wrap evenly at ${width} px`, async ({ page }) => {
      await page.setViewportSize({ width, height: 900 });
      expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
      await page.goto(`/projects/${coinsProject}/economy`);
      await expect(page.getByTestId("player-count")).toHaveText("12");
      await expect(page.getByTestId("card-coins")).toContainText("Coins");
      await expect(page.getByTestId("card-gems")).toContainText("Gems");
      await expect(page.getByTestId("card-dark_coin")).toHaveCount(0);
      const rows = await cardRows(page);
      expect(rows.reduce((a, b) => a + b, 0)).toBe(9);
      expect(rows.every((n) => n > 1), `cards per row: ${rows.join(", ")}`).toBe(true);
      const top = page.getByTestId("top-players");
      await expect(top.locator("thead th")).toHaveText(["Player", "User id", "Coins", "Gems", "Total"]);
      await expect(page.getByRole("img", { name: "Gained and lost per day" })).toBeVisible();
      // nothing scrolls the page sideways
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `${SCREENS}/economy-overview-total-${width}.png`, fullPage: true });
      // all currencies by default: the gems dupe is listed and named although the view is of the total
      const dupe = page.getByTestId("anomalies").locator("tbody tr", { hasText: "gamer_7" });
      await expect(dupe).toContainText("Gems");
      await expect(dupe).toContainText("2,500,000");
      await expect(page.getByTestId("anomaly-thresholds")).toContainText(/Gems over [\d.]+× and \+[\d,]+ \(learned from \d+ rises\)/);
      await page.getByTestId("anomalies-panel").screenshot({ path: `${SCREENS}/economy-anomalies-${width}.png` });
      await page.locator(".even-cards").screenshot({ path: `${SCREENS}/economy-cards-${width}.png` });
      await page.locator("section.panel", { has: page.getByRole("img", { name: "Gained and lost per day" }) }).screenshot({ path: `${SCREENS}/economy-flow-${width}.png` });

      await page.getByTestId("currency-gems").click();
      await expect(page).toHaveURL(/\?currency=gems$/);
      await expect(page.getByTestId("currency-gems")).toHaveAttribute("aria-current", "page");
      await expect(page.getByTestId("card-gems")).toHaveAttribute("aria-current", "true");
      await expect(top.locator("tbody tr").first()).toContainText("gamer_7");
      // the same list whichever currency the page shows
      await expect(page.getByTestId("anomalies").locator("tbody tr", { hasText: "gamer_7" })).toContainText("2,500,000");
      await expect(page.getByTestId("card-newcomers").locator(".value")).toHaveText("4");
      await page.screenshot({ path: `${SCREENS}/economy-overview-gems-${width}.png`, fullPage: true });
    });

    test(`settings show each currency's learned threshold and take an override at ${width} px`, async ({ page }) => {
      await page.setViewportSize({ width, height: 900 });
      expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
      await page.goto(`/projects/${coinsProject}/economy/settings`);
      const section = page.getByTestId("thresholds");
      await expect(section.getByRole("heading", { name: "Anomaly thresholds" })).toBeVisible();
      await expect(page.getByTestId("threshold-learned-gems")).toContainText(/Learned: over [\d.]+× and by more than [\d,]+, from \d+ rises of the last 30 days/);
      await expect(page.getByTestId("threshold-effective-gems")).toContainText("(learned)");
      // an override of the coins minimum, saved through the form
      const coins = page.getByTestId("threshold-coins");
      await coins.getByLabel("Minimum rise").fill(`${width}000`);
      await coins.getByRole("button", { name: "Save" }).click();
      await expect(page.getByRole("status")).toHaveText("Coins: the threshold is saved.");
      await expect(page.getByTestId("threshold-effective-coins")).toContainText(`by more than ${(width * 1000).toLocaleString("en-US")}`);
      await expect(page.getByTestId("threshold-effective-coins")).toContainText("(overridden here)");
      // a bad factor is refused beside its field, and nothing is saved
      await coins.getByLabel("Factor").fill("1");
      await coins.getByRole("button", { name: "Save" }).click();
      await expect(coins.getByRole("alert")).toHaveText("Factor must be greater than 1");
      await expect(page.getByTestId("threshold-effective-coins")).toContainText("(overridden here)");
      expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
      await section.screenshot({ path: `${SCREENS}/economy-thresholds-${width}.png` });
      await coins.getByRole("button", { name: "Back to learned" }).click();
      await expect(page.getByRole("status")).toContainText("Coins: back to the");
      await expect(coins.getByRole("button", { name: "Back to learned" })).toHaveCount(0);
    });
  }
});
