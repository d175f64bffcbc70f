import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, makeUser, PASSWORD, type Reply } from "../support/team.js";
import { pacedHit } from "../../db/rate-limits.js";
import type { Sql } from "../../db/client.js";

/**
 * Sign-in limits that stop guessing without handing anyone a way to lock a user out: per
 * (email, address) with growing delays and a hard limit, a higher ceiling per email, and device
 * cookies that keep a browser which signed in before out of lockouts others cause.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: "6", LOGIN_EMAIL_MAX_FAILURES: "10", LOGIN_WINDOW_SECONDS: "3600", TRUST_PROXY: "1" });
});
afterAll(() => app?.close());

const attempt = (email: string, password: string, addr: string, cookie?: string) =>
  call(app, "POST", "/api/auth/login", { body: { email, password }, headers: { "x-forwarded-for": addr }, cookie });

/** The device cookie a successful sign-in hands out, as a Cookie header value. */
function deviceCookieOf(r: Reply): string {
  const set = r.headers.getSetCookie().find((c) => c.startsWith("rm_device="));
  if (!set) throw new Error(`no device cookie in ${JSON.stringify(r.headers.getSetCookie())}`);
  return set.split(";")[0];
}

/** Signs in with the right password from `addr` and keeps the browser's device cookie. */
async function knownBrowser(email: string, addr: string): Promise<string> {
  const r = await attempt(email, PASSWORD, addr);
  expect(r.status).toBe(200);
  return deviceCookieOf(r);
}

/** Failed sign-ins for made-up emails from one address: 20 of them, past its 3 × 6 limit. */
async function sprayFrom(addr: string) {
  for (let i = 0; i < 20; i++) await attempt(`nobody-${i}-${Math.random().toString(36).slice(2)}@example.test`, "guess-" + i, addr);
  expect((await attempt("another-nobody@example.test", "guess", addr)).status).toBe(429);
}

/**
 * Holds the pair's last attempt a minute ahead, so the next attempt is surely "too soon" however slow
 * the machine (a password check alone can take longer than the first 1 s delay).
 */
const tooSoon = (email: string, addr: string) =>
  app.sql`update rate_limits set last_at = now() + interval '1 minute' where key = ${`login:pair:${email}|${addr}`}`;

/** Moves the pair's last attempt into the past, as if its delay had been waited out. */
const waitOut = (email: string, addr: string) =>
  app.sql`update rate_limits set last_at = last_at - interval '1 hour' where key = ${`login:pair:${email}|${addr}`}`;

describe("sign-in lockout", () => {
  it("wrong passwords from an attacker's address do not lock the owner out of theirs", async () => {
    const u = await makeUser(app.sql);
    // the attacker exhausts their own (email, address) allowance, and keeps hammering
    for (let i = 0; i < 30; i++) {
      await attempt(u.email, "wrong-" + i, "198.51.100.66");
      await waitOut(u.email, "198.51.100.66");
    }
    expect((await attempt(u.email, PASSWORD, "198.51.100.66")).status).toBe(429);
    // refused attempts did not use up the email's ceiling: the owner signs in from home
    const owner = await attempt(u.email, PASSWORD, "203.0.113.10");
    expect(owner.status).toBe(200);
    expect(owner.body.user.email).toBe(u.email);
  });

  it("the delays double: 1, 2, 4, 8 s after the fourth, fifth… counted attempt (one transaction, so one clock)", async () => {
    const waits: number[] = [];
    await app.sql.begin(async (tx) => {
      const key = "login:pair:doubling@example.test|198.51.100.21";
      for (let i = 0; i < 3; i++) expect(await pacedHit(tx as unknown as Sql, key, 3600, 3, 300)).toMatchObject({ allowed: true, count: i + 1 });
      for (let i = 0; i < 4; i++) {
        const early = await pacedHit(tx as unknown as Sql, key, 3600, 3, 300);
        expect(early.allowed).toBe(false);
        if (!early.allowed) waits.push(early.retryAfterSeconds);
        await tx`update rate_limits set last_at = last_at - interval '1 hour' where key = ${key}`;
        expect(await pacedHit(tx as unknown as Sql, key, 3600, 3, 300)).toMatchObject({ allowed: true, count: 4 + i });
      }
    });
    expect(waits).toEqual([1, 2, 4, 8]);
  });

  it("after three failures an attempt that comes too soon is refused with Retry-After, then the pair is refused for the window", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.20";
    for (let i = 0; i < 3; i++) expect((await attempt(u.email, "wrong-" + i, addr)).status).toBe(401);
    for (let i = 3; i < 6; i++) {
      await tooSoon(u.email, addr);
      const early = await attempt(u.email, PASSWORD, addr);
      expect(early.status).toBe(429);
      expect(early.body.error).toBe("rate_limited");
      expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      await waitOut(u.email, addr);
      expect((await attempt(u.email, "wrong-" + i, addr)).status).toBe(401);
    }
    // LOGIN_MAX_FAILURES (6) reached: refused until the window ends, delay or not, right password or not
    await waitOut(u.email, addr);
    const locked = await attempt(u.email, PASSWORD, addr);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(4);
  });

  it("a correct password clears the pair's delays", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.30";
    for (let i = 0; i < 3; i++) expect((await attempt(u.email, "typo-" + i, addr)).status).toBe(401);
    await waitOut(u.email, addr);
    expect((await attempt(u.email, PASSWORD, addr)).status).toBe(200);
    // a fresh allowance: the next typo is not delayed
    expect((await attempt(u.email, "typo-again", addr)).status).toBe(401);
    expect((await attempt(u.email, "typo-again-2", addr)).status).toBe(401);
  });

  it("the per-email ceiling bounds guessing spread over many addresses, but not where the owner signed in before", async () => {
    const u = await makeUser(app.sql);
    expect((await attempt(u.email, PASSWORD, "203.0.113.50")).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await attempt(u.email, "spread-" + i, `192.0.2.${i + 1}`)).status).toBe(401);
    const next = await attempt(u.email, PASSWORD, "192.0.2.200");
    expect(next.status).toBe(429);
    expect(Number(next.headers.get("retry-after"))).toBeGreaterThan(0);
    // the owner's usual address still works, and so does any guessing there stay under the pair limit
    expect((await attempt(u.email, PASSWORD, "203.0.113.50")).status).toBe(200);
  });
});

describe("device cookies", () => {
  it("failures for other emails from the user's address lock out unknown devices there, not the browser that signed in before", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.70";
    const device = await knownBrowser(u.email, addr);
    await sprayFrom(addr);
    const known = await attempt(u.email, PASSWORD, addr, device);
    expect(known.status).toBe(200);
    expect(known.body.user.email).toBe(u.email);
    // a browser that never signed in is limited per address as before
    expect((await attempt(u.email, PASSWORD, addr)).status).toBe(429);
  });

  it("the sign-in page honours the device cookie too, and hands one out", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.71";
    const form = (cookie?: string) =>
      app.request("/login", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url, "x-forwarded-for": addr, ...(cookie ? { cookie } : {}) },
        body: new URLSearchParams({ email: u.email, password: PASSWORD }).toString(),
        redirect: "manual",
      });
    const first = await form();
    expect(first.status).toBe(302);
    const device = first.headers.getSetCookie().find((c) => c.startsWith("rm_device="))!.split(";")[0];
    await sprayFrom(addr);
    expect((await form()).status).toBe(429);
    expect((await form(device)).status).toBe(302);
  });

  it("someone at the same address guessing the user's own password cannot lock out the user's browser (one address for all, as behind a proxy)", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.72";
    const device = await knownBrowser(u.email, addr);
    for (let i = 0; i < 10; i++) {
      await attempt(u.email, "wrong-" + i, addr);
      await waitOut(u.email, addr);
    }
    expect((await attempt(u.email, PASSWORD, addr)).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, addr, device)).status).toBe(200);
  });

  it("guessing spread over many addresses leaves the browser that signed in before free, even at a new address", async () => {
    const u = await makeUser(app.sql);
    const device = await knownBrowser(u.email, "203.0.113.80");
    for (let i = 0; i < 10; i++) expect((await attempt(u.email, "spread-" + i, `192.0.2.${100 + i}`)).status).toBe(401);
    expect((await attempt(u.email, PASSWORD, "192.0.2.250")).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, "192.0.2.251", device)).status).toBe(200);
  });

  it("a device cookie that fails itself is paced and then locked out on its own; other browsers of the user are not", async () => {
    const u = await makeUser(app.sql);
    const addr = "198.51.100.73";
    const stolen = await knownBrowser(u.email, addr);
    const mine = await knownBrowser(u.email, "203.0.113.73");
    const nonce = stolen.split(".")[1];
    const key = `login:device:${nonce}`;
    for (let i = 0; i < 3; i++) expect((await attempt(u.email, "wrong-" + i, addr, stolen)).status).toBe(401);
    await app.sql`update rate_limits set last_at = now() + interval '1 minute' where key = ${key}`;
    const early = await attempt(u.email, PASSWORD, addr, stolen);
    expect(early.status).toBe(429);
    expect(Number(early.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    for (let i = 3; i < 6; i++) {
      await app.sql`update rate_limits set last_at = last_at - interval '1 hour' where key = ${key}`;
      expect((await attempt(u.email, "wrong-" + i, addr, stolen)).status).toBe(401);
    }
    await app.sql`update rate_limits set last_at = last_at - interval '1 hour' where key = ${key}`;
    const locked = await attempt(u.email, PASSWORD, addr, stolen);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(4);
    // the cookie's failures were its own: the user's other browser, and the pair at that address, are untouched
    expect((await attempt(u.email, PASSWORD, "203.0.113.73", mine)).status).toBe(200);
    expect((await attempt(u.email, PASSWORD, addr)).status).toBe(200);
  });

  it("a signed-in browser gets a fresh device cookie each time, and an altered one or another account's does not help", async () => {
    const u = await makeUser(app.sql);
    const other = await makeUser(app.sql);
    const addr = "198.51.100.74";
    const first = await knownBrowser(u.email, addr);
    const again = await attempt(u.email, PASSWORD, addr, first);
    expect(again.status).toBe(200);
    const renewed = deviceCookieOf(again);
    expect(renewed).not.toBe(first);
    const otherDevice = await knownBrowser(other.email, addr);
    await sprayFrom(addr);
    const [name, nonce, expires, sig] = renewed.split(".");
    const otherNonce = `${name}.${nonce[0] === "A" ? "B" : "A"}${nonce.slice(1)}.${expires}.${sig}`;
    const longer = `${name}.${nonce}.${Number(expires) + 86_400}.${sig}`;
    expect((await attempt(u.email, PASSWORD, addr, otherNonce)).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, addr, longer)).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, addr, otherDevice)).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, addr, renewed)).status).toBe(200);
  });

  it("the device cookie is HttpOnly, SameSite=Lax, long-lived, and Secure when the request came over https", async () => {
    const u = await makeUser(app.sql);
    const plain = (await attempt(u.email, PASSWORD, "198.51.100.75")).headers.getSetCookie().find((c) => c.startsWith("rm_device="))!;
    expect(plain).toMatch(/; HttpOnly/);
    expect(plain).toMatch(/; SameSite=Lax/);
    expect(plain).toMatch(/; Path=\//);
    expect(plain).toMatch(/; Max-Age=31536000/);
    expect(plain).not.toMatch(/Secure/);
    const https = await call(app, "POST", "/api/auth/login", {
      body: { email: u.email, password: PASSWORD },
      headers: { "x-forwarded-for": "198.51.100.75", "x-forwarded-proto": "https" },
    });
    expect(https.headers.getSetCookie().find((c) => c.startsWith("rm_device="))).toMatch(/; Secure/);
  });
});

describe("failed sign-ins in the instance's audit log", () => {
  type Row = { action: string; target: string; actor_id: string | null; project_id: string | null; details: Record<string, unknown> };
  const rowsFor = (email: string) =>
    app.sql<Row[]>`select action, target, actor_id, project_id, details from audit_log where target = ${email} and action like 'account.sign_in_%' order by id`;
  /** The rows are written beside the answer, not before it: polls until `done` holds. */
  async function rowsOnce(email: string, done: (rows: Row[]) => boolean): Promise<Row[]> {
    for (let i = 0; i < 200; i++) {
      const rows = await rowsFor(email);
      if (done(rows)) return rows;
      await new Promise((r) => setTimeout(r, 25));
    }
    return rowsFor(email);
  }

  it("a wrong password at an existing account is a row naming the account and the address; an unknown email answers the same and writes none", async () => {
    const u = await makeUser(app.sql);
    const ghost = `ghost-${Math.random().toString(36).slice(2)}@example.test`;
    const unknown = await attempt(ghost, "wrong password", "203.0.113.40");
    const known = await attempt(u.email, "wrong password", "203.0.113.40");
    expect([unknown.status, known.status]).toEqual([401, 401]);
    expect(known.body).toEqual(unknown.body);
    const rows = await rowsOnce(u.email, (r) => r.length >= 1);
    expect(rows).toEqual([
      { action: "account.sign_in_failed", target: u.email, actor_id: null, project_id: null, details: { step: "password", address: "203.0.113.40" } },
    ]);
    expect(await rowsFor(ghost)).toEqual([]);
    expect((await app.sql`select 1 from audit_log where details->>'address' = '203.0.113.40' and target <> ${u.email}`).length).toBe(0);
  });

  it("hammering an account writes one row per attempt the limits let through and one lockout row, however long it goes on", async () => {
    const u = await makeUser(app.sql);
    const addr = "203.0.113.41";
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push((await attempt(u.email, "wrong-" + i, addr)).status);
      await waitOut(u.email, addr);
    }
    // LOGIN_MAX_FAILURES (6) are checked, the rest refused
    expect(statuses.filter((s) => s === 401)).toHaveLength(6);
    expect(statuses.filter((s) => s === 429)).toHaveLength(14);
    const rows = await rowsOnce(u.email, (r) => r.length >= 7);
    expect(rows.filter((r) => r.action === "account.sign_in_failed")).toHaveLength(6);
    const locked = rows.filter((r) => r.action === "account.sign_in_locked");
    expect(locked).toEqual([
      {
        action: "account.sign_in_locked",
        target: u.email,
        actor_id: null,
        project_id: null,
        details: { limit: "email_and_address", address: addr, retry_after_seconds: expect.any(Number) },
      },
    ]);
    // the owner's own browser still signs in, and more refused attempts add nothing
    for (let i = 0; i < 5; i++) expect((await attempt(u.email, "again-" + i, addr)).status).toBe(429);
    expect((await attempt(u.email, PASSWORD, "203.0.113.42")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(await rowsFor(u.email)).toHaveLength(7);
  });
});
