import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, logFile, migratedDatabaseUrl, startTestApp, type TestApp } from "../support/server.js";
import { waitFor } from "../support/wait.js";

/**
 * Each request's log line (docs/operations.md, "Logs"): a JSON line with level, time, request id,
 * method, route, status and duration, the id also in the `X-Request-Id` answer header; lines the app
 * and db/ log while serving carry the same id, at the level and in the format the process set.
 */
let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await migratedDatabaseUrl();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const logLines = () =>
  readFileSync(logFile(), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

/** The lines logged with this request id, once its request line is written. */
async function linesOf(reqId: string) {
  let lines: Record<string, any>[] = [];
  await waitFor(() => (lines = logLines().filter((l) => l.reqId === reqId)).some((l) => l.msg === "request"));
  return lines;
}

/** The sign-in form's post that starts an OpenID Connect sign-in. */
const startSignIn = (app: TestApp): RequestInit => ({
  method: "POST",
  headers: { origin: app.url, "content-type": "application/x-www-form-urlencoded" },
  body: "",
  redirect: "manual",
});

async function send(app: TestApp, path: string, init: RequestInit = {}) {
  const res = await app.request(path, init);
  await res.arrayBuffer();
  const reqId = res.headers.get("x-request-id");
  expect(reqId, path).toBeTruthy();
  return { status: res.status, reqId: reqId!, lines: await linesOf(reqId!) };
}

describe("request lines", () => {
  let app: TestApp;
  let apiKey: string;
  beforeAll(async () => {
    app = await startTestApp({ LOG_REQUESTS: "true", OIDC_PROVIDERS: "nowhere", OIDC_NOWHERE_ISSUER: "http://127.0.0.1:9/", OIDC_NOWHERE_CLIENT_ID: "monitor", OIDC_NOWHERE_CLIENT_SECRET: "oidc-client-secret-of-the-request-log-test" }, databaseUrl);
    ({ apiKey } = await createProject(app.sql));
  });
  afterAll(() => app?.close());

  it("names each request by its route, with level, time, id, method, status and duration", async () => {
    const ingest = await send(app, "/api/ingest", { method: "POST", headers: { "content-type": "application/json", "x-api-key": apiKey }, body: JSON.stringify({ message: "Shop failed" }) });
    expect(ingest.status).toBe(200);
    expect(ingest.reqId).toMatch(UUID);
    const line = ingest.lines.find((l) => l.msg === "request")!;
    expect(line).toMatchObject({ level: "info", reqId: ingest.reqId, method: "POST", route: "routes/api.ingest", status: 200 });
    expect(typeof line.duration).toBe("number");
    expect(line.duration).toBeGreaterThanOrEqual(0);
    expect(Date.parse(line.time)).not.toBeNaN();

    // a refused request, a page, a built asset, a path no route serves: a bounded label, never the path
    const refused = await send(app, "/api/ingest", { method: "POST", headers: { "content-type": "application/json", "x-api-key": "rbx_not-a-key-at-all-000000000000" }, body: "{}" });
    expect(refused.lines.find((l) => l.msg === "request")).toMatchObject({ route: "routes/api.ingest", status: 401, level: "info" });
    const page = await send(app, "/setup");
    expect(page.lines.find((l) => l.msg === "request")).toMatchObject({ route: "routes/setup", status: 200 });
    const missing = await send(app, "/nowhere/at/all");
    expect(missing.lines.find((l) => l.msg === "request")).toMatchObject({ route: "other", status: 404 });
    const player = await send(app, `/api/v1/players/123456789`, { headers: { "x-api-key": apiKey } });
    expect(player.lines.find((l) => l.msg === "request")!.route).toBe("routes/api.v1.players.$userId");
    expect(JSON.stringify(player.lines)).not.toContain("123456789");
  });

  it("ignores an incoming X-Request-Id without a trusted proxy", async () => {
    const r = await send(app, "/api/ingest", { headers: { "x-request-id": "from-the-client-1234" } });
    expect(r.reqId).toMatch(UUID);
  });

  it("carries the request's id on the lines the app logs while serving it", async () => {
    // the provider's discovery fails (nothing listens there): app/accounts/oidc.server.ts warns
    const r = await send(app, "/auth/oidc/nowhere/start", startSignIn(app));
    const warning = r.lines.find((l) => String(l.msg).startsWith("oidc: discovery for nowhere"));
    expect(warning).toMatchObject({ level: "warn", reqId: r.reqId });
    // the answer is a 502, whose request line is at least warn (LOG_REQUESTS=true here says info)
    expect(r.lines.find((l) => l.msg === "request")).toMatchObject({ level: "warn", status: 502, route: "routes/auth.oidc.$provider.start" });
  });

  it("lets db/ code log through the same logger (the counter drain's work at debug)", async () => {
    await waitFor(() => logLines().some((l) => l.level === "debug" && /^\[counters\] drain applied \d+ pending rows$/.test(l.msg)));
  });
});

describe("settings", () => {
  it("takes a well-formed X-Request-Id from a trusted proxy, and makes its own for a malformed one", async () => {
    const app = await startTestApp({ TRUST_PROXY: "1" }, databaseUrl);
    try {
      const taken = await send(app, "/api/ingest", { headers: { "x-request-id": "lb-7f3a:0001" } });
      expect(taken.reqId).toBe("lb-7f3a:0001");
      // request lines are at debug unless LOG_REQUESTS says otherwise
      expect(taken.lines.find((l) => l.msg === "request")).toMatchObject({ level: "debug", route: "routes/api.ingest" });
      const malformed = await send(app, "/api/ingest", { headers: { "x-request-id": "two words\u00e9" } });
      expect(malformed.reqId).toMatch(UUID);
    } finally {
      await app.close();
    }
  });

  it("LOG_LEVEL holds for the app's lines too", async () => {
    const app = await startTestApp(
      { LOG_LEVEL: "error", OIDC_PROVIDERS: "nowhere", OIDC_NOWHERE_ISSUER: "http://127.0.0.1:9/", OIDC_NOWHERE_CLIENT_ID: "monitor", OIDC_NOWHERE_CLIENT_SECRET: "oidc-client-secret-of-the-request-log-test" },
      databaseUrl,
    );
    try {
      const res = await app.request("/auth/oidc/nowhere/start", startSignIn(app));
      await res.arrayBuffer();
      const reqId = res.headers.get("x-request-id")!;
      // the warning is logged before the answer (the first server of this file wrote it), and the
      // 502's request line is at warn: nothing of this request is written
      expect(res.status).toBe(502);
      expect(logLines().filter((l) => l.reqId === reqId)).toEqual([]);
    } finally {
      await app.close();
    }
  });
});
