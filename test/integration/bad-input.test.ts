import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jsonHeaders, postJson, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * Hostile input that PostgreSQL or the JSON serializer cannot take answers a 400 with the one error
 * body and writes nothing; in an economy batch only the bad player is skipped.
 */
let app: TestApp;
let projectId: string;
let apiKey: string;
let cookie: string;

beforeAll(async () => {
  // each refused preview here counts against the per-user preview limit, which has its own test
  app = await startTestApp({ ECONOMY_PREVIEW_RATE_LIMIT: "1000" });
  const owner = await makeUser(app.sql);
  ({ projectId, apiKey } = await makeProject(app.sql, owner.id));
  cookie = await login(app, owner.email);
});
afterAll(() => app?.close());

function expect400(r: { status: number; body: any }, code: string, path?: string) {
  expect(r.status, JSON.stringify(r.body)).toBe(400);
  expect(r.body.error).toBe(code);
  expect(typeof r.body.message).toBe("string");
  if (path) expect(r.body.details?.map((d: any) => d.path)).toContain(path);
}

const eventCount = async (message: string) =>
  Number((await app.sql`select count(*)::int as n from events where project_id = ${projectId} and message = ${message}`)[0].n);

/** `depth` arrays nested inside each other, as raw JSON text (no serializer involved). */
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

describe("POST /api/ingest", () => {
  it("context nested 4,000 levels deep (8 KB) is a 400 naming context; nothing is stored", async () => {
    const body = `{"errors":[{"message":"deep ok"},{"message":"deep context","context":{"a":${nestedArrays(4000)}}}]}`;
    expect(Buffer.byteLength(body)).toBeLessThan(16 * 1024);
    const r = await postJson(app, "/api/ingest", body, apiKey);
    expect400(r, "invalid_payload", "errors[1].context");
    expect(r.body.message).toContain("20 levels");
    expect(await eventCount("deep ok")).toBe(0);
  });

  it("context up to 20 levels (the context object included) is stored as sent", async () => {
    const ok = await postJson(app, "/api/ingest", `{"message":"depth 20","context":{"a":${nestedArrays(19)}}}`, apiKey);
    expect(ok.status).toBe(200);
    const [row] = await app.sql`select context from events where project_id = ${projectId} and message = 'depth 20'`;
    expect(JSON.stringify(row.context)).toBe(`{"a":${nestedArrays(19)}}`);
    expect400(await postJson(app, "/api/ingest", `{"message":"depth 21","context":{"a":${nestedArrays(20)}}}`, apiKey), "invalid_payload", "context");
    expect(await eventCount("depth 21")).toBe(0);
  });

  it("breadcrumb data nested 10,000 levels deep (20 KB) is a 400 naming it, as context is; nothing is stored", async () => {
    const deep = '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000);
    for (const [body, path] of [
      [`{"errors":[{"message":"crumb ok"},{"message":"deep crumb","breadcrumbs":[{"message":"m","data":${deep}}]}]}`, "errors[1].breadcrumbs[0].data"],
      [`{"message":"deep crumb","breadcrumbs":[{"category":"ui"},{"data":{"a":${nestedArrays(10_000)}}}]}`, "breadcrumbs[1].data"],
      [`{"message":"deep crumb","breadcrumbs":[{"message":"m","data":{"a":${nestedArrays(30)}}}]}`, "breadcrumbs[0].data"],
    ]) {
      const r = await postJson(app, "/api/ingest", body, apiKey);
      expect400(r, "invalid_payload", path);
      expect(r.body.message).toContain("20 levels");
    }
    expect(await eventCount("crumb ok")).toBe(0);
    expect(await eventCount("deep crumb")).toBe(0);
  });

  it("any field nested past the body's limit is a 400 naming its path, with an Idempotency-Key too", async () => {
    const deep = nestedArrays(10_000);
    for (const [body, path] of [
      [`{"message":"deep tag","tags":[${deep}]}`, "tags[0]"],
      [`{"message":"deep id","event_id":${deep}}`, "event_id"],
      [`{"message":"deep unknown","extra":${deep}}`, "extra[0]"],
      [`{"errors":[{"message":"deep fingerprint","fingerprint":[${deep}]}]}`, "errors[0].fingerprint"],
    ]) {
      const r = await app.request("/api/ingest", { method: "POST", headers: { ...jsonHeaders(apiKey), "idempotency-key": `deep-${path}` }, body });
      const text = await r.text();
      expect400({ status: r.status, body: JSON.parse(text) }, "invalid_payload");
      expect(JSON.parse(text).details[0].path.startsWith(path), text.slice(0, 300)).toBe(true);
    }
    for (const m of ["deep tag", "deep id", "deep unknown", "deep fingerprint"]) expect(await eventCount(m)).toBe(0);
  });

  it("timestamps before 1970 (year 0000 included) are a 400 naming the field; the batch stores nothing", async () => {
    for (const ts of ["0000-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "1900-06-01T12:00:00+02:00", "1969-12-31T23:59:59.999Z"]) {
      const r = await postJson(app, "/api/ingest", { errors: [{ message: "early sibling" }, { message: "early", timestamp: ts }] }, apiKey);
      expect400(r, "invalid_payload", "errors[1].timestamp");
      expect(r.body.message).toContain("1970");
    }
    expect(await eventCount("early sibling")).toBe(0);
  });

  it("the Unix epoch is stored as sent; year 9999 is clamped to the receive time", async () => {
    const before = Date.now();
    await ingest(app, apiKey, { errors: [{ message: "epoch", timestamp: "1970-01-01T00:00:00Z" }, { message: "far future", timestamp: "9999-12-31T23:59:59.999Z" }] });
    const rows = await app.sql<{ message: string; timestamp: Date }[]>`
      select message, timestamp from events where project_id = ${projectId} and message in ('epoch', 'far future')`;
    const at = Object.fromEntries(rows.map((r) => [r.message, r.timestamp.getTime()]));
    expect(at.epoch).toBe(0);
    expect(at["far future"]).toBeGreaterThanOrEqual(before - 1000);
    expect(at["far future"]).toBeLessThanOrEqual(Date.now() + 1000);
  });
});

describe("POST /api/economy/ingest", () => {
  const player = (userId: number, extra: Record<string, unknown> = {}, name = "Marcus Vale") => ({
    user_id: userId,
    username: `player${userId}`,
    profile: { RPCharacterOne: { Name: name, Cash: 100, InATM: 5, DarkCoin: 1 } },
    ...extra,
  });
  const stored = async (ids: number[]) =>
    (await app.sql<{ user_id: string }[]>`
      select user_id::text from economy_snapshots where project_id = ${projectId} and user_id = any(${ids.map(String)}::bigint[])
      order by user_id`).map((r) => r.user_id);

  it("a NUL or lone surrogate in Name, username or display_name skips that player only", async () => {
    const r = await postJson(
      app,
      "/api/economy/ingest",
      {
        players: [
          player(501, {}, "Bad\u0000Name"),
          player(502, { username: "lone\ud800" }),
          player(503, { display_name: "\udc00tail" }),
          player(504, {}, "Second\udbffHalf"),
          player(505),
        ],
      },
      apiKey,
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ stored: 1, skipped: 4 });
    expect(await stored([501, 502, 503, 504, 505])).toEqual(["505"]);
  });

  it("a batch whose only player has such a name is a 400 naming it; nothing is stored", async () => {
    const r = await postJson(app, "/api/economy/ingest", { players: [player(511, { display_name: "x\u0000" })] }, apiKey);
    expect400(r, "invalid_payload", "players[0]");
    expect(r.body.details[0].message).toContain("NUL");
    expect(await stored([511])).toEqual([]);
  });

  it("a profile nested 10,000 levels deep is a 400 naming it, with or without an Idempotency-Key; nothing is stored", async () => {
    const body = `{"players":[${JSON.stringify(player(531))},{"user_id":532,"profile":{"RPCharacterOne":{"Cash":1,"Bag":${nestedArrays(10_000)}}}}]}`;
    for (const key of [null, "deep-push"]) {
      const r = await app.request("/api/economy/ingest", { method: "POST", headers: { ...jsonHeaders(apiKey), ...(key ? { "idempotency-key": key } : {}) }, body });
      const text = await r.text();
      expect400({ status: r.status, body: JSON.parse(text) }, "invalid_payload");
      expect(JSON.parse(text).details[0].path).toMatch(/^players\[1\]\.profile\.RPCharacterOne\.Bag\[0\]/);
    }
    expect(await stored([531, 532])).toEqual([]);
  });

  it("a name cut at the length limit never keeps half of a surrogate pair", async () => {
    const long = "a".repeat(199) + "😀tail";
    const r = await postJson(app, "/api/economy/ingest", { players: [player(521, { username: long, display_name: long }, long)] }, apiKey);
    expect(r.body).toMatchObject({ stored: 1, skipped: 0 });
    const [row] = await app.sql`
      select username, display_name, display_names from economy_snapshots where project_id = ${projectId} and user_id = 521`;
    expect(row.display_names).toEqual(["a".repeat(199)]);
    expect(row.username).toBe("a".repeat(199) + "😀tail");
  });
});

describe("extreme balances", () => {
  it("an anomaly whose factor no double can hold (5e-324 to 1e308) lists with factor null instead of a 500", async () => {
    const push = (cash: number) =>
      postJson(app, "/api/economy/ingest", { players: [{ user_id: 531, profile: { RPCharacterOne: { Cash: cash } } }] }, apiKey);
    expect((await push(5e-324)).body).toMatchObject({ stored: 1, skipped: 0 });
    expect((await push(1e308)).body).toMatchObject({ stored: 1, skipped: 0 });
    const res = await app.request("/api/v1/economy/anomalies?min_amount=1.5", { headers: { "x-api-key": apiKey } });
    expect(res.status).toBe(200);
    const body = await res.json();
    const row = body.data.find((a: any) => a.user_id === "531");
    expect(row).toMatchObject({ factor: null, to_total: "1" + "0".repeat(308) });
    const page = await app.request(`/projects/${projectId}/economy`, { headers: { cookie } });
    expect(page.status).toBe(200);
  });
});

describe("NUL in a query", () => {
  const get = (path: string, headers: Record<string, string>) => app.request(path, { headers, redirect: "manual" });
  const api = ["/api/v1/errors", "/api/v1/errors?grouped=true", "/api/v1/economy/players"];

  it("search or environment with %00 on the APIs is a 400 invalid_query naming the parameter", async () => {
    for (const base of api) {
      for (const param of base.includes("economy") ? ["search"] : ["search", "environment"]) {
        const sep = base.includes("?") ? "&" : "?";
        const res = await get(`${base}${sep}${param}=a%00b`, { "x-api-key": apiKey });
        expect400({ status: res.status, body: await res.json() }, "invalid_query", param);
      }
    }
  });

  it("the dashboard issue and economy pages answer 400 (not 500) to search or environment with %00", async () => {
    for (const path of [
      `/projects/${projectId}/issues?search=%00`,
      `/projects/${projectId}/issues?environment=%00`,
      `/projects/${projectId}/issues?status=all&search=nil%00`,
      `/projects/${projectId}/economy?search=%00`,
    ]) {
      const res = await get(path, { cookie });
      expect(res.status, path).toBe(400);
      expect(res.headers.get("content-type"), path).toContain("text/html");
      expect(await res.text(), path).toContain("NUL");
    }
  });

  it("an ordinary search still answers 200", async () => {
    const res = await get(`/projects/${projectId}/issues?search=nil&environment=production`, { cookie });
    expect(res.status).toBe(200);
  });
});

describe("Team API text", () => {
  it("a NUL or lone surrogate in a name is a 400 naming the field; nothing is written", async () => {
    for (const name of ["Game\u0000", "Game\ud800"]) {
      const r = await call(app, "POST", "/api/team/projects", { cookie, body: { name } });
      expect400(r, "invalid_payload", "name");
    }
    const rename = await call(app, "PATCH", `/api/team/projects/${projectId}`, { cookie, body: { name: "x\u0000y" } });
    expect400(rename, "invalid_payload", "name");
    const [row] = await app.sql`select count(*)::int as n from projects where name like 'Game%' or name like 'x%'`;
    expect(row.n).toBe(0);
  });
});

describe("the currency map", () => {
  const valid = () => ({
    currencies: [{ key: "cash", name: "Cash", paths: ["RPCharacterOne.Cash"] }],
    names: ["RPCharacterOne"],
    data_code: "DataCode",
    match: ["RPCharacterOne"],
  });
  const saved = async () => (await app.sql`select count(*)::int as n from economy_maps where project_id = ${projectId}`)[0].n;

  it("a NUL or lone surrogate in any of its texts is a 400 naming the field; nothing is written", async () => {
    const cases: [string, (m: any, bad: string) => void][] = [
      ["currencies[0].name", (m, bad) => (m.currencies[0].name = `Ca${bad}sh`)],
      ["currencies[0].key", (m, bad) => (m.currencies[0].key = `cash${bad}`)],
      ["currencies[0].paths[0]", (m, bad) => (m.currencies[0].paths[0] = `["Ca${bad}sh"]`)],
      ["names[0]", (m, bad) => (m.names[0] = `["N${bad}"]`)],
      ["data_code", (m, bad) => (m.data_code = `["D${bad}"]`)],
      ["match[0]", (m, bad) => (m.match[0] = `["M${bad}"]`)],
    ];
    for (const bad of ["\u0000", "\ud800", "\udc00"]) {
      for (const [path, spoil] of cases) {
        const body = valid();
        spoil(body, bad);
        const r = await call(app, "PUT", `/api/team/projects/${projectId}/economy-map`, { cookie, body });
        expect400(r, "invalid_payload", path);
        const preview = await call(app, "POST", `/api/team/projects/${projectId}/economy-map/preview`, { cookie, body: { map: body, profile: { RPCharacterOne: { Cash: 1 } } } });
        expect400(preview, "invalid_payload", path);
      }
    }
    expect(await saved()).toBe(0);
  });

  // a form carries no lone surrogate (a browser sends U+FFFD): NUL is what reaches the map from there
  it("the settings form answers 400 with the field marked for a NUL in its texts; nothing is written", async () => {
    for (const [field, value] of [
      ["currencies[0].name", "Ca\u0000sh"],
      ["currencies[0].paths", '["Ca\u0000sh"]'],
      ["names", '["N\u0000"]'],
      ["match", '["M\u0000"]'],
      ["data_code", '["D\u0000"]'],
    ]) {
      const form = new URLSearchParams({
        intent: "save-map",
        "currencies[0].key": "cash",
        "currencies[0].name": "Cash",
        "currencies[0].paths": "RPCharacterOne.Cash",
        names: "",
        data_code: "",
        match: "",
        [field]: value,
      });
      const r = await app.request(`/projects/${projectId}/economy/settings`, {
        method: "POST",
        headers: { cookie, origin: app.url, "content-type": "application/x-www-form-urlencoded" },
        body: form.toString(),
        redirect: "manual",
      });
      const text = await r.text();
      expect(r.status, `${field}: ${text.slice(0, 300)}`).toBe(400);
      // a path's quoted key holding a NUL is not JSON, so it is already not a path
      if (field === "currencies[0].name") expect(text).toContain("Display name must not contain NUL characters or unpaired surrogates");
    }
    expect(await saved()).toBe(0);
  });
});

describe("malformed percent-escapes in a path", () => {
  it("name nothing: an API answers 404 with the error body, a page 404, never a stack trace", async () => {
    for (const path of ["/api/v1/errors/%FF", "/api/v1/errors/%ED%A0%80", "/api/v1/traces/%", "/api/nothing/%E0%A4%A"]) {
      const res = await app.request(path, { headers: { "x-api-key": apiKey } });
      expect(res.status, path).toBe(404);
      expect(res.headers.get("content-type"), path).toContain("application/json");
      expect((await res.json()).error, path).toBe("not_found");
    }
    const page = await app.request(`/projects/${projectId}/issues/%FF`, { headers: { cookie } });
    expect(page.status).toBe(404);
    expect(await page.text()).not.toContain("URIError");
  });
});
