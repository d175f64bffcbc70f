import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * An owner creates a Sentry DSN in Settings, copies it, an event is sent to it over the Sentry
 * envelope protocol, and its breadcrumbs show on the issue page. Screenshots at phone and desktop
 * widths land in SCREENS_DIR (e2e/support/screens.ts).
 */
test("create a Sentry DSN in Settings, copy it, and see an event sent to it with its breadcrumbs", async ({ page, context }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId } = await makeProject(sql, user.id, [], "Sentry E2E");
  await sql.end();
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/projects/${projectId}/settings`);
  const panel = page.getByRole("region", { name: "Sentry DSN" });
  await expect(panel).toContainText("No active DSN key");
  await panel.getByLabel("DSN name").fill("website");
  await panel.getByRole("button", { name: "Create DSN" }).click();
  await expect(page.getByRole("status")).toContainText("DSN created");
  const row = panel.getByTestId("dsn-key");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("website");
  const dsn = (await row.getByTestId("dsn").textContent())!.trim();
  const origin = new URL(page.url()).origin;
  expect(dsn).toMatch(new RegExp(`^http://[0-9a-f]{32}@${new URL(origin).host.replace(/\./g, "\\.")}/\\d+$`));

  await row.getByRole("button", { name: "Copy the DSN website" }).click();
  await expect(row.getByRole("button", { name: "Copy the DSN website" })).toHaveText("Copied");
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(dsn);
  await page.screenshot({ path: `${SCREENS}/sentry-settings-1280.png`, fullPage: true });

  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await expect(panel.getByTestId("dsn")).toBeVisible();
  // the DSN panel fits a phone: the DSN wraps instead of sticking out sideways
  expect(await panel.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
  const box = (await panel.getByTestId("dsn").boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS}/sentry-settings-390.png`, fullPage: true });

  // an event over the envelope protocol, keyed only by the DSN in the envelope header
  const { username, pathname } = new URL(dsn);
  const now = Date.now() / 1000;
  const envelope = [
    JSON.stringify({ dsn, sent_at: new Date().toISOString() }),
    JSON.stringify({ type: "event" }),
    JSON.stringify({
      level: "error",
      exception: { values: [{ type: "Error", value: "attempt to call a nil value (field 'Fire')", stacktrace: { frames: [{ filename: "ServerScriptService.Remotes", lineno: 77, function: "onPurchase" }] } }] },
      breadcrumbs: [
        { timestamp: now - 5, category: "ui", level: "info", message: "Shop opened" },
        { timestamp: now - 1, category: "remote", level: "warning", message: "PurchaseItem invoked" },
      ],
    }),
  ].join("\n");
  const sent = await page.request.post(`${pathname.replace(/^\/(\d+)$/, "/api/$1/envelope/")}`, { data: envelope, headers: { "content-type": "application/x-sentry-envelope" } });
  expect(sent.status()).toBe(200);
  await countersSettled();
  expect(username).toHaveLength(32);

  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`/projects/${projectId}/issues`);
  await page.getByRole("link", { name: /attempt to call a nil value/ }).first().click();
  const crumbs = page.getByTestId("breadcrumbs").first();
  await expect(crumbs).toContainText("Shop opened");
  await expect(crumbs).toContainText("PurchaseItem invoked");
  await expect(page.locator("pre").first()).toContainText("ServerScriptService.Remotes:77 function onPurchase");
  await page.screenshot({ path: `${SCREENS}/sentry-issue-breadcrumbs.png`, fullPage: true });

  // revoking refuses the DSN from then on
  await page.goto(`/projects/${projectId}/settings`);
  await panel.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByRole("status")).toContainText("DSN revoked");
  const refused = await page.request.post(`${pathname.replace(/^\/(\d+)$/, "/api/$1/envelope/")}`, { data: envelope });
  expect(refused.status()).toBe(401);
});
