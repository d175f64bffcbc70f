import { describe, expect, it } from "vitest";
import { Secret, TOTP } from "otpauth";
import { codeAt, matchStep, newChallenge, normalizeCode, openChallenge } from "../../app/accounts/two-factor.server.js";

// RFC 6238 appendix B: the SHA-1 seed is the ASCII of "12345678901234567890"
const SEED = "12345678901234567890";
const SEED_BASE32 = Secret.fromLatin1(SEED).base32;
const VECTORS: [number, string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

describe("TOTP after RFC 6238", () => {
  it("gives the RFC's SHA-1 test values (8 digits, 30 s)", () => {
    const totp = new TOTP({ secret: Secret.fromLatin1(SEED), algorithm: "SHA1", digits: 8, period: 30 });
    for (const [t, code] of VECTORS) expect(totp.generate({ timestamp: t * 1000 }), `T=${t}`).toBe(code);
  });

  it("our 6-digit codes are the RFC values' last six digits, and match their own step", () => {
    for (const [t, code] of VECTORS) {
      expect(codeAt(SEED_BASE32, t * 1000), `T=${t}`).toBe(code.slice(2));
      expect(matchStep(SEED_BASE32, code.slice(2), t * 1000)).toBe(Math.floor(t / 30));
    }
  });

  it("accepts the step before and after (clock drift), and nothing further", () => {
    const t = 1234567890 * 1000;
    const code = codeAt(SEED_BASE32, t);
    const step = Math.floor(t / 30_000);
    expect(matchStep(SEED_BASE32, code, t + 30_000)).toBe(step);
    expect(matchStep(SEED_BASE32, code, t - 30_000)).toBe(step);
    expect(matchStep(SEED_BASE32, code, t + 60_000)).toBeNull();
    expect(matchStep(SEED_BASE32, code, t - 60_000)).toBeNull();
    expect(matchStep(SEED_BASE32, String((Number(code) + 1) % 1_000_000).padStart(6, "0"), t)).toBeNull();
  });
});

describe("codes as typed", () => {
  it("tells a 6-digit code from a recovery code, ignoring spaces, dashes and case", () => {
    expect(normalizeCode(" 123 456 ")).toEqual({ kind: "totp", code: "123456" });
    expect(normalizeCode("ABCDE-FGHJK")).toEqual({ kind: "recovery", code: "abcde-fghjk" });
    expect(normalizeCode("abcdefghjk")).toEqual({ kind: "recovery", code: "abcde-fghjk" });
    for (const bad of ["", "12345", "1234567", "abcde-fghi1", "abcdefghjkm", "ｌｏｏｋ"]) expect(normalizeCode(bad), bad).toBeNull();
  });
});

describe("the sign-in challenge", () => {
  const secret = "s".repeat(40);
  const user = "3f1c2b9a-0d4e-4a5b-8c6d-7e8f9a0b1c2d";

  it("names its account until it expires", () => {
    const now = Date.now();
    const { challenge, expiresAt } = newChallenge(secret, user, now);
    expect(openChallenge(secret, challenge, now)).toBe(user);
    expect(expiresAt.getTime() - now).toBeLessThanOrEqual(300_000);
    expect(openChallenge(secret, challenge, expiresAt.getTime())).toBeNull();
  });

  it("does not open under another secret, or when any part is changed", () => {
    const { challenge } = newChallenge(secret, user);
    expect(openChallenge("t".repeat(40), challenge)).toBeNull();
    const [id, exp, nonce, mac] = challenge.split(".");
    expect(openChallenge(secret, [id.replace(/^3/, "4"), exp, nonce, mac].join("."))).toBeNull();
    expect(openChallenge(secret, [id, String(Number(exp) + 3600), nonce, mac].join("."))).toBeNull();
    expect(openChallenge(secret, "")).toBeNull();
  });
});
