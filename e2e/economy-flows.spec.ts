import { expect, test, type APIRequestContext } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";
import { COINS_GEMS_MAP as MAP, coinsGemsPlayer } from "../test/support/economy-maps.js";
import { SCREENS } from "./support/screens.js";

/** The overview's sources-and-sinks panel, over flows and pushes sent through the API, at a phone's and a desktop's width. */
const PASSWORD = "correct horse battery";
let email: string;
let withFlows: string;
let withoutFlows: string;

type Flow = { user_id: number; currency: string; amount: number; source: string; item?: string };

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  email = `flows-${randomBytes(4).toString("hex")}@example.test`;
  const user = await createUser(sql, { email, password: PASSWORD });
  const a = await createProject(sql, { id: user.id, email }, { name: "Flows game" });
  const b = await createProject(sql, { id: user.id, email }, { name: "Snapshots only" });
  withFlows = a.project.id;
  withoutFlows = b.project.id;
  for (const id of [withFlows, withoutFlows]) await sql`insert into economy_maps (project_id, map) values (${id}, ${sql.json(MAP)})`;
  await sql.end();

  const post = async (req: APIRequestContext, key: string, path: string, data: unknown) => {
    const r = await req.post(path, { headers: { "x-api-key": key }, data });
    expect(r.status(), await r.text()).toBe(200);
  };
  const player = (id: number, coins: number, gems: number) => coinsGemsPlayer(id, { coins, gems }, { username: `hero_${id}` });
  const flows = (list: Flow[]) => post(request, a.api_key, "/api/economy/flows", { flows: list });
  // the game has sent flows of both currencies since before the players' first observation
  await flows([{ user_id: 99, currency: "coins", amount: 1, source: "admin" }, { user_id: 99, currency: "gems", amount: 1, source: "admin" }]);
  await post(request, a.api_key, "/api/economy/ingest", { players: [1, 2, 3, 4].map((id) => player(id, 1000, 10)) });
  await flows([
    { user_id: 1, currency: "coins", amount: 500, source: "quest", item: "daily_1" },
    { user_id: 1, currency: "coins", amount: -200, source: "shop", item: "sword" },
    { user_id: 2, currency: "coins", amount: 1200, source: "trade" },
    { user_id: 2, currency: "gems", amount: 40, source: "purchase", item: "gem_pack" },
    { user_id: 4, currency: "coins", amount: -350, source: "shop", item: "hat" },
  ]);
  // player 3 gains 250,000 coins no flow explains; player 4 spent 350 but lost only 50
  await post(request, a.api_key, "/api/economy/ingest", {
    players: [player(1, 1300, 10), player(2, 2200, 50), player(3, 251_000, 10), player(4, 950, 10)],
    flows: [{ user_id: 1, currency: "gems", amount: 5, source: "quest" }],
  });
  await post(request, b.api_key, "/api/economy/ingest", { players: [player(1, 100, 1)] });
});

for (const width of [390, 1280]) {
  test(`sources and sinks panel at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);

    await page.goto(`/projects/${withFlows}/economy?currency=coins`);
    const panel = page.getByTestId("flows-panel");
    await expect(panel.getByRole("heading", { name: /Sources and sinks/ })).toBeVisible();
    const sources = panel.getByTestId("flow-sources-coins");
    await expect(sources.locator("tbody tr td:first-child")).toHaveText(["trade", "shop", "quest", "admin", "All sources"]);
    await expect(sources.locator("tbody tr").last()).toContainText("+1,701");
    await expect(sources.locator("tbody tr").last()).toContainText("−550");
    const unexplained = panel.getByTestId("unexplained");
    await expect(unexplained.locator("tbody tr")).toHaveCount(2);
    await expect(unexplained.locator("tbody tr", { hasText: "hero_3" })).toContainText("+250,000");
    await expect(unexplained).toContainText("+250,000");
    await expect(unexplained).toContainText("+300");
    // nothing scrolls the page sideways
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
    await panel.screenshot({ path: `${SCREENS}/economy-flows-coins-${width}.png` });

    // every currency: a table per currency that moved, and the currency named on each unexplained gain
    await page.goto(`/projects/${withFlows}/economy`);
    await expect(panel.getByTestId("flow-sources-gems").locator("tbody tr td:first-child")).toHaveText(["purchase", "quest", "admin", "All sources"]);
    await expect(panel.getByTestId("unexplained").locator("thead th")).toContainText(["Currency"]);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
    await panel.screenshot({ path: `${SCREENS}/economy-flows-all-${width}.png` });

    // a game that sends no flows: the panel says how to send them
    await page.goto(`/projects/${withoutFlows}/economy`);
    await expect(page.getByTestId("flows-howto")).toContainText("Monitor.economy.flow(player, currency, amount, source, item?)");
    await expect(page.getByTestId("flow-sources-coins")).toHaveCount(0);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
    await page.getByTestId("flows-panel").screenshot({ path: `${SCREENS}/economy-flows-none-${width}.png` });
  });
}
