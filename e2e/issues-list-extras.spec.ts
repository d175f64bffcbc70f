import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * The issues list's extras in a real browser: each row's 24-hour sparkline, the header checkbox that
 * ticks the page's rows (and the bulk action on them), the last version a row says it was seen in,
 * snoozed issues told apart from ignored ones, and the issue page's event pager keeping the reader at
 * the events. Screenshots of the list, an issue and the traces pages at 390 and 1280 px, light and
 * dark, go to SCREENS_DIR (default e2e/artifacts/screens).
 */
let projectId = "";
let apiKey = "";
let owner = { id: "", email: "" };
const ids: Record<string, string> = {};
const TRACE = "7c1d2e3f-4a5b-4c6d-8e7f-000000000001";

test.describe.configure({ mode: "serial" });

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  ({ projectId, apiKey } = await makeProject(sql, owner.id, [], "Sparkline Speedway"));
  await sql.end();
  const now = Date.now();
  const at = (minAgo: number) => new Date(now - minAgo * 60_000).toISOString();
  const post = async (errors: unknown[]) => {
    for (let i = 0; i < errors.length; i += 50) {
      const r = await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors: errors.slice(i, i + 50) } });
      expect(r.status()).toBe(200);
    }
  };
  // 45 stored events within the last 23 hours, so all fall in the 24 hourly bars whatever the
  // minute (each traced, so every one is stored): three pages of events
  await post(
    Array.from({ length: 45 }, (_, i) => ({
      message: "ServerScriptService.Race:88: attempt to index nil with 'Checkpoint'",
      stack_trace: "ServerScriptService.Race:88 function lap\nServerScriptService.Race:12",
      game_version: i < 30 ? 42 : 43,
      user_id: 2000 + (i % 5),
      player_name: `Racer${i % 5}`,
      trace_id: `7c1d2e3f-4a5b-4c6d-8e7f-${String(100 + i).padStart(12, "0")}`,
      timestamp: at(1360 - i * 30),
    })),
  );
  // a trace that crosses two issues; its later event arrives first
  await post([
    { message: "Shop purchase failed: ProcessReceipt timed out", trace_id: TRACE, timestamp: at(10), game_version: 43 },
    { message: "DataStore budget exhausted for PlayerData", trace_id: TRACE, timestamp: at(11), game_version: 43 },
  ]);
  await post([
    { message: "Snoozed for occurrences", timestamp: at(50) },
    { message: "Snoozed for an hour", timestamp: at(40) },
    { message: "Ignored for good", timestamp: at(30) },
  ]);
  // 30 more issues: a page of 25 rows out of more
  const spells = "fireball frostbolt lightning heal shield blink haste slow poison stun root silence fear charm sleep".split(" ");
  await post(spells.flatMap((s, i) => [
    { message: `Spell ${s} has no cast handler`, timestamp: at(60 + i * 7) },
    { message: `Spell ${s} has no cooldown entry`, level: "warn", timestamp: at(90 + i * 11) },
  ]));
  const login = await request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(login.status()).toBe(200);
  const all = await (await request.get("/api/v1/errors?grouped=true&limit=100", { headers: { "x-api-key": apiKey } })).json();
  for (const g of all.data) ids[g.message] = g.id;
  const status = async (message: string, body: unknown) => {
    const r = await request.patch(`/api/team/projects/${projectId}/groups/${ids[message]}`, { data: body });
    expect(r.status()).toBe(200);
  };
  await status("Snoozed for occurrences", { status: "ignored", snooze: { occurrences: 100 } });
  await status("Snoozed for an hour", { status: "ignored", snooze: { minutes: 60 } });
  await status("Ignored for good", { status: "ignored" });
  await countersSettled();
});

async function signIn(page: Page) {
  const r = await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
}

const RACE = "ServerScriptService.Race:88: attempt to index nil with 'Checkpoint'";

test("each row draws its last 24 hours and says which version it was last seen in", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/issues`);
  const row = page.locator("tr", { has: page.getByRole("link", { name: RACE }) });
  const spark = row.getByRole("img", { name: /^Occurrences per hour, last 24 hours: 45 in total/ });
  await expect(spark).toBeVisible();
  // one bar per hour with occurrences (every half hour over about 22 hours)
  expect(await spark.locator("rect").count()).toBeGreaterThanOrEqual(20);
  await expect(row.getByText("last seen in v43")).toBeVisible();
  await expect(row.getByText("last seen in v43")).toHaveAttribute("title", "The game version of the latest occurrence");
});

test("the header checkbox ticks and clears the page's rows; a bulk action then changes exactly those", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/issues`);
  const all = page.getByRole("checkbox", { name: /^Select all 25 issues on this page$/ });
  const rows = page.locator('input[type="checkbox"][name="ids"]');
  await expect(rows).toHaveCount(25);
  await expect(all).toBeEnabled();
  await all.check();
  for (const box of await rows.all()) await expect(box).toBeChecked();
  await expect(page.getByTestId("page-ticked")).toContainText("All 25 issues on this page are ticked. To change all 33 matching");
  // one row cleared: the header box is neither ticked nor clear
  await rows.nth(3).uncheck();
  await expect(all).not.toBeChecked();
  expect(await all.evaluate((el: HTMLInputElement) => el.indeterminate)).toBe(true);
  await expect(page.getByTestId("page-ticked")).toHaveCount(0);
  await all.check();
  await expect(rows.nth(3)).toBeChecked();
  await all.uncheck();
  for (const box of await rows.all()) await expect(box).not.toBeChecked();
  // tick the page, resolve: the 25 rows go, the other 8 open issues stay
  await all.check();
  await page.getByRole("button", { name: "Resolve", exact: true }).click();
  await expect(page.getByText("Resolved 25 issues.")).toBeVisible();
  await expect(page.getByTestId("issue-total")).toHaveText("8 issues");
  await expect(rows).toHaveCount(8);
  await expect(page.getByRole("checkbox", { name: "Select all 8 issues on this page" })).not.toBeChecked();
  // reopen them for the next tests
  await page.goto(`/projects/${projectId}/issues?status=resolved`);
  await page.getByRole("checkbox", { name: "Select all 25 issues on this page" }).check();
  await page.getByRole("button", { name: "Reopen", exact: true }).click();
  await expect(page.getByText("Reopened 25 issues.")).toBeVisible();
});

test("snoozed issues read differently from ignored ones", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/issues?status=ignored`);
  const rowOf = (m: string) => page.locator("tr", { has: page.getByRole("link", { name: m }) });
  const count = rowOf("Snoozed for occurrences").locator("td.hide-narrow").getByTestId("snoozed");
  await expect(count.locator(".badge")).toHaveText("snoozed");
  await expect(count).toContainText("until 100 more occurrences");
  const hour = rowOf("Snoozed for an hour").locator("td.hide-narrow").getByTestId("snoozed");
  await expect(hour).toContainText(/until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
  const ignored = rowOf("Ignored for good").locator("td.hide-narrow .badge[class*=status-]");
  await expect(ignored).toHaveText("ignored");
  await expect(rowOf("Ignored for good").getByTestId("snoozed")).toHaveCount(0);
  const look = (l: typeof ignored) => l.evaluate((el) => { const s = getComputedStyle(el); return `${s.color} ${s.borderStyle} ${s.backgroundColor}`; });
  expect(await look(count.locator(".badge"))).not.toBe(await look(ignored));
  // the issue page's badge too
  await page.getByRole("link", { name: "Snoozed for occurrences" }).click();
  await expect(page.locator(".panel").first().locator(".badge.status-snoozed")).toHaveText("snoozed");
  await expect(page.getByTestId("snooze")).toContainText("100 more");
});

test("Older and Newer keep the reader at the events", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(page);
  await page.goto(`/projects/${projectId}/issues/${ids[RACE]}`);
  const section = page.locator("section#events");
  const events = section.locator("details.event");
  await expect(events).toHaveCount(20);
  const first = await events.first().locator("time").first().getAttribute("datetime");
  await section.getByRole("link", { name: "Older →" }).scrollIntoViewIfNeeded();
  await section.getByRole("link", { name: "Older →" }).click();
  await expect(page).toHaveURL(/before=\d+/);
  await expect(events.first().locator("time").first()).not.toHaveAttribute("datetime", first!);
  // the events section is at the top of the window, not the page's top
  const atEvents = async () => {
    const top = await section.evaluate((el) => el.getBoundingClientRect().top);
    const y = await page.evaluate(() => window.scrollY);
    expect(y).toBeGreaterThan(300);
    expect(Math.abs(top)).toBeLessThan(20);
  };
  await expect.poll(() => section.evaluate((el) => Math.round(el.getBoundingClientRect().top))).toBeLessThan(20);
  await atEvents();
  await section.getByRole("link", { name: "Older →" }).click();
  await expect(events).toHaveCount(5);
  await atEvents();
  await section.getByRole("link", { name: "← Newer" }).click();
  await expect(events).toHaveCount(20);
  await atEvents();
  await section.getByRole("link", { name: "Latest" }).click();
  await expect(page).not.toHaveURL(/before=|after=/);
  await expect(events.first().locator("time").first()).toHaveAttribute("datetime", first!);
  await atEvents();
  // opened from its address (a reload, a shared link), the page also starts at the events
  await page.goto(`/projects/${projectId}/issues/${ids[RACE]}#events`);
  await atEvents();
});

test("the traces list and the trace's page agree on the issue that came first", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/traces`);
  const row = page.locator("tr", { has: page.locator(`a[href$="/traces/${TRACE}"]`) });
  await expect(row).toContainText("DataStore budget exhausted for PlayerData");
  await row.getByRole("link").first().click();
  await expect(page.locator("tbody tr").first()).toContainText("DataStore budget exhausted for PlayerData");
  await expect(page.locator("tbody tr").nth(1)).toContainText("Shop purchase failed");
});

test("screenshots of the list, an issue and the traces pages", async ({ browser }) => {
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [390, 1280]) {
      const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      await signIn(page);
      const shot = (name: string) => page.screenshot({ path: `${SCREENS}/listx-${name}-${width}-${colorScheme}.png`, fullPage: true });
      await page.goto(`/projects/${projectId}/issues`);
      await shot("issues");
      await page.goto(`/projects/${projectId}/issues?status=ignored`);
      await shot("issues-ignored");
      await page.goto(`/projects/${projectId}/issues/${ids["Snoozed for occurrences"]}`);
      await shot("issue-snoozed");
      await page.goto(`/projects/${projectId}/issues/${ids[RACE]}`);
      await page.locator("section#events").getByRole("link", { name: "Older →" }).click();
      await expect(page).toHaveURL(/before=/);
      await page.screenshot({ path: `${SCREENS}/listx-issue-older-${width}-${colorScheme}.png` });
      await page.goto(`/projects/${projectId}/traces`);
      await shot("traces");
      await page.goto(`/projects/${projectId}/traces/${TRACE}`);
      await shot("trace");
      await context.close();
    }
  }
});
