import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { Browser, passProvider, startLocalProvider, type LocalProvider } from "../support/oidc.js";
import { login, makeUser } from "../support/team.js";
import { insertUser } from "../../db/users.js";
import { hashPassword } from "../../app/accounts/passwords.server.js";
import { resetPassword } from "../../app/accounts/users.server.js";
import { codeAt } from "../../app/accounts/two-factor.server.js";

// Sign-in with OpenID Connect against real providers (npm oidc-provider) on 127.0.0.1:
// "studio" (a generic provider whose verified emails count), "roblox" (the preset, pointed at a
// local provider: identities without email), "late" (a provider whose clock is two hours behind)
// and "wrong" (discovery names another issuer than the one configured).
const accounts = {
  alice: { email: "alice@studio.test", email_verified: true, name: "Alice" },
  bob: { email: "bob@elsewhere.test", email_verified: true },
  dave: { email: "dave@studio.test", email_verified: false },
  carol: { email: "carol@studio.test", email_verified: true },
  erin: { email: "erin@studio.test", email_verified: true },
  frank: { email: "frank@studio.test", email_verified: true },
  gina: { email: "gina@studio.test", email_verified: true },
  hana: { email: "hana@studio.test", email_verified: true },
  "1516563360": { preferred_username: "builder", name: "Builder" },
  "2000000001": { preferred_username: "other_builder" },
};

let app: TestApp;
let main: LocalProvider;
let late: LocalProvider;
let wrong: LocalProvider;

beforeAll(async () => {
  main = await startLocalProvider({
    clients: [
      { clientId: "studio-client", clientSecret: "studio-secret-0123456789", provider: "studio" },
      { clientId: "roblox-client", clientSecret: "roblox-secret-0123456789", provider: "roblox" },
    ],
    accounts,
  });
  late = await startLocalProvider({ clients: [{ clientId: "late-client", clientSecret: "late-secret-0123456789", provider: "late" }], accounts, clockOffsetSeconds: -2 * 3600 });
  wrong = await startLocalProvider({ clients: [{ clientId: "wrong-client", clientSecret: "wrong-secret-0123456789", provider: "wrong" }], accounts, issuerHost: "localhost" });
  app = await startTestApp({
    OIDC_PROVIDERS: "studio,roblox,late,wrong",
    OIDC_ALLOWED_DOMAINS: "studio.test",
    OIDC_STUDIO_ISSUER: main.issuer,
    OIDC_STUDIO_NAME: "Studio SSO",
    OIDC_STUDIO_CLIENT_ID: "studio-client",
    OIDC_STUDIO_CLIENT_SECRET: "studio-secret-0123456789",
    OIDC_ROBLOX_ISSUER: main.issuer,
    OIDC_ROBLOX_CLIENT_ID: "roblox-client",
    OIDC_ROBLOX_CLIENT_SECRET: "roblox-secret-0123456789",
    OIDC_LATE_ISSUER: late.issuer,
    OIDC_LATE_CLIENT_ID: "late-client",
    OIDC_LATE_CLIENT_SECRET: "late-secret-0123456789",
    // the provider says its issuer is http://localhost:<port>; it is configured by address
    OIDC_WRONG_ISSUER: wrong.issuer.replace("localhost", "127.0.0.1"),
    OIDC_WRONG_CLIENT_ID: "wrong-client",
    OIDC_WRONG_CLIENT_SECRET: "wrong-secret-0123456789",
  });
  // a first account, so the server is set up
  await makeUser(app.sql, "owner@studio.test");
});
afterAll(async () => {
  await app?.close();
  await Promise.all([main?.close(), late?.close(), wrong?.close()]);
});

/** Presses a provider's button (sign-in page or Account page); returns the provider URL it sends to. */
async function start(browser: Browser, provider: string, form: Record<string, string> = { intent: "login" }) {
  const res = await browser.request(`${app.url}/auth/oidc/${provider}/start`, { form, headers: { origin: app.url } });
  expect(res.status).toBe(302);
  const location = res.headers.get("location")!;
  return location;
}

/** The whole round: button, provider login and consent, callback; returns the callback's response. */
async function signIn(browser: Browser, provider: string, who: string, form?: Record<string, string>) {
  const authorize = await start(browser, provider, form);
  const callback = await passProvider(browser, authorize, who);
  return { res: await browser.request(callback), callback };
}

const me = async (browser: Browser) => {
  const res = await browser.request(`${app.url}/api/auth/me`);
  return res.status === 200 ? ((await res.json()) as { user: { id: string; email: string } }).user : undefined;
};

const refusal = async (res: Response) => {
  const html = await res.text();
  const m = /data-testid="sign-in-refused"[^>]*>([^<]*)</.exec(html);
  return m?.[1] ?? html.slice(0, 400);
};

const sessions = async (email: string) =>
  Number((await app.sql`select count(*)::int as n from sessions s join users u on u.id = s.user_id where u.email = ${email}`)[0].n);

describe("sign-in with OpenID Connect", () => {
  it("offers the configured providers on the sign-in page and asks for PKCE, state and nonce", async () => {
    const page = await (await app.request("/login")).text();
    expect(page).toContain("Sign in with Studio SSO");
    expect(page).toContain("Sign in with Roblox");
    const url = new URL(await start(new Browser(), "studio"));
    expect(url.origin).toBe(main.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get("state")).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get("nonce")).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get("scope")).toBe("openid profile email");
    expect(url.searchParams.get("redirect_uri")).toBe(`${app.url}/auth/oidc/studio/callback`);
  });

  it("creates an account at the first sign-in of a verified email in an allowed domain, then signs the same account in", async () => {
    const first = new Browser();
    const { res } = await signIn(first, "studio", "alice");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/projects");
    const user = await me(first);
    expect(user?.email).toBe("alice@studio.test");
    expect(first.cookie(app.url, "rm_device")).toBeTruthy();
    const [row] = await app.sql`select has_password, must_change_password from users where id = ${user!.id}`;
    expect(row).toEqual({ has_password: false, must_change_password: false });
    const [identity] = await app.sql`select provider, subject, username, email from user_identities where user_id = ${user!.id}`;
    expect(identity).toEqual({ provider: "studio", subject: "alice", username: "Alice", email: "alice@studio.test" });
    const [created] = await app.sql`select actor_id, details from audit_log where action = 'account.created' and target = 'alice@studio.test'`;
    expect(created).toEqual({ actor_id: user!.id, details: { via: "oidc", provider: "studio" } });

    const again = new Browser();
    expect((await signIn(again, "studio", "alice")).res.status).toBe(302);
    expect((await me(again))?.id).toBe(user!.id);
    expect(Number((await app.sql`select count(*)::int as n from users where email = 'alice@studio.test'`)[0].n)).toBe(1);
  });

  it("refuses an unknown identity: another domain, an unverified email, a Roblox account nobody linked", async () => {
    for (const [provider, who, says] of [
      ["studio", "bob", "not created automatically"],
      ["studio", "dave", "not linked to an account here"],
      ["roblox", "1516563360", "not linked to an account here"],
    ] as const) {
      const browser = new Browser();
      const { res } = await signIn(browser, provider, who);
      expect(res.status).toBe(403);
      expect(await refusal(res)).toContain(says);
      expect(await me(browser)).toBeUndefined();
    }
    expect((await app.sql`select 1 from users where email in ('bob@elsewhere.test', 'dave@studio.test')`).length).toBe(0);
  });

  it("does not take over an account that has a password: its owner links the provider from the Account page", async () => {
    await makeUser(app.sql, "erin@studio.test");
    const { res } = await signIn(new Browser(), "studio", "erin");
    expect(res.status).toBe(403);
    expect(await refusal(res)).toContain("already exists");
  });

  it("accepts an invitation (an account still on its temporary password) through the provider", async () => {
    const invited = await insertUser(app.sql, "carol@studio.test", await hashPassword("temporary-pass-123"), true);
    const browser = new Browser();
    const { res } = await signIn(browser, "studio", "carol");
    expect(res.status).toBe(302);
    expect((await me(browser))?.id).toBe(invited!.id);
    const [row] = await app.sql`select has_password, must_change_password from users where id = ${invited!.id}`;
    expect(row).toEqual({ has_password: false, must_change_password: false });
    // the temporary password someone else chose no longer opens the account
    const r = await app.request("/api/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: "carol@studio.test", password: "temporary-pass-123" }) });
    expect(r.status).toBe(401);
  });

  it("links a Roblox identity to a signed-in account, signs in with it, and refuses it once unlinked", async () => {
    const owner = await makeUser(app.sql);
    const browser = new Browser();
    browser.setCookie(app.url, await login(app, owner.email));
    const { res } = await signIn(browser, "roblox", "1516563360", { intent: "link" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/account?linked=roblox");
    const account = await (await browser.request(`${app.url}/account`)).text();
    expect(account).toContain("builder");

    const elsewhere = new Browser();
    expect((await signIn(elsewhere, "roblox", "1516563360")).res.status).toBe(302);
    expect((await me(elsewhere))?.id).toBe(owner.id);

    // the same Roblox account cannot be linked to a second account
    const other = new Browser();
    other.setCookie(app.url, await login(app, (await makeUser(app.sql)).email));
    const taken = await signIn(other, "roblox", "1516563360", { intent: "link" });
    expect(taken.res.status).toBe(409);

    const [identity] = await app.sql`select id from user_identities where user_id = ${owner.id}`;
    const unlink = await browser.request(`${app.url}/account?index`, { form: { intent: "unlink-identity", identity: identity.id }, headers: { origin: app.url } });
    expect(unlink.status).toBe(200);
    expect(await unlink.text()).toContain("Unlinked");
    const revoked = await signIn(new Browser(), "roblox", "1516563360");
    expect(revoked.res.status).toBe(403);
    expect(await refusal(revoked.res)).toContain("not linked");
    const audit = await app.sql`select action, details from audit_log where project_id is null and actor_id = ${owner.id} and action like 'account.identity%' order by id`;
    expect(audit).toEqual([
      { action: "account.identity_linked", details: { provider: "roblox", username: "builder" } },
      { action: "account.identity_unlinked", details: { identity_id: identity.id } },
    ]);
  });

  it("keeps the last way in: an account without a password cannot unlink its only identity", async () => {
    const browser = new Browser();
    await signIn(browser, "studio", "frank");
    const user = await me(browser);
    const [identity] = await app.sql`select id from user_identities where user_id = ${user!.id}`;
    const res = await browser.request(`${app.url}/account?index`, { form: { intent: "unlink-identity", identity: identity.id }, headers: { origin: app.url } });
    expect(res.status).toBe(409);
    expect((await app.sql`select 1 from user_identities where id = ${identity.id}`).length).toBe(1);
  });

  it("turns two-factor off for an account without a password with the code alone, never asking for a password it has none of", async () => {
    const browser = new Browser();
    await signIn(browser, "studio", "hana");
    const user = await me(browser);
    const step = (name: string, body: unknown) =>
      fetch(`${app.url}/api/auth/two-factor/${name}`, {
        method: "POST",
        headers: { cookie: browser.cookieHeader(app.url), "content-type": "application/json", origin: app.url },
        body: JSON.stringify(body),
      });
    const setup = await step("setup", {});
    expect(setup.status).toBe(200);
    const { secret } = (await setup.json()) as { secret: string };
    const on = await step("confirm", { code: codeAt(secret) });
    expect(on.status).toBe(200);
    const { recovery_codes: recovery } = (await on.json()) as { recovery_codes: string[] };

    const page = await (await browser.request(`${app.url}/account/two-factor`)).text();
    expect(page).toContain('data-testid="two-factor-on"');
    expect(page).toContain('name="intent" value="disable"');
    expect(page).not.toContain('name="password"');

    const wrong = await step("disable", { code: "00000000" });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ error: "forbidden", message: "The code is wrong." });
    expect((await step("disable", {})).status).toBe(400);
    expect((await app.sql`select enabled_at from user_two_factor where user_id = ${user!.id}`)[0].enabled_at).not.toBeNull();

    const form = await browser.request(`${app.url}/account/two-factor`, { form: { intent: "disable", code: recovery[0] }, headers: { origin: app.url } });
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("Two-factor authentication is off.");
    expect((await app.sql`select 1 from user_two_factor where user_id = ${user!.id}`).length).toBe(0);
    expect((await app.sql`select 1 from audit_log where action = 'account.two_factor_disabled' and actor_id = ${user!.id}`).length).toBe(1);
  });

  it("asks an account without a password for no current password: no change form, 409 on the API, until an operator gives it one", async () => {
    const browser = new Browser();
    await signIn(browser, "studio", "gina");
    const user = await me(browser);
    const account = await (await browser.request(`${app.url}/account`)).text();
    expect(account).not.toContain('name="current_password"');
    expect(account).toContain('data-testid="no-password"');
    expect(account).toContain("you sign in through Studio SSO");

    const change = (b: Browser, current: string, next: string) =>
      fetch(`${app.url}/api/auth/password`, {
        method: "POST",
        headers: { cookie: b.cookieHeader(app.url), "content-type": "application/json", origin: app.url },
        body: JSON.stringify({ current_password: current, new_password: next }),
      });
    const refused = await change(browser, "anything at all", "a brand new passphrase 7");
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ error: "conflict", message: expect.stringContaining("no password of its own") });
    const form = await browser.request(`${app.url}/account?index`, {
      form: { intent: "password", current_password: "anything at all", new_password: "a brand new passphrase 7" },
      headers: { origin: app.url },
    });
    expect(form.status).toBe(409);
    const [row] = await app.sql`select has_password from users where id = ${user!.id}`;
    expect(row.has_password).toBe(false);
    expect((await app.sql`select 1 from audit_log where action = 'account.password_changed' and target = 'gina@studio.test'`).length).toBe(0);

    // an operator's temporary password gives the account one: it is changed on the Account page as usual
    const { temporaryPassword } = await resetPassword(app.sql, "gina@studio.test");
    const [after] = await app.sql`select has_password, must_change_password from users where id = ${user!.id}`;
    expect(after).toEqual({ has_password: true, must_change_password: true });
    const withPassword = new Browser();
    withPassword.setCookie(app.url, await login(app, "gina@studio.test", temporaryPassword));
    expect(await (await withPassword.request(`${app.url}/account`)).text()).toContain('name="current_password"');
    expect((await change(withPassword, temporaryPassword, "a brand new passphrase 7")).status).toBe(200);
  });

  it("refuses a deleted account's identity", async () => {
    const gone = await makeUser(app.sql);
    await app.sql`insert into user_identities (user_id, provider, issuer, subject) values (${gone.id}, 'roblox', ${main.issuer}, '2000000001')`;
    expect((await signIn(new Browser(), "roblox", "2000000001")).res.status).toBe(302);
    await app.sql`delete from users where id = ${gone.id}`;
    const { res } = await signIn(new Browser(), "roblox", "2000000001");
    expect(res.status).toBe(403);
  });

  it("refuses a replayed state: the callback works once, even replayed with its state cookie", async () => {
    const browser = new Browser();
    const callback = await passProvider(browser, await start(browser, "studio"), "alice");
    const cookies = browser.cookieHeader(callback);
    expect(cookies).toMatch(/rm_oidc:/);
    const first = await fetch(callback, { headers: { cookie: cookies }, redirect: "manual" });
    expect(first.status).toBe(302);
    const before = await sessions("alice@studio.test");
    const replay = await fetch(callback, { headers: { cookie: cookies }, redirect: "manual" });
    expect(replay.status).toBe(400);
    expect(await refusal(replay)).toContain("already used");
    expect(replay.headers.getSetCookie().join("\n")).not.toMatch(/rm_session=[^;]/);
    expect(await sessions("alice@studio.test")).toBe(before);
  });

  it("refuses a callback in a browser that did not start the sign-in (no state cookie)", async () => {
    const authorize = await start(new Browser(), "studio");
    const callback = await passProvider(new Browser(), authorize, "alice");
    const res = await new Browser().request(callback);
    expect(res.status).toBe(400);
    expect(await refusal(res)).toContain("not started in this browser");
  });

  it("refuses an ID token whose nonce is not the one this sign-in sent", async () => {
    const browser = new Browser();
    const authorize = new URL(await start(browser, "studio"));
    authorize.searchParams.set("nonce", "a-nonce-from-somewhere-else-0123456789");
    const res = await browser.request(await passProvider(browser, authorize.toString(), "alice"));
    expect(res.status).toBe(400);
    expect(await refusal(res)).toContain("nonce differs");
    expect(await me(browser)).toBeUndefined();
  });

  it("refuses an expired ID token (a provider whose clock runs two hours behind)", async () => {
    const browser = new Browser();
    const { res } = await signIn(browser, "late", "alice");
    expect(res.status).toBe(400);
    expect(await refusal(res)).toContain("has expired");
    expect(await me(browser)).toBeUndefined();
  });

  it("refuses a provider whose discovery names another issuer", async () => {
    const res = await new Browser().request(`${app.url}/auth/oidc/wrong/start`, { form: { intent: "login" }, headers: { origin: app.url } });
    expect(res.status).toBe(502);
    expect(await res.text()).toContain("could not be reached or answered something unexpected");
  });

  it("answers 404 for a provider that is not configured, and refuses a start from another site", async () => {
    expect((await new Browser().request(`${app.url}/auth/oidc/nope/start`, { form: { intent: "login" }, headers: { origin: app.url } })).status).toBe(404);
    expect((await new Browser().request(`${app.url}/auth/oidc/nope/callback?state=x&code=y`)).status).toBe(404);
    expect((await new Browser().request(`${app.url}/auth/oidc/studio/start`, { form: { intent: "login" }, headers: { origin: "http://evil.example" } })).status).toBe(403);
  });
});
