import { expect, test } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { codeAt } from "../app/accounts/two-factor.server.js";
import { SCREENS } from "./support/screens.js";

/**
 * Two-factor authentication in a real Chromium: enroll from the Account page (QR code, key, a code to
 * confirm, recovery codes shown once), sign out, sign in with the password and then a code, and set a
 * project's requirement. At 390 and 1280 px, light and dark; screenshots in SCREENS_DIR (e2e/support/screens.ts).
 */

async function setUp() {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId } = await makeProject(sql, user.id, [], "Two-factor Game");
  await sql.end();
  return { user, projectId };
}

for (const width of [390, 1280]) {
  for (const colorScheme of ["light", "dark"] as const) {
    test(`enroll and use TOTP at ${width} px (${colorScheme})`, async ({ browser }) => {
      const { user, projectId } = await setUp();
      const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      const shot = (name: string) => page.screenshot({ path: `${SCREENS}/two-factor-${name}-${width}-${colorScheme}.png`, fullPage: true });

      await page.goto("/login");
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(/\/projects$/);

      await page.goto("/account");
      await expect(page.getByTestId("two-factor-summary")).toContainText("Off.");
      await page.getByRole("link", { name: "Set up two-factor" }).click();
      await expect(page).toHaveURL(/\/account\/two-factor$/);
      await page.getByRole("button", { name: "Set up two-factor" }).click();
      const qr = page.getByTestId("two-factor-qr");
      await expect(qr).toBeVisible();
      // the QR code is an image made by our own server, fully on screen
      expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      const box = (await qr.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      const secret = (await page.getByTestId("two-factor-secret").innerText()).replace(/\s/g, "");
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      const noSideways = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      expect(await noSideways()).toBe(true);
      await shot("enroll");

      const enrolledWith = codeAt(secret);
      await page.getByLabel("Code the app shows").fill(enrolledWith);
      await page.getByRole("button", { name: "Turn on" }).click();
      await expect(page.getByTestId("recovery-codes").locator("li")).toHaveCount(10);
      await expect(page.getByTestId("two-factor-on")).toContainText("10 of 10 recovery codes left");
      expect(await noSideways()).toBe(true);
      await shot("recovery-codes");

      await page.getByRole("button", { name: "Sign out" }).click();
      await expect(page).toHaveURL(/\/login/);
      await page.goto(`/login?next=${encodeURIComponent(`/projects/${projectId}/settings`)}`);
      await page.getByLabel("Email").fill(user.email);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(/\/login\/two-factor/);
      await expect(page.getByRole("heading", { name: "Two-factor code" })).toBeVisible();
      // the code used to enroll was accepted once already
      await page.getByLabel("Code").fill(enrolledWith);
      await page.getByRole("button", { name: "Verify" }).click();
      await expect(page.getByRole("alert")).toContainText("wrong or was already used");
      await shot("second-step-refused");
      // the next step's code (within the ±30 s the server accepts)
      await page.getByLabel("Code").fill(codeAt(secret, Date.now() + 30_000));
      await page.getByRole("button", { name: "Verify" }).click();
      await expect(page).toHaveURL(new RegExp(`/projects/${projectId}/settings$`));

      const panel = page.getByTestId("two-factor-requirement");
      await panel.getByLabel("Requirement").selectOption("owners_admins");
      await panel.getByRole("button", { name: "Save" }).click();
      await expect(panel.getByRole("status")).toContainText("Two-factor requirement saved.");
      await panel.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SCREENS}/two-factor-requirement-${width}-${colorScheme}.png` });
      await context.close();
    });
  }
}
