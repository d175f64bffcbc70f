import { expect, test } from "@playwright/test";
import { randomBytes } from "node:crypto";
import { createUser } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { createSql } from "../db/client.js";
import { SCREENS } from "./support/screens.js";

/**
 * A game's first day on the overview: 150 players pushed for the first time (10,000 each), 40 of
 * them spending later that day. What they brought reads as new players' starting wealth, not as
 * gains or growth.
 */
const PASSWORD = "correct horse battery";
let projectId: string;
let email: string;

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  email = `opening-${randomBytes(4).toString("hex")}@example.test`;
  const user = await createUser(sql, { email, password: PASSWORD });
  const created = await createProject(sql, { id: user.id, email }, { name: "Day one" });
  projectId = created.project.id;
  await sql.end();
  const push = async (players: unknown[]) =>
    expect((await request.post("/api/economy/ingest", { headers: { "x-api-key": created.api_key }, data: { players } })).status()).toBe(200);
  const player = (i: number, cash: number) => ({ user_id: 7000 + i, profile: { RPCharacterOne: { Name: `Newcomer ${i}`, Cash: cash, InATM: 0, DarkCoin: 0 } } });
  const all = Array.from({ length: 150 }, (_, i) => player(i, 10_000));
  await push(all.slice(0, 100));
  await push(all.slice(100));
  await push(Array.from({ length: 40 }, (_, i) => player(i, 9_500)));
});

for (const width of [390, 1280]) {
  test(`day one reads as new players' wealth, not inflation, at ${width} px`, async ({ page }) => {
    await page.setViewportSize({ width, height: 900 });
    expect((await page.request.post("/api/auth/login", { data: { email, password: PASSWORD } })).status()).toBe(200);
    await page.goto(`/projects/${projectId}/economy`);
    await expect(page.getByTestId("player-count")).toHaveText("150");
    await expect(page.getByTestId("money-supply")).toHaveText("1,480,000");
    const openings = page.getByTestId("supply-openings");
    await expect(openings).toHaveText("Today 150 new players brought 1.5M: their starting wealth, part of the supply, not growth. Besides that, balances changed by −20,000.");
    await expect(openings.locator("[title]")).toHaveAttribute("title", "1,500,000");
    // no growth from an empty economy; the day's other change is what the 40 spent
    await expect(page.getByTestId("supply-growth")).toContainText("Today — (−20,000)");
    const flows = page.getByTestId("flow-totals");
    await expect(flows).toContainText("30 days: 0 gained");
    await expect(flows).toContainText("150 new players brought 1.5M (not a gain)");
    await expect(flows).toContainText("today 0 gainers, 40 losers");
    await expect(page.getByTestId("card-newcomers")).toContainText("brought 1.5M");
    // the chart's point for the day says it too
    const point = page.getByRole("img", { name: "Money supply per day" }).locator("circle title").last();
    await expect(point).toHaveText(/: 1,480,000 \(— that day; 150 new players brought 1,500,000, others −20,000\)$/);
    expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(width);
    await page.screenshot({ path: `${SCREENS}/economy-opening-${width}.png`, fullPage: true });
    await page.locator("section.panel", { has: openings }).screenshot({ path: `${SCREENS}/economy-opening-supply-${width}.png` });
  });
}
