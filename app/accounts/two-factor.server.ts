import { createHmac, hkdfSync, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import {
  acceptStep,
  deleteTwoFactor,
  getTwoFactor,
  replaceRecoveryCodes,
  unusedRecoveryCodes,
  upsertPendingTwoFactor,
  useRecoveryCode,
  type TwoFactorRow,
} from "../../db/two-factor.js";
import { findUserById, getPasswordHash, type User } from "../../db/users.js";
import { hasPassword } from "../../db/sign-in-identities.js";
import { recordAudit } from "../../db/audit.js";
import { pacedHit, clearRateLimit } from "../../db/rate-limits.js";
import type { Config } from "~/env.server";
import { ApiError, conflict, forbidden, invalidPayload } from "~/http.server";
import { parseOr400 } from "~/input.server";
import { openFor, sealFor, type SealPurpose } from "~/seal.server";
import { verifyPassword } from "./passwords.server";

/**
 * Two-factor authentication for password accounts: TOTP after RFC 6238 (HMAC-SHA-1, 6 digits, 30 s
 * steps, a code of the step before or after accepted for clock drift) and 10 single-use recovery
 * codes. The secret is sealed at rest with the user id as associated data; recovery codes are kept
 * as an HMAC under a key derived from APP_SECRET. A code is accepted only for a step later than the
 * last one accepted, so a code cannot be used twice, even within its 30 seconds.
 */
export const TOTP_ISSUER = "Roblox Monitor";
export const TOTP_PARAMS = { algorithm: "SHA1", digits: 6, period: 30 } as const;
/** Steps either side of now a code may come from (clock drift between the phone and the server). */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;

const SEAL: SealPurpose = { salt: "two-factor", info: "totp-secret" };

type Deps = { sql: Sql; config: Pick<Config, "appSecret"> };

const totpOf = (secretBase32: string, label = "account") =>
  new TOTP({ issuer: TOTP_ISSUER, label, secret: Secret.fromBase32(secretBase32), ...TOTP_PARAMS });

/** The RFC 6238 time step a 6-digit code matches, within ±1 step of `now`; null when none. */
export function matchStep(secretBase32: string, code: string, now = Date.now()): number | null {
  const delta = totpOf(secretBase32).validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? null : TOTP.counter({ period: TOTP_PARAMS.period, timestamp: now }) + delta;
}

/** The code for `now` (tests and the enrollment check use it). */
export const codeAt = (secretBase32: string, now = Date.now()) => totpOf(secretBase32).generate({ timestamp: now });

const openSecret = (deps: Deps, userId: string, row: TwoFactorRow) =>
  openFor(SEAL, deps.config.appSecret, userId, { ciphertext: row.secret_ciphertext, iv: row.secret_iv, tag: row.secret_tag });

// recovery codes: 10 characters of an alphabet without look-alikes (about 50 bits), shown as xxxxx-xxxxx
const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";
const newRecoveryCode = () => {
  let s = "";
  for (let i = 0; i < 10; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return `${s.slice(0, 5)}-${s.slice(5)}`;
};
const recoveryKeys = new Map<string, Buffer>();
const recoveryHash = (appSecret: string, userId: string, code: string) => {
  let key = recoveryKeys.get(appSecret);
  if (!key) recoveryKeys.set(appSecret, (key = Buffer.from(hkdfSync("sha256", appSecret, "two-factor", "recovery-codes", 32))));
  return createHmac("sha256", key).update(`${userId}:${code}`).digest();
};

/** What a person types: spaces and dashes dropped, lower case; a TOTP code is 6 digits, a recovery code 10 letters and digits. */
export function normalizeCode(raw: string): { kind: "totp" | "recovery"; code: string } | null {
  const s = raw.replace(/[\s-]/g, "").toLowerCase();
  if (/^\d{6}$/.test(s)) return { kind: "totp", code: s };
  if (s.length === 10 && [...s].every((c) => ALPHABET.includes(c))) return { kind: "recovery", code: `${s.slice(0, 5)}-${s.slice(5)}` };
  return null;
}

async function freshRecoveryCodes(deps: Deps, userId: string) {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  return { codes, hashes: codes.map((c) => recoveryHash(deps.config.appSecret, userId, c)) };
}

/**
 * Checks a second factor for an account that has it on: a TOTP code (accepted once: its step must be
 * later than the last accepted) or an unused recovery code (spent by this check). `allowRecovery`
 * false for the actions that must prove the authenticator itself.
 */
export async function verifySecondFactor(deps: Deps, userId: string, raw: string, opts: { allowRecovery?: boolean; now?: number } = {}): Promise<"totp" | "recovery" | null> {
  const row = await getTwoFactor(deps.sql, userId);
  if (!row?.enabled_at) return null;
  const code = normalizeCode(raw);
  if (!code) return null;
  if (code.kind === "recovery") {
    if (opts.allowRecovery === false) return null;
    return (await useRecoveryCode(deps.sql, userId, recoveryHash(deps.config.appSecret, userId, code.code))) ? "recovery" : null;
  }
  const step = matchStep(openSecret(deps, userId, row), code.code, opts.now);
  if (step === null) return null;
  return (await acceptStep(deps.sql, userId, step)) ? "totp" : null;
}

export const hasSecondFactor = async (sql: Sql, userId: string) => Boolean((await getTwoFactor(sql, userId))?.enabled_at);

export async function twoFactorStatus(sql: Sql, userId: string) {
  const row = await getTwoFactor(sql, userId);
  return {
    enabled: Boolean(row?.enabled_at),
    enabled_at: row?.enabled_at ?? null,
    pending: Boolean(row && !row.enabled_at),
    recovery_codes_left: row?.enabled_at ? await unusedRecoveryCodes(sql, userId) : 0,
  };
}

/**
 * Starts (or restarts) an enrollment: a new 160-bit secret, sealed and stored as pending, and what an
 * authenticator app needs to add it: the otpauth:// URI, the same as a QR code (an SVG data URL made
 * here, no outside service) and the key to type by hand. 409 when two-factor is already on.
 */
export async function startEnrollment(deps: Deps, user: Pick<User, "id" | "email">) {
  const secret = new Secret({ size: 20 }).base32;
  const sealed = sealFor(SEAL, deps.config.appSecret, user.id, secret);
  if (!(await upsertPendingTwoFactor(deps.sql, user.id, sealed))) {
    throw conflict("Two-factor authentication is already on; turn it off first to enroll another authenticator.");
  }
  return enrollmentView(secret, user.email);
}

export const CodeInput = z.object({ code: z.string({ error: "is required" }).trim().min(1, "is required").max(64, "must be at most 64 characters") });
export const DisableInput = CodeInput.extend({ password: z.string({ error: "is required" }).min(1, "is required").max(1024) });

/** How many wrong codes the account pages accept before pacing and then refusing (as at sign-in). */
const PACE_FREE = 3;

/**
 * Codes checked for a signed-in user (confirm, new recovery codes, turn off) are counted per account
 * the way sign-in attempts are: after 3 failures each must wait 1, 2, 4… s, and past
 * LOGIN_MAX_FAILURES in the window they are refused (429) until it ends, so a stolen session cannot
 * guess codes. A right code clears the count.
 */
async function paced<T>(deps: Deps & { config: Pick<Config, "loginWindowSeconds" | "loginMaxFailures"> }, userId: string, check: () => Promise<T | null>, wrong: () => ApiError): Promise<T> {
  const key = `two-factor:account:${userId}`;
  const window = deps.config.loginWindowSeconds;
  const p = await pacedHit(deps.sql, key, window, PACE_FREE, Math.min(300, window));
  if (!p.allowed) throw tooManyCodes(p.retryAfterSeconds);
  if (p.count > deps.config.loginMaxFailures) {
    throw tooManyCodes(Math.max(1, Math.ceil((p.windowStart.getTime() + window * 1000 - Date.now()) / 1000)));
  }
  const ok = await check();
  if (ok === null) throw wrong();
  await clearRateLimit(deps.sql, key);
  return ok;
}

export const tooManyCodes = (retryAfter: number) =>
  new ApiError(429, "rate_limited", `Too many wrong codes; try again in ${retryAfter} seconds.`, undefined, { "Retry-After": String(retryAfter) });

const wrongCode = () => invalidPayload("The request body is invalid: code is wrong or was already used.", [{ path: "code", message: "is wrong or was already used" }]);

type ManageDeps = Deps & { config: Pick<Config, "appSecret" | "loginWindowSeconds" | "loginMaxFailures"> };

/** Confirms a pending enrollment with a code from the app: two-factor is on, and the recovery codes are returned once. */
export async function confirmEnrollment(deps: ManageDeps, user: Pick<User, "id">, input: unknown) {
  const { code } = parseOr400(CodeInput, input);
  const row = await getTwoFactor(deps.sql, user.id);
  if (!row) throw conflict("Start enrolling first (POST /api/auth/two-factor/setup).");
  if (row.enabled_at) throw conflict("Two-factor authentication is already on.");
  const { codes, hashes } = await freshRecoveryCodes(deps, user.id);
  await paced(deps, user.id, async () => {
    const c = normalizeCode(code);
    const step = c?.kind === "totp" ? matchStep(openSecret(deps, user.id, row), c.code) : null;
    return step !== null && (await acceptStep(deps.sql, user.id, step, { enable: { recoveryHashes: hashes } })) ? true : null;
  }, wrongCode);
  await recordAudit(deps.sql, { projectId: null, actorId: user.id, action: "account.two_factor_enabled", target: await emailOf(deps.sql, user.id) });
  return { enabled: true, recovery_codes: codes };
}

/** A new set of 10 recovery codes (the old ones stop working), for a current code from the authenticator. */
export async function regenerateRecoveryCodes(deps: ManageDeps, user: Pick<User, "id">, input: unknown) {
  const { code } = parseOr400(CodeInput, input);
  if (!(await hasSecondFactor(deps.sql, user.id))) throw conflict("Two-factor authentication is off.");
  await paced(deps, user.id, () => verifySecondFactor(deps, user.id, code, { allowRecovery: false }), wrongCode);
  const { codes, hashes } = await freshRecoveryCodes(deps, user.id);
  await replaceRecoveryCodes(deps.sql, user.id, hashes);
  await recordAudit(deps.sql, { projectId: null, actorId: user.id, action: "account.recovery_codes_replaced", target: await emailOf(deps.sql, user.id) });
  return { recovery_codes: codes };
}

/**
 * Turns two-factor off: needs the password and a code (from the app, or a recovery code). An account
 * with no password of its own (made by a sign-in provider) proves itself with the code alone: a
 * password it was never given cannot be asked for, and the code still needs the authenticator.
 */
export async function disableTwoFactor(deps: ManageDeps, user: Pick<User, "id">, input: unknown) {
  const withPassword = await hasPassword(deps.sql, user.id);
  const { code, password } = withPassword ? parseOr400(DisableInput, input) : { ...parseOr400(CodeInput, input), password: null };
  if (!(await hasSecondFactor(deps.sql, user.id))) throw conflict("Two-factor authentication is off.");
  const stored = withPassword ? await getPasswordHash(deps.sql, user.id) : null;
  await paced(deps, user.id, async () => {
    if (password !== null && (!stored || !(await verifyPassword(password, stored)))) return null;
    return verifySecondFactor(deps, user.id, code);
  }, () => forbidden(withPassword ? "The password or the code is wrong." : "The code is wrong."));
  await deleteTwoFactor(deps.sql, user.id);
  await recordAudit(deps.sql, { projectId: null, actorId: user.id, action: "account.two_factor_disabled", target: await emailOf(deps.sql, user.id) });
  return { enabled: false };
}

/** The account's email, as the instance's audit log names accounts. */
const emailOf = async (sql: Sql, userId: string) => (await findUserById(sql, userId))?.email ?? null;

const enrollmentView = async (secret: string, email: string) => {
  const uri = totpOf(secret, email).toString();
  const svg = await QRCode.toString(uri, { type: "svg", errorCorrectionLevel: "M", margin: 2 });
  return { secret, otpauth_url: uri, qr_code: `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}` };
};

/** The pending enrollment's key and QR code again (the enrollment page after a reload), to the user alone. */
export async function pendingEnrollment(deps: Deps, user: Pick<User, "id" | "email">) {
  const row = await getTwoFactor(deps.sql, user.id);
  return row && !row.enabled_at ? enrollmentView(openSecret(deps, user.id, row), user.email) : null;
}

/** Forgets a pending (unconfirmed) enrollment. */
export async function cancelEnrollment(sql: Sql, userId: string) {
  const row = await getTwoFactor(sql, userId);
  if (row && !row.enabled_at) await deleteTwoFactor(sql, userId);
}

// -- the sign-in challenge: proof that the password was right, good for a few minutes --------------

/** How long after the password the second factor may be given. */
export const CHALLENGE_SECONDS = 300;
const challengeKeys = new Map<string, Buffer>();
const challengeKey = (appSecret: string) => {
  let key = challengeKeys.get(appSecret);
  if (!key) challengeKeys.set(appSecret, (key = Buffer.from(hkdfSync("sha256", appSecret, "two-factor", "sign-in-challenge", 32))));
  return key;
};
const challengeMac = (appSecret: string, body: string) => createHmac("sha256", challengeKey(appSecret)).update(body).digest("base64url");

/** A signed token naming the account whose password was just proved, and when it stops being accepted. */
export function newChallenge(appSecret: string, userId: string, now = Date.now()): { challenge: string; expiresAt: Date } {
  const expires = Math.floor(now / 1000) + CHALLENGE_SECONDS;
  const body = `${userId}.${expires}.${randomBytes(12).toString("base64url")}`;
  return { challenge: `${body}.${challengeMac(appSecret, body)}`, expiresAt: new Date(expires * 1000) };
}

const CHALLENGE = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(\d{1,12})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]{43})$/;

/** The account a challenge names, when its signature holds and it has not expired. */
export function openChallenge(appSecret: string, challenge: string, now = Date.now()): string | null {
  const m = CHALLENGE.exec(challenge);
  if (!m) return null;
  const given = Buffer.from(m[4], "base64url");
  const expected = Buffer.from(challengeMac(appSecret, `${m[1]}.${m[2]}.${m[3]}`), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  if (Number(m[2]) * 1000 <= now) return null;
  return m[1];
}
