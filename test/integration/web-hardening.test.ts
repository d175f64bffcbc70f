import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logFile, startTestApp, type TestApp } from "../support/server.js";
import { call, ingest, login, makeProject, makeUser } from "../support/team.js";

/**
 * Web hardening: security headers on every response, forwarded headers believed only from a trusted
 * proxy (TRUST_PROXY) and only as http/https, and share tokens kept out of request logs.
 */
let direct: TestApp; // TRUST_PROXY=0 (the default), LOG_REQUESTS=true
let proxied: TestApp; // TRUST_PROXY=1, same database
let cookie: string;
let projectId: string;
let groupId: string;

beforeAll(async () => {
  direct = await startTestApp({ LOG_REQUESTS: "true" });
  proxied = await startTestApp({ TRUST_PROXY: "1" }, direct.databaseUrl);
  const u = await makeUser(direct.sql);
  let apiKey: string;
  ({ projectId, apiKey } = await makeProject(direct.sql, u.id));
  cookie = await login(direct, u.email);
  await ingest(direct, apiKey, { message: "Shop failed" });
  [{ id: groupId }] = await direct.sql`select id from error_groups where project_id = ${projectId}`;
});
afterAll(async () => {
  await proxied?.close();
  await direct?.close();
});

const createLink = (app: TestApp, headers: Record<string, string> = {}) =>
  call(app, "POST", `/api/team/projects/${projectId}/share-links`, { cookie, body: { group_id: groupId, role: "viewer" }, headers });

describe("security headers", () => {
  it("pages cannot be framed, are not sniffed and do not leak their URL to other sites", async () => {
    for (const path of ["/login", `/projects/${projectId}/settings`]) {
      const res = await direct.request(path, { headers: { cookie } });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy")).toContain("form-action 'self'");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("same-origin");
      expect(res.headers.get("x-powered-by")).toBeNull();
    }
  });

  it("API answers carry them too, and a share page sends no Referer at all", async () => {
    const api = await direct.request("/api/ingest");
    expect(api.headers.get("x-content-type-options")).toBe("nosniff");
    expect(api.headers.get("x-frame-options")).toBe("DENY");
    const link = await createLink(direct);
    const page = await direct.request(`/share/${link.body.token}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.headers.get("cache-control")).toBe("no-store");
  });
});

describe("forwarded headers", () => {
  it("without TRUST_PROXY, X-Forwarded-Proto/-Host do not shape share URLs", async () => {
    const variants: Record<string, string>[] = [{ "x-forwarded-proto": "javascript" }, { "x-forwarded-host": "evil.example" }, { "x-forwarded-proto": "https", "x-forwarded-host": "evil.example:8443" }];
    for (const headers of variants) {
      const r = await createLink(direct, headers);
      expect(r.status).toBe(201);
      expect(r.body.url).toBe(`${direct.url}/share/${r.body.token}`);
    }
  });

  it("without TRUST_PROXY, the CSRF check compares Origin with the Host, not X-Forwarded-Host", async () => {
    const forged = await createLink(direct, { origin: "http://evil.example", "x-forwarded-host": "evil.example" });
    expect(forged.status).toBe(403);
    expect(forged.body.error).toBe("forbidden");
    const page = await direct.request(`/projects/${projectId}/settings`, {
      method: "POST",
      headers: { cookie, origin: "http://evil.example", "x-forwarded-host": "evil.example", "content-type": "application/x-www-form-urlencoded" },
      body: "intent=rename&name=Pwned",
      redirect: "manual",
    });
    expect(page.status).toBe(403);
    const [p] = await direct.sql`select name from projects where id = ${projectId}`;
    expect(p.name).not.toBe("Pwned");
  });

  it("without TRUST_PROXY, X-Forwarded-Proto: https does not mark the session cookie Secure", async () => {
    const u = await makeUser(direct.sql);
    const r = await call(direct, "POST", "/api/auth/login", { body: { email: u.email, password: "correct horse battery" }, headers: { "x-forwarded-proto": "https" } });
    expect(r.status).toBe(200);
    expect(r.headers.get("set-cookie")).not.toContain("Secure");
  });

  it("with TRUST_PROXY, the proxy's scheme and host are used, but only http and https", async () => {
    const https = await createLink(proxied, { "x-forwarded-proto": "https", "x-forwarded-host": "monitor.example" });
    expect(https.status).toBe(201);
    expect(https.body.url).toBe(`https://monitor.example/share/${https.body.token}`);
    for (const proto of ["javascript", "data", "file"]) {
      const r = await createLink(proxied, { "x-forwarded-proto": proto });
      expect(r.status).toBe(201);
      expect(r.body.url).toBe(`${proxied.url}/share/${r.body.token}`);
    }
    const badHost = await createLink(proxied, { "x-forwarded-host": "evil.example/x?y=" });
    expect(badHost.body.url).toBe(`${proxied.url}/share/${badHost.body.token}`);
  });
});

describe("request logs", () => {
  it("never contain a share token (page, API, or a token in the query)", async () => {
    const link = await createLink(direct);
    const token: string = link.body.token;
    const ids: string[] = [];
    for (const [path, init] of [
      [`/share/${token}`, {}],
      [`/api/share/${token}`, {}],
      [`/api/share/${token}?again=1`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }],
      [`/nowhere?token=${token}`, {}],
    ] as const) {
      const res = await direct.request(path, init);
      await res.arrayBuffer();
      ids.push(res.headers.get("x-request-id")!);
    }
    const lines = await requestLines(ids);
    expect(lines.map((l) => l.route)).toEqual(["routes/share.$token", "routes/api.share.$token", "routes/api.share.$token", "other"]);
    for (const l of lines) expect(JSON.stringify(l)).not.toContain(token.slice(4));
    expect(readFileSync(logFile(), "utf8")).not.toContain(token.slice(4));
  });
});

/** The request lines (parsed) of these request ids, in their order; waits for the lines to be written. */
async function requestLines(ids: string[]): Promise<Record<string, unknown>[]> {
  for (let i = 0; ; i++) {
    const lines = readFileSync(logFile(), "utf8")
      .split("\n")
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const found = ids.map((id) => lines.find((l) => l.reqId === id));
    if (found.every(Boolean) || i === 100) return found.filter(Boolean) as Record<string, unknown>[];
    await new Promise((r) => setTimeout(r, 20));
  }
}
