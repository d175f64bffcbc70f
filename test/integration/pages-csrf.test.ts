import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const post = (path: string, headers: Record<string, string>) =>
  app.request(path, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: "email=someone%40studio.test&password=wrong-password",
  });

describe("dashboard form posts from another site", () => {
  it("answer 403 with the error body, not a 500", async () => {
    for (const path of ["/login", "/setup", "/login/two-factor", "/auth/oidc/roblox/start"]) {
      const res = await post(path, { origin: "http://evil.example" });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ error: "forbidden" });
    }
    // the issue page's forms (status, assign, comment, edit and delete a comment) the same way
    const issuePage = await post("/projects/00000000-0000-4000-8000-000000000001/issues/00000000-0000-4000-8000-000000000002", { origin: "http://evil.example" });
    expect(issuePage.status).toBe(403);
    expect(await issuePage.json()).toMatchObject({ error: "forbidden" });
    const res = await post("/login", { "sec-fetch-site": "cross-site" });
    expect(res.status).toBe(403);
  });

  it("still reach the action from the dashboard's own origin or without an Origin", async () => {
    const host = new URL(app.url).host;
    const variants: Record<string, string>[] = [{ origin: `http://${host}` }, {}];
    for (const headers of variants) {
      const res = await post("/login", headers);
      expect([200, 302, 303, 400, 401, 429]).toContain(res.status);
    }
  });
});
