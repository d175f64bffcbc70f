import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { createSql } from "../db/client.js";
import { binOf, binValue } from "../db/health-cells.js";
import { runHealthJob } from "../jobs/health.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * Release health and Live servers in a real browser, on data sent the way game servers send it
 * (`POST /api/health`): a rollout from version 41 to 42. Version 41 has one server still running and
 * one closed for the update; version 42 has a server whose memory climbs (a leak), one that went
 * silent (ended abnormally) and one closed out of memory. Every figure the pages show is checked
 * against what was sent; the window form works without JavaScript; screenshots at 390 and 1280 px,
 * light and dark, go to SCREENS_DIR (default e2e/artifacts/screens).
 */
let projectId = "";
let apiKey = "";
let owner = { id: "", email: "" };

test.describe.configure({ mode: "serial" });

const now = Date.now();
// whole minutes in the past, so every sample and session lies inside the 24-hour window
const minute = Math.floor(now / 60_000) * 60_000;
const ago = (min: number) => new Date(minute - min * 60_000).toISOString();
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

type Sample = { at: string; players: number; memory_mb: number; heartbeat_ms: number };
const samples = (minutesAgo: number[], f: (m: number) => Omit<Sample, "at">) => minutesAgo.map((m) => ({ at: ago(m), ...f(m) }));
const session = (job: string, user: number, startedAgo: number, endedAgo: number | null, errors = { server: 0, client: 0 }) => ({
  id: `${job}/${user}/1`,
  user_id: String(user),
  started_at: ago(startedAgo),
  ...(endedAgo === null ? {} : { ended_at: ago(endedAgo), exit_reason: "Unknown" }),
  errors,
});

// version 41: still running (10 players, 800 MB) and closed for the update (6 players, 900 MB)
const OLD_LIVE = { job: "e2e-old-live-8f1c", started: 100, samples: samples(range(0, 29), () => ({ players: 10, memory_mb: 800, heartbeat_ms: 16.7 })) };
const OLD_CLOSED = { job: "e2e-old-closed-2b7d", started: 150, ended: 30, samples: samples(range(30, 49), () => ({ players: 6, memory_mb: 900, heartbeat_ms: 17 })) };
// version 42: a leak (8 players, +20 MB a minute from 600 MB), a silent server, an out-of-memory close
const NEW_LEAK = { job: "e2e-new-leak-c3a9", started: 45, samples: samples(range(0, 44), (m) => ({ players: 8, memory_mb: 600 + 20 * (45 - m), heartbeat_ms: 18 })) };
const NEW_LOST = { job: "e2e-new-lost-71e0", started: 40, samples: samples(range(30, 39), () => ({ players: 5, memory_mb: 700, heartbeat_ms: 20 })) };
const NEW_OOM = { job: "e2e-new-oom-5d42", started: 30, ended: 10, samples: samples(range(11, 29), () => ({ players: 4, memory_mb: 2000, heartbeat_ms: 25 })) };

/** The page's p50 of memory: nearest rank over the samples, read back from its 1% bin (docs/health.md). */
function p50(values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const v = sorted[Math.ceil(0.5 * sorted.length) - 1];
  return `${Math.round(Math.round(binValue(binOf(v)) * 10) / 10).toLocaleString("en-US")} MB`;
}
const memories = (...servers: { samples: Sample[] }[]) => servers.flatMap((s) => s.samples.map((x) => x.memory_mb));

async function report(request: APIRequestContext, body: unknown) {
  const r = await request.post("/api/health", { headers: { "x-api-key": apiKey }, data: body });
  expect(r.status(), await r.text()).toBe(200);
}

const server = (s: { job: string; started: number; ended?: number }, version: string, closeReason?: string) => ({
  job_id: s.job,
  place_id: "4242",
  place_version: version,
  environment: "production",
  started_at: ago(s.started),
  ...(s.ended === undefined ? {} : { ended_at: ago(s.ended), close_reason: closeReason }),
});

test.beforeAll(async ({ request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql);
  ({ projectId, apiKey } = await makeProject(sql, owner.id, [], "Obby Rollout"));

  // the silent server reports first; the service's silence job, run 3 minutes later by its clock,
  // declares it ended abnormally (its open player session ends as ServerLost)
  await report(request, { server: server(NEW_LOST, "42"), sessions: [session(NEW_LOST.job, 2004, 39, null)], samples: NEW_LOST.samples });
  expect(await runHealthJob(sql, { now: new Date(Date.now() + 3 * 60_000 + 1_000) })).toBe(1);

  await report(request, {
    server: server(OLD_LIVE, "41"),
    sessions: [session(OLD_LIVE.job, 1001, 90, 40), session(OLD_LIVE.job, 1002, 80, 35, { server: 1, client: 0 }), session(OLD_LIVE.job, 1003, 20, null)],
    samples: OLD_LIVE.samples,
  });
  await report(request, {
    server: server(OLD_CLOSED, "41", "DeveloperUpdate"),
    sessions: [session(OLD_CLOSED.job, 1004, 140, 30), session(OLD_CLOSED.job, 1005, 60, 30)],
    samples: OLD_CLOSED.samples,
  });
  await report(request, {
    server: server(NEW_LEAK, "42"),
    sessions: [session(NEW_LEAK.job, 2001, 44, 20), session(NEW_LEAK.job, 2002, 40, 5, { server: 0, client: 2 }), session(NEW_LEAK.job, 2003, 15, null)],
    samples: NEW_LEAK.samples,
  });
  await report(request, {
    server: server(NEW_OOM, "42", "OutOfMemory"),
    sessions: [session(NEW_OOM.job, 2005, 29, 10)],
    samples: NEW_OOM.samples,
  });

  // errors: three on the leaking server (two issues new in 42), one on 41's running server
  const errors = [
    { message: "ServerScriptService.Pets:40: not enough memory to spawn pet", level: "error", game_version: "42", job_id: NEW_LEAK.job, timestamp: ago(3) },
    { message: "ServerScriptService.Pets:40: not enough memory to spawn pet", level: "error", game_version: "42", job_id: NEW_LEAK.job, timestamp: ago(2) },
    { message: "ServerScriptService.Shop:12: attempt to index nil with 'Price'", level: "error", game_version: "42", job_id: NEW_LEAK.job, timestamp: ago(1) },
    { message: "ServerScriptService.Round:7: attempt to index nil with 'Character'", level: "error", game_version: "41", job_id: OLD_LIVE.job, timestamp: ago(4) },
  ].map((e, i) => ({ ...e, stack_trace: e.message.split(": ")[0], trace_id: `7c1d2e3f-4a5b-4c6d-8e7f-00000000010${i}` }));
  const sent = await request.post("/api/ingest", { headers: { "x-api-key": apiKey }, data: { errors } });
  expect(sent.status()).toBe(200);
  await sql.end();
  await countersSettled();
});

async function signIn(page: Page) {
  const r = await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } });
  expect(r.status()).toBe(200);
}

const cells = (page: Page, testId: string, version: string) => page.getByTestId(testId).locator(`tr[data-version="${version}"] td`);

test("release health shows each version's figures, and the newest two side by side", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}`);
  await page.getByRole("link", { name: "Release health" }).click();
  await expect(page).toHaveTitle(/^Release health/);
  await expect(page.getByTestId("health-empty")).toHaveCount(0);

  // 2 live servers (one each), 18 players (10 on 41, 8 on 42)
  const v42 = cells(page, "release-health", "42");
  const v41 = cells(page, "release-health", "41");
  await expect(v42.nth(0)).toHaveText("v42");
  await expect(v42.nth(1)).toHaveText("1 50.0%");
  await expect(v42.nth(2)).toHaveText("8 44.4%");
  // 4 sessions ended on 42: one met errors, one ended with its server (ServerLost): 2 error-free
  await expect(v42.nth(3)).toHaveText("50.0% 2 of 4 · 1 open");
  await expect(v42.nth(4)).toHaveText("50.0% 2 of 5");
  // 3 errors over 45·8 + 10·5 + 19·4 = 486 player-minutes
  await expect(v42.nth(5)).toHaveText("6.17 486 player-min");
  await expect(v42.nth(6)).toHaveText("1");
  await expect(v42.nth(7)).toHaveText("1");
  await expect(v42.nth(8)).toContainText(p50(memories(NEW_LEAK, NEW_LOST, NEW_OOM)));

  await expect(v41.nth(1)).toHaveText("1 50.0%");
  await expect(v41.nth(2)).toHaveText("10 55.6%");
  await expect(v41.nth(3)).toHaveText("75.0% 3 of 4 · 1 open");
  await expect(v41.nth(4)).toHaveText("75.0% 3 of 5");
  // 1 error over 30·10 + 20·6 = 420 player-minutes
  await expect(v41.nth(5)).toHaveText("2.38 420 player-min");
  await expect(v41.nth(6)).toHaveText("0");
  await expect(v41.nth(7)).toHaveText("0");
  await expect(v41.nth(8)).toContainText(p50(memories(OLD_LIVE, OLD_CLOSED)));

  // the newest two, side by side
  const compare = page.getByTestId("compare");
  await expect(compare.getByRole("heading", { level: 2 })).toHaveText("v42 and v41 side by side");
  const row = (name: string) => page.getByTestId("compare-table").locator("tr", { has: page.locator(`th:text-is("${name}")`) }).locator("td");
  await expect(row("Abnormal ends")).toHaveText(["1", "0"]);
  await expect(row("Out-of-memory closes")).toHaveText(["1", "0"]);
  await expect(row("Servers ended")).toHaveText(["1", "1"]);
  await expect(row("Player-minutes")).toHaveText(["486", "420"]);
  await expect(row("Error-free sessions")).toHaveText(["50.0% 2", "75.0% 3"]);
  // memory by server age: version 42's p50 climbs from the first bucket to the third (the leak)
  await expect(page.getByTestId("memory-age-chart").locator(".line-a polyline")).toHaveCount(1);
  await expect(page.getByTestId("adoption-chart").locator("svg g.line-b")).toHaveCount(2);

  // what each version broke stays: two new issues in 42, linked to the issues list by version
  const errorsRow = page.getByTestId("releases").locator("tr", { has: page.locator("td strong", { hasText: /^42$/ }) });
  await expect(errorsRow.locator("td").nth(1)).toHaveText("2");
  await errorsRow.getByRole("link", { name: "2" }).click();
  await expect(page).toHaveURL(/\/issues\?status=all&version=42/);
  await expect(page.getByTestId("issue-total")).toHaveText("2 issues");
});

test("the window, environment and versions are a GET form that works without JavaScript", async ({ browser }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await signIn(page);
  await page.goto(`/projects/${projectId}/releases`);
  await page.getByLabel("Window").selectOption("7d");
  await page.getByLabel("Environment").selectOption("production");
  await page.getByLabel("Compare").selectOption("41");
  await page.getByLabel("with", { exact: true }).selectOption("42");
  await page.getByRole("button", { name: "Show" }).click();
  await expect(page).toHaveURL(/window=7d&environment=production&a=41&b=42/);
  await expect(page.getByText("over the last 7 days")).toBeVisible();
  await expect(page.getByTestId("compare").getByRole("heading", { level: 2 })).toHaveText("v41 and v42 side by side");
  await expect(cells(page, "release-health", "42").nth(5)).toHaveText("6.17 486 player-min");
  // an environment without servers shows zeros, not another environment's figures
  await page.goto(`/projects/${projectId}/releases?window=30d&environment=staging`);
  await expect(cells(page, "release-health", "42").nth(5)).toHaveText("— 0 player-min");
  // a window the page does not know is the default, not an error
  await page.goto(`/projects/${projectId}/releases?window=1y`);
  await expect(page.getByLabel("Window")).toHaveValue("24h");
  await context.close();
});

test("live servers: running now with their errors, linked to the issues they met, and the abnormal end", async ({ page }) => {
  await signIn(page);
  await page.goto(`/projects/${projectId}/releases`);
  await page.getByRole("link", { name: "Live servers" }).click();
  await expect(page).toHaveTitle(/^Live servers/);
  const live = page.getByTestId("live-servers").locator("tbody tr");
  await expect(live).toHaveCount(2);
  const leak = page.getByTestId("live-servers").locator(`tr[data-job="${NEW_LEAK.job}"] td`);
  await expect(leak.nth(1)).toHaveText("v42");
  await expect(leak.nth(2)).toHaveText("8");
  await expect(leak.nth(3)).toHaveText(/^4[56] min$/);
  await expect(leak.nth(4)).toHaveText("1,500 MB") // the latest sample: 600 + 20·45;
  await expect(leak.nth(5)).toHaveText("18 ms");
  await expect(leak.nth(6)).toHaveText("3");
  const old = page.getByTestId("live-servers").locator(`tr[data-job="${OLD_LIVE.job}"] td`);
  await expect(old.nth(2)).toHaveText("10");
  await expect(old.nth(3)).toHaveText(/^1 h 4[01] min$/);
  await expect(old.nth(6)).toHaveText("1");
  // the closed servers are not running; the silent one ended abnormally
  await expect(page.getByTestId("live-servers")).not.toContainText(NEW_OOM.job);
  const lost = page.getByTestId("abnormal-servers").locator("tbody tr");
  await expect(lost).toHaveCount(1);
  await expect(lost.locator("td").nth(0)).toHaveText(NEW_LOST.job);
  await expect(lost.locator("td").nth(1)).toHaveText("v42");
  await expect(lost.locator("td").nth(4)).toHaveText("5");
  await expect(lost.locator("td").nth(5)).toHaveText("700 MB");

  // a server's errors: the issues its events belong to, each linked to its page
  await leak.nth(6).getByRole("link").click();
  const errors = page.getByTestId("server-errors");
  await expect(errors.getByRole("heading")).toHaveText(`Errors on server ${NEW_LEAK.job}`);
  await expect(errors).toContainText("3 occurrences in 2 issues");
  const first = errors.locator("tbody tr").first();
  await expect(first).toContainText("not enough memory to spawn pet");
  await expect(first.locator("td").nth(1)).toHaveText("2");
  await first.getByRole("link").click();
  await expect(page).toHaveURL(/\/issues\/[0-9a-f-]{36}$/);
  await expect(page.locator("h1, h2").filter({ hasText: "not enough memory" }).first()).toBeVisible();
});

test("screenshots of release health and live servers at 390 and 1280 px, light and dark", async ({ browser }) => {
  for (const colorScheme of ["light", "dark"] as const) {
    for (const width of [390, 1280]) {
      const context = await browser.newContext({ colorScheme, viewport: { width, height: 900 } });
      const page = await context.newPage();
      await signIn(page);
      for (const [name, path] of [
        ["release-health", `/projects/${projectId}/releases`],
        ["live-servers", `/projects/${projectId}/servers?job=${NEW_LEAK.job}`],
      ] as const) {
        await page.goto(path);
        await expect(page.locator("h2").first()).toBeVisible();
        const { scroll, inner } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));
        expect(scroll, `${name} is ${scroll} px wide in a ${inner} px viewport`).toBeLessThanOrEqual(inner);
        await page.screenshot({ path: `${SCREENS}/${name}-${width}-${colorScheme}.png`, fullPage: true });
      }
      await context.close();
    }
  }
});

test("a project without health reports is told how to turn it on", async ({ page, request }) => {
  const sql = createSql(process.env.E2E_DATABASE_URL!, 1);
  const { projectId: empty } = await makeProject(sql, owner.id, [], "No Health Yet");
  await sql.end();
  void request;
  await signIn(page);
  await page.setViewportSize({ width: 390, height: 900 });
  await page.goto(`/projects/${empty}/releases`);
  await expect(page.getByTestId("health-empty")).toContainText("sends them by default once it is updated");
  await expect(page.getByTestId("health-empty").getByRole("link", { name: "RobloxMonitor.luau" })).toHaveAttribute("href", "/sdk/RobloxMonitor.luau");
  await page.screenshot({ path: `${SCREENS}/release-health-empty-390.png`, fullPage: true });
  await page.goto(`/projects/${empty}/servers`);
  await expect(page.getByTestId("health-empty")).toBeVisible();
});
