import { defineConfig } from "@playwright/test";
import { chromiumExecutable } from "./e2e/support/chromium.js";

/**
 * End-to-end tests in Chromium: CHROMIUM_PATH, Debian's, or the one @sparticuz/chromium ships
 * (Playwright cannot download browsers here; see e2e/support/chromium.ts).
 * e2e/global-setup.ts starts the real server on a fresh database and exports its URL.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "e2e/artifacts/results",
  globalSetup: "./e2e/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  timeout: 60_000,
  reporter: [["list"]],
  use: {
    baseURL: process.env.E2E_BASE_URL,
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: await chromiumExecutable(),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
