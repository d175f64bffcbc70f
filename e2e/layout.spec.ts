import { expect, test, type Page } from "@playwright/test";
import { readdirSync } from "node:fs";
import path from "node:path";
import { createSql } from "../db/client.js";
import { FakeDiscord } from "../test/support/fake-discord.js";
import { makeProject, makeUser, PASSWORD } from "../test/support/team.js";
import { countersSettled } from "./support/counters.js";
import { SCREENS } from "./support/screens.js";

/**
 * Every dashboard page at a phone width (390 px) and a desktop width (1280 px), filled with long
 * content (long unbroken messages, paths, context values, player names, channel URLs) and with an
 * event expanded, checked for what makes a page hard to use on a phone:
 * - the page scrolls sideways (it is wider than the screen);
 * - chart labels are rendered smaller than MIN_CHART_TEXT_PX (an SVG scaled down to the screen);
 * - text is hidden sideways inside a box that scrolls or clips, with no shade at its edge telling
 *   that more is there (a tab bar cut at "Tr…", a table cut after its first columns);
 * - text squeezed into a column a few characters wide (a URL wrapping one character per line);
 * - a radio button or check box stretched as wide as a text field;
 * - on the issues list, a row's counts are not on screen without scrolling.
 * Screenshots of every page at both widths: narrow-<page>-<width>.png in SCREENS_DIR (e2e/support/screens.ts).
 */
const MIN_CHART_TEXT_PX = 11;
let projectId = "";
let groupId = "";
let shareUrl = "";
const TRACE = "7c0ffee0-2fa1-11d2-883f-0016d3cca427";
const PLAYER = "xX_TheVeryLongestPlayerNameAllowed_Xx";
const LONG_PATH = "Players.xX_TheVeryLongestPlayerNameAllowed_Xx.PlayerGui.InventoryScreenGuiWithEveryItem.MainFrameContainer.ScrollingFrameOfOwnedItems.ItemTemplateButton.LocalScript:57";
const LONG_MESSAGE = `${LONG_PATH}: attempt to index nil with 'EquippedItemDataWithAnExtraordinarilyLongFieldName'`;
const BLOB = "receipt_" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".repeat(3);

let discord: FakeDiscord;
let owner = { id: "", email: "" };
test.beforeAll(async ({ request }) => {
  discord = await new FakeDiscord().start();
  const sql = createSql(process.env.E2E_DATABASE_URL!, 2);
  owner = await makeUser(sql, `a.rather.long.studio.address.${Date.now()}@a-long-studio-domain.example.test`);
  const made = await makeProject(sql, owner.id, [], "Obby Deluxe Supreme: the longest game name a studio could think of");
  projectId = made.projectId;
  // the instance's audit log is a page too
  await sql`update users set instance_admin = true where id = ${owner.id}`;
  await sql.end();
  const key = { "x-api-key": made.apiKey };
  const now = Date.now();
  const at = (minAgo: number) => new Date(now - minAgo * 60_000).toISOString();
  const errors = [];
  for (let i = 0; i < 40; i++) {
    errors.push({
      message: i === 39 ? `${LONG_MESSAGE} ${BLOB}` : LONG_MESSAGE,
      stack_trace: `${LONG_PATH} function onEquipItemWithAVeryLongFunctionName\n${LONG_PATH.replace(":57", ":12")}`,
      user_id: 9_000_000_000 + (i % 5),
      player_name: i % 5 === 0 ? PLAYER : `Player_${i % 5}`,
      game_version: i < 20 ? "2026.11.24-hotfix-inventory-rework-build-1234" : "2026.11.25-release-candidate-build-5678",
      environment: i % 4 === 0 ? "staging-eu-west-long-environment-name" : "production",
      place_id: 18181818181818,
      job_id: "6f1c3a1e-aaaa-4bbb-8ccc-000000000001",
      context: { inventory: { slot: i, itemId: BLOB, note: "a context value that goes on and on without a single break: " + "x".repeat(120) } },
      tags: ["inventory-rework-experiment-group-b", `shard-${"a".repeat(60)}`],
      trace_id: i === 39 ? TRACE : undefined,
      timestamp: at(600 - i * 14),
    });
  }
  errors.push(
    { message: "DataStore request was added to queue. If request queue fills, further requests will be dropped. Try sending fewer requests.Key = Player_261", level: "warn", trace_id: TRACE, timestamp: at(30) },
    { message: `HttpService:GetAsync failed: https://api.a-very-long-partner-domain.example.com/v2/players/${BLOB}/inventory?include=everything`, level: "info", count: 123456, timestamp: at(5) },
  );
  const r = await request.post("/api/ingest", { headers: key, data: { errors } });
  expect(r.status()).toBe(200);
  const profile = (cash: number, bank: number) => ({ RPCharacterOne: { Name: "A Character Name That Is Long", Cash: cash, InATM: bank, DarkCoin: 3 } });
  await request.post("/api/economy/ingest", { headers: key, data: { players: [{ user_id: 9_000_000_000, username: PLAYER, display_name: PLAYER, profile: profile(120, 900) }, { user_id: 9_000_000_001, username: "Player_1", profile: profile(4_370_956_012_345, 93_000_000_000) }] } });
  await request.post("/api/economy/ingest", { headers: key, data: { players: [{ user_id: 9_000_000_000, username: PLAYER, profile: profile(48_850_689_640, 900) }] } });
  await countersSettled();

  expect((await request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } })).status()).toBe(200);
  const list = await (await request.get(`/api/v1/errors?grouped=true&search=EquippedItemData`, { headers: key })).json();
  groupId = list.data[0].id;
  const share = await request.post(`/api/team/projects/${projectId}/share-links`, { data: { group_id: groupId, role: "viewer" } });
  shareUrl = new URL((await share.json()).url).pathname;
  const channels = [
    { name: "Discord #errors-and-crashes-for-the-whole-studio", kind: "discord", url: discord.webhookUrl("123456789012345678", "a-long-secret-token") },
    { name: "Studio webhook", kind: "webhook", url: `https://hooks.a-very-long-studio-infrastructure-domain.example.com/services/T0123456789/B0123456789/${BLOB}` },
  ];
  const ids = [];
  for (const c of channels) {
    const res = await request.post(`/api/team/projects/${projectId}/channels`, { data: c });
    expect(res.status()).toBe(201);
    const body = await res.json();
    ids.push(body.channel.id);
  }
  await request.post(`/api/team/projects/${projectId}/rules`, {
    data: { name: "Inventory errors in the staging environment, loudly", trigger: "frequency", threshold_count: 50, window_minutes: 5, levels: ["error", "warn"], environments: ["staging-eu-west-long-environment-name"], message_contains: "EquippedItemDataWithAnExtraordinarilyLongFieldName", channel_ids: ids },
  });
  await request.post(`/api/team/projects/${projectId}/rules`, { data: { name: "New issues", trigger: "new_group", channel_ids: [ids[0]] } });
  const sent = await request.post("/api/notifications/test", { data: { channel_id: ids[0] } });
  expect(sent.status(), await sent.text()).toBe(200);
  // what people type: an unbroken comment, long key and member names, an assignment, a grouping rule
  const P = `/api/team/projects/${projectId}`;
  const more = [
    await request.post(`${P}/groups/${groupId}/comments`, { data: { body: `Seen again after ${BLOB}, see https://studio.example.com/${BLOB}` } }),
    await request.post(`${P}/keys`, { data: { name: "ci_" + "x".repeat(97) } }),
    await request.post(`${P}/dsn-keys`, { data: { name: "sentry_" + "y".repeat(93) } }),
    await request.post(`${P}/members`, { data: { email: `someone.with.${"z".repeat(60)}@a-long-studio-domain.example.test`, role: "admin" } }),
    await request.patch(`${P}/groups/${groupId}`, { data: { assignee_id: owner.id } }),
    await request.post(`${P}/grouping-rules`, { data: { name: "Inventory " + "w".repeat(80), action: "group", match: { message: LONG_MESSAGE } } }),
  ];
  for (const r of more) expect(r.status(), await r.text()).toBeLessThan(300);
});
test.afterAll(async () => {
  await discord?.close();
});

/** What makes the page hard to read at this width, one line per problem (empty when none). */
async function layoutProblems(page: Page, minChartPx: number): Promise<string[]> {
  return page.evaluate((minChartPx) => {
    const problems: string[] = [];
    const w = window.innerWidth;
    const name = (el: Element) => {
      const text = (el.textContent ?? "").trim().replace(/\s+/g, " ");
      return `${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.trim().replace(/\s+/g, ".") : ""} "${text.length > 30 ? text.slice(0, 30) + "…" : text}"`;
    };
    const all = [...document.body.querySelectorAll("*")];
    const visible = (el: Element) => {
      const r = el.getBoundingClientRect();
      return r.width > 1 && r.height > 1 && getComputedStyle(el).visibility !== "hidden";
    };

    // 1. the page itself scrolls sideways
    const scroll = document.documentElement.scrollWidth;
    if (scroll > w) {
      // the innermost elements that stick out, leaving out those a box that clips already holds in
      const held = (el: Element) => {
        for (let box = el.parentElement; box && box !== document.body; box = box.parentElement) {
          if (getComputedStyle(box).overflowX !== "visible") return box.getBoundingClientRect().right <= w + 0.5;
        }
        return false;
      };
      const out = all.filter((el) => el.getBoundingClientRect().right > w + 0.5 && !held(el) && ![...el.children].some((c) => c.getBoundingClientRect().right > w + 0.5));
      problems.push(`the page is ${scroll} px wide in a ${w} px viewport: ${out.slice(0, 4).map(name).join(", ")}`);
    }

    // 2. chart text rendered too small (font size in the SVG's units times the SVG's scale)
    for (const t of document.querySelectorAll("svg text")) {
      if (!visible(t)) continue;
      const ctm = (t as SVGTextElement).getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * (ctm ? Math.hypot(ctm.a, ctm.b) : 1);
      if (px < minChartPx - 0.01) {
        problems.push(`chart text ${name(t)} is rendered ${px.toFixed(1)} px high (at least ${minChartPx})`);
        break;
      }
    }

    const textElements = all.filter((el) => visible(el) && [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim()));
    // 3. text hidden sideways in a box that clips or scrolls, with no shade at the edge saying so
    const cut = new Map<Element, Element[]>();
    const hasCue = (box: Element) => [box, box.parentElement].some((el) => el && /gradient/.test(getComputedStyle(el).backgroundImage));
    for (const el of textElements) {
      if (el.closest("svg")) continue;
      const r = el.getBoundingClientRect();
      for (let box = el.parentElement; box && box !== document.body; box = box.parentElement) {
        const s = getComputedStyle(box);
        if (s.overflowX === "visible") continue;
        const b = box.getBoundingClientRect();
        if (r.right > b.right + 1 || r.left < b.left - 1) {
          const scrolls = s.overflowX === "auto" || s.overflowX === "scroll";
          if (!scrolls || !hasCue(box)) cut.set(box, [...(cut.get(box) ?? []), el]);
        }
        break;
      }
    }

    for (const [box, els] of cut) {
      const scrolls = /auto|scroll/.test(getComputedStyle(box).overflowX);
      problems.push(`${els.length} texts (${els.slice(0, 3).map(name).join(", ")}…) are cut off by ${name(box)}${scrolls ? ", which scrolls with no sign that it does" : ""}`);
    }

    // 4. text squeezed into a column a few characters wide (a word or URL wrapping letter by letter):
    // the lines its own text takes, counted from the text's boxes (a cell is as tall as its row)
    for (const el of textElements) {
      const text = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join("").trim();
      if (text.length < 12) continue;
      const tops = new Set<number>();
      for (const n of el.childNodes) {
        if (n.nodeType !== Node.TEXT_NODE) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top));
      }
      const lines = tops.size;
      if (lines >= 3 && text.length / lines < 5) problems.push(`${name(el)} wraps into ${lines} lines of ${Math.round(text.length / lines)} characters`);
    }

    // 5. a radio button or check box stretched by a rule for text fields (its label squeezed beside a
    // wide empty box, or pushed onto its own line)
    for (const box of document.querySelectorAll("input[type=radio], input[type=checkbox]")) {
      if (!visible(box)) continue;
      const r = box.getBoundingClientRect();
      if (r.width > 3 * Math.max(r.height, 13)) problems.push(`${name(box.parentElement ?? box)}: a ${(box as HTMLInputElement).type} is ${Math.round(r.width)} px wide`);
    }
    return problems;
  }, minChartPx);
}

/** Every cell of the page's tables is on screen without scrolling the table. */
async function cellsOffScreen(page: Page, table: string): Promise<string[]> {
  return page.locator(table).evaluateAll((tables) =>
    tables.flatMap((t) => {
      const b = t.getBoundingClientRect();
      return [...t.querySelectorAll("th, td")]
        .filter((c) => c.getBoundingClientRect().width > 0 && (c.getBoundingClientRect().right > Math.min(b.right, window.innerWidth) + 1))
        .map((c) => `"${(c.textContent ?? "").trim().slice(0, 20)}" is off screen`);
    }),
  );
}

const pages = () => [
  ["projects", "/projects"],
  ["account", "/account"],
  ["two-factor", "/account/two-factor"],
  ["overview", `/projects/${projectId}?timeframe=24h`],
  ["overview-7d", `/projects/${projectId}`],
  ["issues", `/projects/${projectId}/issues?status=all`],
  ["issue", `/projects/${projectId}/issues/${groupId}`],
  ["releases", `/projects/${projectId}/releases`],
  ["servers", `/projects/${projectId}/servers`],
  ["players", `/projects/${projectId}/players`],
  ["player", `/projects/${projectId}/players/9000000000`],
  ["traces", `/projects/${projectId}/traces`],
  ["trace", `/projects/${projectId}/traces/${TRACE}`],
  ["economy", `/projects/${projectId}/economy`],
  ["economy-player", `/projects/${projectId}/economy/players/9000000000`],
  ["economy-settings", `/projects/${projectId}/economy/settings`],
  ["alerts", `/projects/${projectId}/alerts`],
  ["deliveries", `/projects/${projectId}/deliveries`],
  ["settings", `/projects/${projectId}/settings`],
  ["audit", `/projects/${projectId}/audit`],
  ["new-project", "/projects/new"],
  ["notifications", "/notifications"],
  ["instance-audit", "/instance/audit"],
];

/**
 * Every dashboard page route (app/routes/_dash.*.tsx, layouts aside) as the pattern of its path, so
 * a page added later without a layout check fails the test that follows.
 */
function dashboardRoutes(): { file: string; pattern: RegExp }[] {
  const layouts = new Set(["_dash.tsx", "_dash.projects.$projectId.tsx"]);
  return readdirSync(path.join(process.cwd(), "app/routes"))
    .filter((f) => f.startsWith("_dash.") && f.endsWith(".tsx") && !layouts.has(f))
    .map((file) => {
      const segments = file
        .slice("_dash.".length, -".tsx".length)
        .split(".")
        .filter((s) => s !== "_index")
        .map((s) => (s.startsWith("$") ? "[^/]+" : s.replace(/_$/, "")));
      return { file, pattern: new RegExp(`^/${segments.join("/")}$`) };
    });
}

test("the layout check opens every dashboard page", () => {
  const paths = pages().map(([, p]) => p.split("?")[0]);
  const missing = dashboardRoutes().filter((r) => !paths.some((p) => r.pattern.test(p)));
  expect(missing.map((r) => r.file)).toEqual([]);
});

for (const width of [390, 1280]) {
  test(`every page at ${width} px with long content: no sideways scroll, nothing cut off, readable charts`, async ({ browser }) => {
    const context = await browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    expect((await page.request.post("/api/auth/login", { data: { email: owner.email, password: PASSWORD } })).status()).toBe(200);
    const found: string[] = [];
    const check = async (name: string) => {
      await page.screenshot({ path: `${SCREENS}/narrow-${name}-${width}.png`, fullPage: true });
      for (const p of await layoutProblems(page, MIN_CHART_TEXT_PX)) found.push(`${name}: ${p}`);
    };
    for (const [name, path] of pages()) {
      expect((await page.goto(path))?.status(), path).toBe(200);
      // every folded part open (events, edit forms, help), so what it holds is checked too
      await page.locator("details").evaluateAll((ds) => ds.forEach((d) => ((d as HTMLDetailsElement).open = true)));
      if (name === "issue") await expect(page.locator("details.event dd", { hasText: BLOB }).first()).toBeVisible();
      if (name === "issues") for (const p of await cellsOffScreen(page, "table.issues")) found.push(`issues: ${p}`);
      await check(name);
      if (name === "two-factor") {
        // the enrollment step: the QR code, the key to type in, the code to confirm (the run at the
        // other width may have started it already)
        const secret = page.getByTestId("two-factor-secret");
        if (!(await secret.isVisible())) await page.getByRole("button", { name: "Set up two-factor" }).click();
        await expect(page.getByTestId("two-factor-secret")).toBeVisible();
        await check("two-factor-setup");
      }
    }
    await context.clearCookies();
    expect((await page.goto(shareUrl))?.status()).toBe(200);
    await check("share");
    await context.close();
    expect(found, found.join("\n")).toEqual([]);
  });
}
