import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser } from "../support/team.js";

/**
 * The currency-map preview is bounded whoever asks: a member pasting a profile of 100,000 keys with a
 * map of 20 currencies of `*` (2,000,000 places) gets a bounded answer that says what it did not list
 * (or where it stopped), a few previews a minute (429 with Retry-After past them, shown in the page),
 * and a push of such profiles skips them with the reason instead of reading millions of places.
 */
let app: TestApp;
const users: Record<"owner" | "member", { id: string; email: string; cookie: string }> = {} as never;
let projectId: string;
let apiKey: string;

/** about 830 KB of JSON: 100,000 keys, key i holding i % 10 */
const PROFILE = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [i.toString(36), i % 10]));
const PROFILE_TEXT = JSON.stringify(PROFILE);
const STARS = Array.from({ length: 20 }, (_, i) => ({ key: `c${i}`, name: `C${i}`, paths: ["*"] }));

/** The settings page's map form, as the editor posts it. */
function form(profile: string, currencies = STARS): URLSearchParams {
  const f = new URLSearchParams({ intent: "preview-map", names: "", data_code: "", match: "", profile });
  currencies.forEach((c, i) => {
    f.set(`currencies[${i}].key`, c.key);
    f.set(`currencies[${i}].name`, c.name);
    f.set(`currencies[${i}].paths`, c.paths.join("\n"));
  });
  return f;
}
/** Posts the form the way the page does: `.data` is the browser's fetch, "" a document POST without JavaScript. */
async function postForm(cookie: string, body: URLSearchParams, suffix: "" | ".data" = ".data") {
  const res = await app.request(`/projects/${projectId}/economy/settings${suffix}`, {
    method: "POST",
    headers: { cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" },
    body: body.toString(),
    redirect: "manual",
  });
  const text = await res.text();
  return { status: res.status, text: text.replaceAll("<!-- -->", ""), bytes: Buffer.byteLength(text), headers: res.headers };
}
const previewApi = (cookie: string, body: unknown) => call(app, "POST", `/api/team/projects/${projectId}/economy-map/preview`, { cookie, body });

beforeAll(async () => {
  app = await startTestApp();
  for (const who of ["owner", "member"] as const) {
    const u = await makeUser(app.sql);
    users[who] = { ...u, cookie: await login(app, u.email) };
  }
}, 60_000);
afterAll(() => app?.close());
beforeEach(async () => {
  ({ projectId, apiKey } = await makeProject(app.sql, users.owner.id, [{ userId: users.member.id, role: "member" }]));
});

describe("a preview of 20 currencies of * over 100,000 keys", () => {
  it("answers a member's form post in bounded size, saying what it did not list", async () => {
    const r = await postForm(users.member.cookie, form(PROFILE_TEXT));
    expect(r.status).toBe(200);
    // the draft comes back with the pasted profile (the editor keeps it); the rest is a few hundred KB at most
    expect(r.bytes).toBeLessThan(PROFILE_TEXT.length * 1.3 + 256 * 1024);
    expect(r.text.includes("the currency map visits more than 100,000 places in this profile")).toBe(true);
    expect(r.text.includes('"listed"')).toBe(true);
  }, 60_000);

  it("answers the page without JavaScript in bounded size, with “and N more places” and the push's verdict", async () => {
    const r = await postForm(users.owner.cookie, form(PROFILE_TEXT), "");
    expect(r.status).toBe(200);
    // the pasted profile comes back twice (the editor's textarea and the page's data), escaped; the preview itself is small
    expect(r.bytes).toBeLessThan(PROFILE_TEXT.length * 4.5 + 512 * 1024);
    expect(/data-testid="preview-more-c0">and (\d{1,3}(,\d{3})*) more places/.exec(r.text)?.[0]).toBeTruthy();
    expect(r.text.includes('data-testid="preview-push-skips"')).toBe(true);
  }, 60_000);

  it("lists at most 20 places per currency and 200 in all through the Team API; sums are exact or marked partial", async () => {
    const r = await previewApi(users.member.cookie, { map: { currencies: STARS }, profile: PROFILE });
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.body).length).toBeLessThan(256 * 1024);
    const { result, listed, stopped, push_skips } = r.body;
    expect(listed).toEqual({ per_currency: 20, total: 200 });
    expect(result.ok).toBe(true);
    expect(result.matches.length).toBeLessThanOrEqual(200);
    expect(result.matches.filter((m: any) => m.currency === "c0")).toHaveLength(20);
    expect(push_skips).toBe("the currency map visits more than 100,000 places in this profile: narrow its wildcard paths");
    // however far the budget let it read, every currency it finished is exact and counted whole
    const sum = String(Array.from({ length: 100_000 }, (_, i) => i % 10).reduce((a, b) => a + b, 0));
    for (const c of STARS) {
      if (result.partial.includes(c.key)) continue;
      expect(result.profile.balances[c.key], c.key).toBe(sum);
      expect(result.places[c.key], c.key).toBe(100_000);
    }
    if (result.partial.length > 0) expect(stopped).toMatch(/^The preview stopped at its budget/);
    else expect(stopped).toBeNull();
    // nothing is saved
    expect(await app.sql`select 1 from economy_maps where project_id = ${projectId}`).toHaveLength(0);
  }, 60_000);
});

describe("the preview's rate limit", () => {
  it("answers 429 with Retry-After past 10 previews a minute per user and project, in the page as a message", async () => {
    const small = { map: { currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }] }, profile: { Coins: 1 } };
    for (let i = 0; i < 10; i++) expect((await previewApi(users.member.cookie, small)).status, `preview ${i + 1}`).toBe(200);
    const api = await previewApi(users.member.cookie, small);
    expect(api.status).toBe(429);
    expect(api.body).toMatchObject({ error: "rate_limited", message: expect.stringContaining("Too many previews") });
    expect(Number(api.headers.get("retry-after"))).toBeGreaterThan(0);
    // the page's form shares the count and shows the message beside the editor
    const page = await postForm(users.member.cookie, form('{"Coins": 1}', [{ key: "coins", name: "Coins", paths: ["Coins"] }]));
    expect(page.status).toBe(429);
    expect(Number(page.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(page.text.includes("Too many previews")).toBe(true);
    // another member, or the same one on another project, has a budget of their own
    expect((await previewApi(users.owner.cookie, small)).status).toBe(200);
  });
});

describe("a push through a map of * everywhere", () => {
  it("skips each profile past 100,000 places with the reason and stores the others", async () => {
    const put = await call(app, "PUT", `/api/team/projects/${projectId}/economy-map`, { cookie: users.owner.cookie, body: { currencies: STARS } });
    expect(put.status).toBe(200);
    const heavy = Object.fromEntries(Array.from({ length: 6_000 }, (_, i) => [i.toString(36), 1]));
    const r = await postJson(app, "/api/economy/ingest", { players: [{ user_id: 1, profile: heavy }, { user_id: 2, profile: { a: 5 } }] }, apiKey);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      stored: 1,
      skipped: 1,
      skipped_reasons: [{ index: 0, user_id: "1", reason: "the currency map visits more than 100,000 places in this profile: narrow its wildcard paths" }],
    });
    const rows = await app.sql`select user_id::text, total::text from economy_snapshots where project_id = ${projectId}`;
    expect(rows).toEqual([{ user_id: "2", total: "100" }]);
  });
});
