import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser, PASSWORD } from "../support/team.js";
import { commonPasswordCount } from "../../app/accounts/common-passwords.server.js";

/** Password rules (common passwords and blank ones refused) and the forced change of temporary passwords. */
let app: TestApp;
let addr = 0;
const fresh = () => ({ "x-forwarded-for": `10.77.${Math.floor(++addr / 250)}.${addr % 250}` });

beforeAll(async () => {
  app = await startTestApp({ TRUST_PROXY: "1" });
});
afterAll(() => app?.close());

describe("new passwords", () => {
  it("the bundled list holds the 10,000 most common passwords of 8 or more characters", () => {
    expect(commonPasswordCount()).toBe(10_000);
  });

  it("common passwords (any case, surrounding spaces) and all-whitespace ones are refused with a 400 that says why", async () => {
    const u = await makeUser(app.sql);
    const cookie = await login(app, u.email, PASSWORD, fresh());
    for (const [password, why] of [
      ["password", /most common/],
      ["PASSWORD1", /most common/],
      [" iloveyou ", /most common/],
      ["qwertyuiop", /most common/],
      ["        ", /only spaces/],
      ["\t\t\t\t\n\n\n\n", /only spaces/],
    ] as const) {
      const r = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: PASSWORD, new_password: password } });
      expect(r.status, JSON.stringify(password)).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", details: [{ path: "new_password", message: expect.stringMatching(why) }] });
    }
    // nothing changed: the old password still works
    await login(app, u.email, PASSWORD, fresh());
  });

  it("the first-run setup page refuses a common password and creates nothing", async () => {
    const empty = await startTestApp();
    try {
      const setup = (password: string) =>
        empty.request("/setup", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin: empty.url },
          body: new URLSearchParams({ email: "first@example.test", password, confirm: password }).toString(),
          redirect: "manual",
        });
      const weak = await setup("12345678");
      expect(weak.status).toBe(400);
      // the page names the field as its label does, not as the API body does
      const page = await weak.text();
      expect(page).toContain("Password is one of the most common passwords; choose another.");
      expect(page).not.toContain("request body");
      expect((await empty.sql`select count(*)::int as n from users`)[0].n).toBe(0);
      const good = await setup("a first long password");
      expect(good.status).toBe(302);
      expect((await empty.sql`select count(*)::int as n from users`)[0].n).toBe(1);
    } finally {
      await empty.close();
    }
  });
});

describe("repetitive, sequential and context passwords (NIST SP 800-63B), the same rule at every entry point", () => {
  const repetitive = /repeats or runs through one character sequence/;
  const contextual = /product's name or your own email/;

  it("a password change through the Team API refuses them with a 400 that says why, and changes nothing", async () => {
    const u = await makeUser(app.sql, `mira.stone-${addr}@pixelforge.example`);
    const cookie = await login(app, u.email, PASSWORD, fresh());
    for (const [password, why] of [
      ["aaaaaaaa", repetitive],
      ["abcdefgh", repetitive],
      ["87654321", repetitive],
      ["poiuytre", repetitive],
      ["Roblox Monitor", contextual],
      ["robloxmonitor2024", contextual],
      ["MiraStone1990", contextual],
      [u.email, contextual],
    ] as const) {
      const r = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: PASSWORD, new_password: password } });
      expect(r.status, password).toBe(400);
      expect(r.body).toMatchObject({ error: "invalid_payload", message: expect.stringMatching(why), details: [{ path: "new_password", message: expect.stringMatching(why) }] });
    }
    await login(app, u.email, PASSWORD, fresh());
  });

  it("the Account page form refuses them and shows why", async () => {
    const u = await makeUser(app.sql);
    const cookie = await login(app, u.email, PASSWORD, fresh());
    const res = await app.request("/account", {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: new URLSearchParams({ current_password: PASSWORD, new_password: "aaaaaaaa" }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toMatch(repetitive);
    expect(page).toContain("New password repeats or runs through");
    expect(page).not.toContain("request body");
    await login(app, u.email, PASSWORD, fresh());
  });

  it("the first-run setup page refuses them and creates nothing", async () => {
    const empty = await startTestApp();
    try {
      const setup = (email: string, password: string) =>
        empty.request("/setup", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", origin: empty.url },
          body: new URLSearchParams({ email, password, confirm: password }).toString(),
          redirect: "manual",
        });
      for (const [email, password, why] of [
        ["first@example.test", "abcdefgh", repetitive],
        ["first@example.test", "zyxwvuts", repetitive],
        ["first@example.test", "roblox monitor", contextual],
        ["theo.park@studio.test", "theopark!!", contextual],
      ] as const) {
        const r = await setup(email, password);
        expect(r.status, password).toBe(400);
        expect(await r.text()).toMatch(why);
      }
      expect((await empty.sql`select count(*)::int as n from users`)[0].n).toBe(0);
    } finally {
      await empty.close();
    }
  });
});

describe("temporary passwords", () => {
  it("a teammate added by email must choose their own password before anything else", async () => {
    const owner = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id);
    const ownerCookie = await login(app, owner.email, PASSWORD, fresh());
    const added = await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: ownerCookie, body: { email: "newbie@example.test", role: "member" } });
    expect(added.status).toBe(201);
    const temporary: string = added.body.temporary_password;
    expect(temporary).toMatch(/^[A-Za-z0-9_-]{16}$/);

    const first = await call(app, "POST", "/api/auth/login", { body: { email: "newbie@example.test", password: temporary }, headers: fresh() });
    expect(first.status).toBe(200);
    expect(first.body.user.must_change_password).toBe(true);
    const cookie = first.headers.get("set-cookie")!.split(";")[0];

    // the Team API refuses everything but the password change, me and logout
    const projects = await call(app, "GET", "/api/team/projects", { cookie });
    expect(projects.status).toBe(403);
    expect(projects.body).toEqual({ error: "forbidden", message: expect.stringContaining("temporary password") });
    expect((await call(app, "GET", `/api/team/projects/${projectId}/members`, { cookie })).status).toBe(403);
    expect((await call(app, "GET", "/api/auth/me", { cookie })).body.user.must_change_password).toBe(true);
    // dashboard pages send them to the Account page, which shows why
    const page = await app.request(`/projects/${projectId}`, { headers: { cookie }, redirect: "manual" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/account");
    const account = await app.request("/account", { headers: { cookie } });
    expect(account.status).toBe(200);
    expect(await account.text()).toContain("temporary password");

    // the temporary password cannot be "changed" to itself
    const same = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: temporary, new_password: temporary } });
    expect(same.status).toBe(400);
    expect(same.body.details[0].path).toBe("new_password");
    const changed = await call(app, "POST", "/api/auth/password", { cookie, body: { current_password: temporary, new_password: "my own long password" } });
    expect(changed.status).toBe(200);
    expect((await call(app, "GET", "/api/team/projects", { cookie })).status).toBe(200);
    expect((await app.request(`/projects/${projectId}`, { headers: { cookie }, redirect: "manual" })).status).toBe(200);
    const [row] = await app.sql`select must_change_password from users where email = 'newbie@example.test'`;
    expect(row.must_change_password).toBe(false);
  });

  it("the Account page form changes a temporary password and goes on to the dashboard", async () => {
    const owner = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id);
    const ownerCookie = await login(app, owner.email, PASSWORD, fresh());
    const added = await call(app, "POST", `/api/team/projects/${projectId}/members`, { cookie: ownerCookie, body: { email: "formuser@example.test" } });
    const cookie = await login(app, "formuser@example.test", added.body.temporary_password, fresh());
    const res = await app.request("/account", {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: app.url },
      body: new URLSearchParams({ current_password: added.body.temporary_password, new_password: "chosen by the user" }).toString(),
      redirect: "manual",
    });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/projects");
    expect((await call(app, "GET", "/api/team/projects", { cookie })).status).toBe(200);
  });
});
