import { expect, test, type BrowserContext, type Page } from "@playwright/test";
import { startFreshServer } from "./support/fresh-server";
import { startLocalProvider, type LocalProvider } from "../test/support/oidc";
import { createSql } from "../db/client.js";
import { createUser } from "../app/accounts/users.server.js";
import { SCREENS } from "./support/screens.js";

/**
 * Sign-in through a real OpenID Connect provider (npm oidc-provider) on 127.0.0.1: the buttons on
 * the sign-in page, the provider's own login and consent pages, an account created for an allowed
 * domain, a Roblox identity linked from the Account page and then used, and a refusal.
 */
/** one person per run (width × colour scheme), each with a Roblox account */
const PEOPLE = ["ana", "ben", "cara", "dan"];
const robloxIdOf = (i: number) => String(1516563360 + i);
// four full rounds through two servers on a shared machine
test.describe.configure({ timeout: 240_000 });
let provider: LocalProvider;
let server: { url: string; databaseUrl: string; close: () => Promise<void> };

test.beforeAll(async () => {
  provider = await startLocalProvider({
    clients: [
      { clientId: "studio-client", clientSecret: "studio-secret-0123456789", provider: "studio" },
      { clientId: "roblox-client", clientSecret: "roblox-secret-0123456789", provider: "roblox" },
    ],
    accounts: {
      ...Object.fromEntries(PEOPLE.map((p) => [`${p}@studio.test`, { email: `${p}@studio.test`, email_verified: true, name: p }])),
      ...Object.fromEntries(PEOPLE.map((p, i) => [robloxIdOf(i), { preferred_username: `builder_${p}`, name: `${p} builds` }])),
      "stranger@elsewhere.test": { email: "stranger@elsewhere.test", email_verified: true },
    },
  });
  server = await startFreshServer({
    OIDC_PROVIDERS: "studio,roblox",
    OIDC_ALLOWED_DOMAINS: "studio.test",
    OIDC_STUDIO_ISSUER: provider.issuer,
    OIDC_STUDIO_NAME: "Studio SSO",
    OIDC_STUDIO_CLIENT_ID: "studio-client",
    OIDC_STUDIO_CLIENT_SECRET: "studio-secret-0123456789",
    // the Roblox preset, pointed at the local provider
    OIDC_ROBLOX_ISSUER: provider.issuer,
    OIDC_ROBLOX_CLIENT_ID: "roblox-client",
    OIDC_ROBLOX_CLIENT_SECRET: "roblox-secret-0123456789",
  });
  // the server's first account (set up), so OIDC sign-ins are possible
  const sql = createSql(server.databaseUrl, 1);
  await createUser(sql, { email: "owner@studio.test", password: "a long owner password" });
  await sql.end();
});
test.afterAll(async () => {
  await server?.close();
  await provider?.close();
});

/** At the provider: its login page (any password), then its consent page. */
async function passProvider(page: Page, login: string) {
  await expect(page.locator('input[name="login"]')).toBeVisible();
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', "any");
  await page.click('button[type="submit"]');
  await page.getByRole("button", { name: "Continue" }).click();
}

/** Forgets who is signed in at the provider (its cookies; the dashboard's stay). */
const signOutAtProvider = (context: BrowserContext) => context.clearCookies({ name: /^_/ });

const runs = [390, 1280].flatMap((width) => (["light", "dark"] as const).map((colorScheme) => ({ width, colorScheme })));
runs.forEach(({ width, colorScheme }, i) => {
  {
    test(`sign in through the local provider at ${width} px (${colorScheme})`, async ({ browser }) => {
      const who = PEOPLE[i];
      const robloxId = robloxIdOf(i);
      const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      const shot = (name: string) => page.screenshot({ path: `${SCREENS}/oidc-${name}-${width}-${colorScheme}.png`, fullPage: true });

      await page.goto(`${server.url}/login`);
      await expect(page.getByRole("button", { name: "Sign in with Roblox" })).toBeVisible();
      await shot("login");
      await page.getByRole("button", { name: "Sign in with Studio SSO" }).click();
      await passProvider(page, `${who}@studio.test`);
      await expect(page).toHaveURL(/\/projects/);
      await shot("signed-in");

      await page.goto(`${server.url}/account`);
      const section = page.getByTestId("linked-identities");
      await expect(section).toContainText("Studio SSO");
      await expect(section.getByRole("button", { name: "Unlink" })).toBeDisabled();
      // an account a provider made has no password: nothing asks for a current one
      await expect(page.getByTestId("no-password")).toContainText("you sign in through Studio SSO");
      await expect(page.locator('input[name="current_password"]')).toHaveCount(0);
      await signOutAtProvider(context);
      await section.getByRole("button", { name: "Link a Roblox account" }).click();
      await passProvider(page, robloxId);
      await expect(page).toHaveURL(/\/account\?linked=roblox/);
      await expect(page.getByTestId("linked-identities")).toContainText(`builder_${who}`);
      await expect(page.getByText("Roblox account linked")).toBeVisible();
      await shot("account-linked");

      // signed out here and at the provider: the Roblox identity signs the same account in
      await page.getByRole("button", { name: /sign out/i }).first().click();
      await expect(page).toHaveURL(/\/login/);
      await signOutAtProvider(context);
      await page.goto(`${server.url}/login`);
      await page.getByRole("button", { name: "Sign in with Roblox" }).click();
      await passProvider(page, robloxId);
      await expect(page).toHaveURL(/\/projects/);
      await page.goto(`${server.url}/account`);
      await expect(page.locator("strong", { hasText: `${who}@studio.test` })).toBeVisible();

      // someone from a domain nobody allowed is refused, with the reason
      await page.getByRole("button", { name: /sign out/i }).first().click();
      await expect(page).toHaveURL(/\/login/);
      await signOutAtProvider(context);
      await page.goto(`${server.url}/login`);
      await page.getByRole("button", { name: "Sign in with Studio SSO" }).click();
      await passProvider(page, "stranger@elsewhere.test");
      await expect(page.getByTestId("sign-in-refused")).toContainText("not created automatically");
      await shot("refused");
      await context.close();
    });
  }
});
