import { expect, test, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { SCREENS } from "./support/screens.js";

/**
 * The overview's SDK health panel at a phone width (390 px) and a desktop width (1280 px): first
 * "Nothing lost" for a project whose SDK reported nothing, then the losses by reason and category
 * (from a batch's client_report and a report of its own) and the SDK's last warning.
 * Screenshots in SCREENS_DIR: sdk-health-empty-390.png, sdk-health-390.png, sdk-health-1280.png.
 */
test("the SDK health panel shows what the SDK lost, by reason, and its last warning", async ({ page }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  const user = await makeUser(sql);
  const { projectId, apiKey } = await makeProject(sql, user.id, [], "SDK health E2E");
  await sql.end();
  expect((await page.request.post("/api/auth/login", { data: { email: user.email, password: PASSWORD } })).status()).toBe(200);

  await page.setViewportSize({ width: 390, height: 900 });
  await page.goto(`/projects/${projectId}`);
  const panel = page.getByTestId("sdk-health");
  await expect(panel.getByRole("heading", { name: /SDK health/ })).toBeVisible();
  await expect(panel.getByTestId("sdk-health-none")).toContainText("Nothing lost");
  await expect(panel.getByTestId("sdk-health-warning")).toContainText("No SDK warning reported");
  await panel.scrollIntoViewIfNeeded();
  await page.screenshot({ path: `${SCREENS}/sdk-health-empty-390.png`, fullPage: true });

  const warnedAt = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const batch = await page.request.post("/api/ingest", {
    headers: { "x-api-key": apiKey, "idempotency-key": "e2e-batch-1" },
    data: {
      errors: [{ message: "ServerScriptService.Shop:88: attempt to index nil with 'Price'" }],
      client_report: {
        discarded_events: [
          { category: "error", reason: "queue_overflow", quantity: 1200 },
          { category: "error", reason: "sample_rate", quantity: 35 },
          { category: "economy", reason: "queue_overflow", quantity: 4 },
          { category: "error", reason: "refused", quantity: 2 },
        ],
        last_warning: {
          message: "[RobloxMonitor] The error queue is full (maxQueueSize 500): 1200 errors dropped since the last report",
          at: warnedAt,
        },
      },
    },
  });
  expect(batch.status()).toBe(200);
  const alone = await page.request.post("/api/client-reports", {
    headers: { "x-api-key": apiKey, "idempotency-key": "e2e-report-1" },
    data: {
      discarded_events: [
        { category: "economy", reason: "retry_expired", quantity: 3 },
        { category: "error", reason: "future_reason", quantity: 1 },
        { category: "economy_flow", reason: "client_invalid", quantity: 13 },
      ],
    },
  });
  expect(alone.status()).toBe(200);

  for (const width of [390, 1280]) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`/projects/${projectId}`);
    await expect(panel.getByTestId("sdk-health-none")).toHaveCount(0);
    const table = panel.getByTestId("sdk-health-table");
    await expect(table.locator("thead th")).toHaveText(["Reason", "Errors", "Economy", "Flows"]);
    const row = (name: RegExp) => table.locator("tbody tr").filter({ hasText: name });
    await expect(row(/Queue full/).locator("td")).toHaveText([/Queue full/, "1,200", "4", "0"]);
    await expect(row(/Sampled out/).locator("td")).toHaveText([/Sampled out \(sampleRate\)/, "35", "0", "0"]);
    await expect(row(/Refused by the service/).locator("td")).toHaveText([/Refused/, "2", "0", "0"]);
    await expect(row(/Retries gave up/).locator("td")).toHaveText([/Retries gave up/, "0", "3", "0"]);
    await expect(row(/future_reason/).locator("td")).toHaveText([/future_reason/, "1", "0", "0"]);
    await expect(row(/Malformed client payload/).locator("td")).toHaveText([/Malformed client payload/, "0", "0", "13"]);
    await expect(panel.getByTestId("sdk-health-warning")).toContainText("Last SDK warning, 2 h ago:");
    await expect(panel.getByTestId("sdk-health-warning")).toContainText("The error queue is full");
    await expectNoSidewaysScroll(page, `the overview at ${width} px`);
    await panel.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${SCREENS}/sdk-health-${width}.png`, fullPage: true });
  }
});

async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  expect(scroll, `${what} is ${scroll} px wide in a ${width} px viewport`).toBeLessThanOrEqual(width);
}
