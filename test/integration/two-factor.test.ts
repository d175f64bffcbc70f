import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, login, makeProject, makeUser, PASSWORD, type Reply } from "../support/team.js";
import { codeAt, newChallenge } from "../../app/accounts/two-factor.server.js";
import { runCli } from "../support/cli.js";

/**
 * Two-factor authentication over HTTP on a real database: enrollment, the second sign-in step (API and
 * page), the lockout rules applied to codes, recovery codes, replays, turning it off, and a project's
 * requirement per role.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: "6", LOGIN_EMAIL_MAX_FAILURES: "10", LOGIN_WINDOW_SECONDS: "3600", TRUST_PROXY: "1" });
});
afterAll(() => app?.close());

const cookieOf = (r: Reply | Response, name: string) => {
  const set = r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  return set?.split(";")[0];
};

/** Lets the code of the current step be accepted again (each is accepted once: see the replay test). */
const forgetLastStep = (userId: string) => app.sql`update user_two_factor set last_used_step = null where user_id = ${userId}`;

/** A user signed in (no second factor yet), with two-factor turned on through the Team API. */
async function enrolledUser() {
  const u = await makeUser(app.sql);
  const cookie = await login(app, u.email);
  const setup = await call(app, "POST", "/api/auth/two-factor/setup", { cookie, body: {} });
  expect(setup.status).toBe(200);
  const secret: string = setup.body.secret;
  const on = await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body: { code: codeAt(secret) } });
  expect(on.status).toBe(200);
  await forgetLastStep(u.id);
  return { ...u, cookie, secret, recovery: on.body.recovery_codes as string[] };
}

const password = (email: string, addr = "198.51.100.1", cookie?: string) =>
  call(app, "POST", "/api/auth/login", { body: { email, password: PASSWORD }, headers: { "x-forwarded-for": addr }, cookie });
const second = (challenge: string, code: string, addr = "198.51.100.1", cookie?: string) =>
  call(app, "POST", "/api/auth/login", { body: { challenge, code }, headers: { "x-forwarded-for": addr }, cookie });

/** The password step: 401 second_factor_required with a challenge, and no session. */
async function challengeFor(email: string, addr = "198.51.100.1", cookie?: string): Promise<string> {
  const r = await password(email, addr, cookie);
  expect(r.status, JSON.stringify(r.body)).toBe(401);
  expect(r.body.error).toBe("second_factor_required");
  expect(cookieOf(r, "rm_session")).toBeUndefined();
  return r.body.challenge;
}

describe("enrollment", () => {
  it("a new secret, confirmed with a code, turns two-factor on and hands out 10 recovery codes once", async () => {
    const u = await makeUser(app.sql);
    const cookie = await login(app, u.email);
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie })).body).toMatchObject({ enabled: false, pending: false });
    const setup = await call(app, "POST", "/api/auth/two-factor/setup", { cookie, body: {} });
    expect(setup.status).toBe(200);
    const { secret, otpauth_url, qr_code } = setup.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const uri = new URL(otpauth_url);
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(Object.fromEntries(uri.searchParams)).toMatchObject({ secret, issuer: "Roblox Monitor", algorithm: "SHA1", digits: "6", period: "30" });
    expect(qr_code).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(qr_code.split(",")[1], "base64").toString()).toContain("<svg");
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie })).body).toMatchObject({ enabled: false, pending: true });

    // sealed at rest: the stored bytes do not hold the key
    const [row] = await app.sql`select secret_ciphertext from user_two_factor where user_id = ${u.id}`;
    expect(Buffer.from(row.secret_ciphertext).toString("latin1")).not.toContain(secret);

    const wrong = await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body: { code: codeAt(secret, Date.now() + 120_000) } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.details[0].path).toBe("code");
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie })).body.enabled).toBe(false);

    const on = await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body: { code: codeAt(secret) } });
    expect(on.status).toBe(200);
    expect(on.body.recovery_codes).toHaveLength(10);
    expect(new Set(on.body.recovery_codes).size).toBe(10);
    for (const c of on.body.recovery_codes) expect(c).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const stored = await app.sql`select code_hash from user_recovery_codes where user_id = ${u.id}`;
    expect(stored).toHaveLength(10);
    for (const s of stored) expect(on.body.recovery_codes.map((c: string) => Buffer.from(c).toString("hex"))).not.toContain(Buffer.from(s.code_hash).toString("hex"));
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie })).body).toMatchObject({ enabled: true, recovery_codes_left: 10 });

    // on means on: no second enrollment over it, no second confirmation
    expect((await call(app, "POST", "/api/auth/two-factor/setup", { cookie, body: {} })).status).toBe(409);
    expect((await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body: { code: codeAt(secret) } })).status).toBe(409);
  });

  it("refuses bad input with 4xx, never a 500, and unknown steps with 404", async () => {
    const u = await makeUser(app.sql);
    const cookie = await login(app, u.email);
    expect((await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body: { code: "123456" } })).status).toBe(409);
    await call(app, "POST", "/api/auth/two-factor/setup", { cookie, body: {} });
    for (const body of [{}, { code: 123456 }, { code: "" }, { code: "x".repeat(65) }, "not json", []]) {
      const r = await call(app, "POST", "/api/auth/two-factor/confirm", { cookie, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(app, "POST", "/api/auth/two-factor/nope", { cookie, body: {} })).status).toBe(404);
    expect((await call(app, "GET", "/api/auth/two-factor/setup", { cookie })).status).toBe(405);
    expect((await call(app, "POST", "/api/auth/two-factor/setup", { body: {} })).status).toBe(401);
    expect((await call(app, "GET", "/api/auth/two-factor")).status).toBe(401);
  });
});

describe("signing in with a second factor (Team API)", () => {
  it("the password answers second_factor_required; the challenge and a code sign in", async () => {
    const u = await enrolledUser();
    const challenge = await challengeFor(u.email);
    const wrong = await second(challenge, codeAt(u.secret, Date.now() + 120_000));
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("unauthorized");
    expect(cookieOf(wrong, "rm_session")).toBeUndefined();
    const ok = await second(challenge, codeAt(u.secret));
    expect(ok.status).toBe(200);
    expect(ok.body.user.email).toBe(u.email);
    // the wrong code is in the instance's audit log (written beside the answer, so polled)
    let failed: { details: unknown }[] = [];
    for (let i = 0; i < 200 && failed.length === 0; i++) {
      failed = await app.sql`select details from audit_log where action = 'account.sign_in_failed' and target = ${u.email}`;
      if (failed.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    expect(failed).toEqual([{ details: { step: "two_factor_code", address: "198.51.100.1" } }]);
    const session = cookieOf(ok, "rm_session")!;
    expect(cookieOf(ok, "rm_device")).toBeDefined();
    expect((await call(app, "GET", "/api/auth/me", { cookie: session })).body.user.id).toBe(u.id);
  });

  it("a code already used is refused within its window, even with a fresh challenge", async () => {
    const u = await enrolledUser();
    const code = codeAt(u.secret);
    expect((await second(await challengeFor(u.email), code)).status).toBe(200);
    const replay = await second(await challengeFor(u.email), code);
    expect(replay.status).toBe(401);
    // and so is an earlier step's code
    expect((await second(await challengeFor(u.email), codeAt(u.secret, Date.now() - 30_000))).status).toBe(401);
  });

  it("refuses a tampered, expired or other account's challenge", async () => {
    const u = await enrolledUser();
    const challenge = await challengeFor(u.email);
    const tampered = challenge.slice(0, -2) + (challenge.endsWith("AA") ? "BA" : "AA");
    expect((await second(tampered, codeAt(u.secret))).status).toBe(401);
    const expired = newChallenge(app.services.config.appSecret, u.id, Date.now() - 301_000).challenge;
    expect((await second(expired, codeAt(u.secret))).status).toBe(401);
    const other = await enrolledUser();
    // a challenge names one account: the other account's code does not fit it
    expect((await second(challenge, codeAt(other.secret))).status).toBe(401);
    for (const body of [{ challenge }, { challenge: 5, code: "123456" }, { challenge: "x".repeat(500), code: "123456" }]) {
      const r = await call(app, "POST", "/api/auth/login", { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("an account without two-factor signs in with the password alone, as before", async () => {
    const u = await makeUser(app.sql);
    const r = await password(u.email);
    expect(r.status).toBe(200);
    expect(cookieOf(r, "rm_session")).toBeDefined();
  });
});

describe("recovery codes", () => {
  it("each signs in once; new ones replace the old", async () => {
    const u = await enrolledUser();
    const [first, secondCode] = u.recovery;
    expect((await second(await challengeFor(u.email), first.toUpperCase())).status).toBe(200);
    expect((await second(await challengeFor(u.email), first)).status).toBe(401);
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie: u.cookie })).body.recovery_codes_left).toBe(9);

    // new codes need a code from the app (a recovery code does not make more)
    expect((await call(app, "POST", "/api/auth/two-factor/recovery-codes", { cookie: u.cookie, body: { code: secondCode } })).status).toBe(400);
    const fresh = await call(app, "POST", "/api/auth/two-factor/recovery-codes", { cookie: u.cookie, body: { code: codeAt(u.secret) } });
    expect(fresh.status).toBe(200);
    expect(fresh.body.recovery_codes).toHaveLength(10);
    expect((await second(await challengeFor(u.email), secondCode)).status).toBe(401);
    expect((await second(await challengeFor(u.email), fresh.body.recovery_codes[0])).status).toBe(200);
  });
});

describe("the lockout rules hold for the second factor", () => {
  const pair = (email: string, addr: string) => `login:pair:${email}|${addr}`;
  const tooSoon = (key: string) => app.sql`update rate_limits set last_at = now() + interval '1 minute' where key = ${key}`;
  const waitOut = (key: string) => app.sql`update rate_limits set last_at = last_at - interval '1 hour' where key = ${key}`;

  it("wrong codes are paced and then locked out like wrong passwords, and giving the password again resets nothing", async () => {
    const u = await enrolledUser();
    const addr = "198.51.100.90";
    const key = pair(u.email, addr);
    let challenge = await challengeFor(u.email, addr);
    const wrongCode = () => codeAt(u.secret, Date.now() + 120_000);
    for (let i = 0; i < 3; i++) expect((await second(challenge, wrongCode(), addr)).status).toBe(401);
    await tooSoon(key);
    const early = await second(challenge, codeAt(u.secret), addr);
    expect(early.status).toBe(429);
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    for (let i = 3; i < 6; i++) {
      await waitOut(key);
      // the right password again: a new challenge, but the count of wrong codes stays
      challenge = await challengeFor(u.email, addr);
      await waitOut(key);
      expect((await second(challenge, wrongCode(), addr)).status).toBe(401);
    }
    await waitOut(key);
    // LOGIN_MAX_FAILURES (6) wrong codes: refused for the window, the right code and the password alike
    const locked = await second(challenge, codeAt(u.secret), addr);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(4);
    expect((await password(u.email, addr)).status).toBe(429);
  });

  it("a right code clears the pacing; a browser that signed in before is limited on its own device cookie", async () => {
    const u = await enrolledUser();
    const addr = "198.51.100.91";
    const challenge = await challengeFor(u.email, addr);
    for (let i = 0; i < 3; i++) expect((await second(challenge, codeAt(u.secret, Date.now() + 120_000), addr)).status).toBe(401);
    await waitOut(pair(u.email, addr));
    const ok = await second(challenge, codeAt(u.secret), addr);
    expect(ok.status).toBe(200);
    expect((await app.sql`select 1 from rate_limits where key = ${pair(u.email, addr)}`).length).toBe(0);
    const device = cookieOf(ok, "rm_device")!;

    // someone at the same address exhausts the pair with wrong codes; the user's browser is not locked out
    await forgetLastStep(u.id);
    const theirs = await challengeFor(u.email, addr);
    for (let i = 0; i < 8; i++) {
      await second(theirs, codeAt(u.secret, Date.now() + 120_000), addr);
      await waitOut(pair(u.email, addr));
    }
    expect((await second(theirs, codeAt(u.secret), addr)).status).toBe(429);
    const mine = await challengeFor(u.email, addr, device);
    expect((await second(mine, codeAt(u.secret), addr, device)).status).toBe(200);
  });

  it("codes checked on a signed-in account are paced too (a stolen session cannot guess them)", async () => {
    const u = await enrolledUser();
    const body = { code: codeAt(u.secret, Date.now() + 120_000) };
    for (let i = 0; i < 3; i++) expect((await call(app, "POST", "/api/auth/two-factor/recovery-codes", { cookie: u.cookie, body })).status).toBe(400);
    await tooSoon(`two-factor:account:${u.id}`);
    expect((await call(app, "POST", "/api/auth/two-factor/recovery-codes", { cookie: u.cookie, body: { code: codeAt(u.secret) } })).status).toBe(429);
  });
});

describe("the sign-in page's second step", () => {
  const form = (path: string, fields: Record<string, string>, cookie?: string) =>
    app.request(path, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url, "x-forwarded-for": "198.51.100.95", ...(cookie ? { cookie } : {}) },
      body: new URLSearchParams(fields).toString(),
    });

  it("asks for the code on its own page, then signs in and goes on", async () => {
    const u = await enrolledUser();
    const first = await form("/login?next=%2Faccount", { email: u.email, password: PASSWORD });
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("/login/two-factor?next=%2Faccount");
    expect(cookieOf(first, "rm_session")).toBeUndefined();
    const challenge = cookieOf(first, "rm_2fa")!;
    expect(first.headers.getSetCookie().find((c) => c.startsWith("rm_2fa="))).toMatch(/HttpOnly.*SameSite=Lax|Path=\/login/);

    const page = await app.request("/login/two-factor", { headers: { cookie: challenge }, redirect: "manual" });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Two-factor code");

    const wrong = await form("/login/two-factor?next=%2Faccount", { code: "000000" === codeAt(u.secret) ? "111111" : "000000" }, challenge);
    expect(wrong.status).toBe(401);
    const done = await form("/login/two-factor?next=%2Faccount", { code: codeAt(u.secret) }, challenge);
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("/account");
    expect(cookieOf(done, "rm_session")).toBeDefined();
    expect(cookieOf(done, "rm_2fa")).toBe("rm_2fa=");
  });

  it("without the password step the page sends back to sign in, and a cross-site post is refused", async () => {
    const page = await app.request("/login/two-factor", { redirect: "manual" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/login");
    const cross = await app.request("/login/two-factor", {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "http://evil.example" },
      body: "code=123456",
    });
    expect(cross.status).toBe(403);
    // a code posted without the password step proves nothing: back to the first step
    const noChallenge = await form("/login/two-factor", { code: "123456" });
    expect(noChallenge.status).toBe(302);
    expect(noChallenge.headers.get("location")).toBe("/login");
    expect(cookieOf(noChallenge, "rm_session")).toBeUndefined();
  });
});

describe("turning two-factor off", () => {
  it("needs the password and a code", async () => {
    const u = await enrolledUser();
    const off = (body: unknown) => call(app, "POST", "/api/auth/two-factor/disable", { cookie: u.cookie, body });
    expect((await off({ password: "wrong password!", code: codeAt(u.secret) })).status).toBe(403);
    expect((await off({ password: PASSWORD, code: codeAt(u.secret, Date.now() + 120_000) })).status).toBe(403);
    expect((await off({ password: PASSWORD })).status).toBe(400);
    // an account with a password of its own is always asked for it
    expect((await off({ code: codeAt(u.secret) })).status).toBe(400);
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie: u.cookie })).body.enabled).toBe(true);
    await app.sql`delete from rate_limits where key = ${`two-factor:account:${u.id}`}`;
    expect((await off({ password: PASSWORD, code: u.recovery[0] })).status).toBe(200);
    expect((await call(app, "GET", "/api/auth/two-factor", { cookie: u.cookie })).body).toMatchObject({ enabled: false, recovery_codes_left: 0 });
    expect((await app.sql`select 1 from user_recovery_codes where user_id = ${u.id}`).length).toBe(0);
    expect((await password(u.email)).status).toBe(200);
    // the instance's audit log names the account's own changes, never a code or the secret
    const audit = await app.sql<{ action: string; actor_id: string; target: string; details: unknown }[]>`
      select action, actor_id, target, details from audit_log where project_id is null and actor_id = ${u.id} order by id`;
    expect(audit.map((a) => a.action)).toEqual(["account.two_factor_enabled", "account.two_factor_disabled"]);
    expect(audit.every((a) => a.target === u.email)).toBe(true);
    expect(JSON.stringify(audit)).not.toContain(u.secret);
    expect(JSON.stringify(audit)).not.toContain(u.recovery[0]);
  });
});

describe("an operator's recovery", () => {
  it("user:two-factor-off turns it off for a user who lost the phone and the codes", async () => {
    const u = await enrolledUser();
    const off = await runCli(app.databaseUrl, "user:two-factor-off", "--email", u.email.toUpperCase());
    expect(off).toMatchObject({ code: 0, out: { user_id: u.id, two_factor: false } });
    const [reset] = await app.sql`select actor_id, details from audit_log where action = 'account.two_factor_reset' and target = ${u.email}`;
    expect(reset).toEqual({ actor_id: null, details: { via: "cli" } });
    expect((await password(u.email, "198.51.100.7")).status).toBe(200);
    const unknown = await runCli(app.databaseUrl, "user:two-factor-off", "--email", "nobody@example.test");
    expect(unknown, JSON.stringify(unknown)).toMatchObject({ code: 2, out: { error: "usage" } });
  });
});

describe("a project's requirement per role", () => {
  it("owners and admins: an admin without a second factor is refused the project (API 403, pages redirect); members are not", async () => {
    const owner = await enrolledUser();
    const admin = await makeUser(app.sql);
    const member = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id, [{ userId: admin.id, role: "admin" }, { userId: member.id, role: "member" }]);
    const [adminCookie, memberCookie] = [await login(app, admin.email), await login(app, member.email)];
    const P = `/api/team/projects/${projectId}`;

    expect((await call(app, "GET", `${P}/two-factor`, { cookie: memberCookie })).body).toEqual({ two_factor_required: "off" });
    expect((await call(app, "PUT", `${P}/two-factor`, { cookie: memberCookie, body: { two_factor_required: "everyone" } })).status).toBe(403);
    expect((await call(app, "PUT", `${P}/two-factor`, { cookie: owner.cookie, body: { two_factor_required: "admins" } })).status).toBe(400);
    const set = await call(app, "PUT", `${P}/two-factor`, { cookie: owner.cookie, body: { two_factor_required: "owners_admins" } });
    expect(set.status).toBe(200);
    expect(set.body).toEqual({ two_factor_required: "owners_admins" });
    const [changed] = await app.sql`select actor_id, details from audit_log where action = 'project.two_factor_requirement_changed' and project_id = ${projectId}`;
    expect(changed).toEqual({ actor_id: owner.id, details: { from: "off", to: "owners_admins" } });

    const refused = await call(app, "GET", P, { cookie: adminCookie });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("second_factor_required");
    expect((await call(app, "GET", `${P}/members`, { cookie: adminCookie })).body.error).toBe("second_factor_required");
    expect((await call(app, "GET", P, { cookie: memberCookie })).status).toBe(200);
    expect((await call(app, "GET", P, { cookie: owner.cookie })).status).toBe(200);
    // another project of the admin's is not affected
    const { projectId: own } = await makeProject(app.sql, admin.id, [], "Admin's own");
    expect((await call(app, "GET", `/api/team/projects/${own}`, { cookie: adminCookie })).status).toBe(200);

    for (const path of [`/projects/${projectId}`, `/projects/${projectId}/issues`, `/projects/${projectId}/settings`]) {
      const page = await app.request(path, { headers: { cookie: adminCookie }, redirect: "manual" });
      expect(page.status, path).toBe(302);
      expect(page.headers.get("location"), path).toBe("/account/two-factor?required=1");
    }
    const enroll = await app.request("/account/two-factor?required=1", { headers: { cookie: adminCookie }, redirect: "manual" });
    expect(enroll.status).toBe(200);
    expect(await enroll.text()).toContain("requires two-factor authentication for your role");
    expect((await app.request(`/projects/${projectId}`, { headers: { cookie: memberCookie }, redirect: "manual" })).status).toBe(200);

    // once the admin turns it on, the project opens
    const setup = await call(app, "POST", "/api/auth/two-factor/setup", { cookie: adminCookie, body: {} });
    expect((await call(app, "POST", "/api/auth/two-factor/confirm", { cookie: adminCookie, body: { code: codeAt(setup.body.secret) } })).status).toBe(200);
    expect((await call(app, "GET", P, { cookie: adminCookie })).status).toBe(200);
  });

  it("everyone: members too; and nobody may set a requirement that would lock themselves out", async () => {
    const owner = await makeUser(app.sql);
    const member = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id, [{ userId: member.id, role: "member" }]);
    const [ownerCookie, memberCookie] = [await login(app, owner.email), await login(app, member.email)];
    const P = `/api/team/projects/${projectId}`;
    const self = await call(app, "PUT", `${P}/two-factor`, { cookie: ownerCookie, body: { two_factor_required: "everyone" } });
    expect(self.status).toBe(409);
    expect((await call(app, "GET", `${P}/two-factor`, { cookie: ownerCookie })).body.two_factor_required).toBe("off");

    await app.sql`update projects set two_factor_required = 'everyone' where id = ${projectId}`;
    const r = await call(app, "GET", `${P}/issues`.replace("/issues", ""), { cookie: memberCookie });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe("second_factor_required");
    const triage = await call(app, "POST", `${P}/groups/status`, { cookie: memberCookie, body: { ids: [], status: "resolved" } });
    expect(triage.body.error).toBe("second_factor_required");
    // the project still shows in the list (with its name), so the member knows where to go
    const list = await call(app, "GET", "/api/team/projects", { cookie: memberCookie });
    expect(list.body.data.map((p: { id: string }) => p.id)).toContain(projectId);
  });

  it("concurrent changes are applied one after the other: each audit row names the value it really replaced", async () => {
    const a = await enrolledUser();
    const b = await enrolledUser();
    const { projectId } = await makeProject(app.sql, a.id, [{ userId: b.id, role: "owner" }]);
    const P = `/api/team/projects/${projectId}`;
    // the project's row is held, so both changes are in flight at once; then it is let go
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((r) => (held = r));
    const holder = app.sql.begin(async (tx) => {
      await tx`select 1 from projects where id = ${projectId} for update`;
      held();
      await new Promise<void>((r) => (release = r));
    });
    await holding;
    const puts = [
      call(app, "PUT", `${P}/two-factor`, { cookie: a.cookie, body: { two_factor_required: "everyone" } }),
      call(app, "PUT", `${P}/two-factor`, { cookie: b.cookie, body: { two_factor_required: "owners_admins" } }),
    ];
    for (let waiting = 0; waiting < 2; ) {
      await new Promise((r) => setTimeout(r, 20));
      [{ waiting }] = await app.sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    }
    release();
    await holder;
    expect((await Promise.all(puts)).map((r) => r.status)).toEqual([200, 200]);
    const rows = await app.sql<{ details: { from: string; to: string } }[]>`
      select details from audit_log where action = 'project.two_factor_requirement_changed' and project_id = ${projectId} order by id`;
    expect(rows).toHaveLength(2);
    const [first, second] = rows.map((r) => r.details);
    expect(first.from).toBe("off");
    expect(second.from).toBe(first.to);
    expect(second.to).not.toBe(first.to);
    expect((await call(app, "GET", `${P}/two-factor`, { cookie: a.cookie })).body.two_factor_required).toBe(second.to);
  });

  it("an account that signs in only through a provider meets it: its second factor is the provider's", async () => {
    const owner = await enrolledUser();
    const viaProvider = await makeUser(app.sql);
    const { projectId } = await makeProject(app.sql, owner.id, [{ userId: viaProvider.id, role: "member" }]);
    const cookie = await login(app, viaProvider.email);
    const P = `/api/team/projects/${projectId}`;
    expect((await call(app, "PUT", `${P}/two-factor`, { cookie: owner.cookie, body: { two_factor_required: "everyone" } })).status).toBe(200);
    expect((await call(app, "GET", P, { cookie })).status).toBe(403);
    // as an account made by a first OpenID Connect sign-in is
    await app.sql`update users set has_password = false where id = ${viaProvider.id}`;
    expect((await call(app, "GET", P, { cookie })).status).toBe(200);
  });
});
