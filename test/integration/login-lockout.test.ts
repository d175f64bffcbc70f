import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";
import { call, makeUser, PASSWORD } from "../support/team.js";
import { pacedHit } from "../../db/rate-limits.js";
import type { Sql } from "../../db/client.js";

/**
 * Sign-in limits that stop guessing without handing anyone a way to lock a user out: per
 * (email, address) with growing delays and a hard limit, and a higher ceiling per email.
 */
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: "6", LOGIN_EMAIL_MAX_FAILURES: "10", LOGIN_WINDOW_SECONDS: "3600", TRUST_PROXY: "1" });
});
afterAll(() => app?.close());

const attempt = (email: string, password: string, addr: string) =>
  call(app, "POST", "/api/auth/login", { body: { email, password }, headers: { "x-forwarded-for": addr } });

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
