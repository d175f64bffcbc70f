import { describe, expect, it } from "vitest";
import { deviceCookie, deviceTokenFor, deviceTokens, DEVICE_DAYS } from "../../app/accounts/device-cookies.server.js";

const SECRET = "a".repeat(40);
const ALICE = "11111111-1111-4111-8111-111111111111";
const BOB = "22222222-2222-4222-8222-222222222222";

/** A request carrying the cookie from a Set-Cookie value (the browser sending it back). */
const withCookie = (setCookie: string | undefined, url = "http://monitor.test/api/auth/login") =>
  new Request(url, { headers: setCookie ? { cookie: setCookie.split(";")[0] } : {} });

describe("device cookies", () => {
  it("name the account that proved its password, and verify only with the same secret", () => {
    const req = withCookie(deviceCookie(withCookie(undefined), SECRET, ALICE));
    expect(deviceTokenFor(req, SECRET, ALICE)).toMatchObject({ userId: ALICE, nonce: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/) });
    expect(deviceTokenFor(req, SECRET, BOB)).toBeUndefined();
    expect(deviceTokenFor(req, SECRET, undefined)).toBeUndefined();
    expect(deviceTokens(req, "b".repeat(40))).toEqual([]);
  });

  it("expire after DEVICE_DAYS", () => {
    const req = withCookie(deviceCookie(withCookie(undefined), SECRET, ALICE));
    const [t] = deviceTokens(req, SECRET);
    expect(t.expires * 1000).toBeGreaterThan(Date.now() + (DEVICE_DAYS - 1) * 86_400_000);
    expect(deviceTokens(req, SECRET, Date.now() + DEVICE_DAYS * 86_400_000 + 1000)).toEqual([]);
  });

  it("keep the browser's other accounts, with a new nonce for the one signing in", () => {
    const first = withCookie(deviceCookie(withCookie(undefined), SECRET, ALICE));
    const both = withCookie(deviceCookie(first, SECRET, BOB));
    const [aliceBefore] = deviceTokens(first, SECRET);
    expect(deviceTokens(both, SECRET).map((t) => t.userId)).toEqual([BOB, ALICE]);
    const again = withCookie(deviceCookie(both, SECRET, ALICE));
    const tokens = deviceTokens(again, SECRET);
    expect(tokens.map((t) => t.userId)).toEqual([ALICE, BOB]);
    expect(tokens[0].nonce).not.toBe(aliceBefore.nonce);
  });

  it("ignore garbage, and are Secure only over https", () => {
    for (const value of ["", "x", "~~~", "a.b.c.d", `${ALICE}.${"A".repeat(22)}.99999999999.${"A".repeat(43)}`, "%00".repeat(500)]) {
      expect(deviceTokens(new Request("http://monitor.test/", { headers: { cookie: `rm_device=${value}` } }), SECRET)).toEqual([]);
    }
    expect(deviceCookie(withCookie(undefined), SECRET, ALICE)).not.toContain("Secure");
    expect(deviceCookie(withCookie(undefined, "https://monitor.test/login"), SECRET, ALICE)).toMatch(/; Secure$/);
  });
});
