import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { isHttps, readCookie } from "./sessions.server";

/**
 * Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"): a browser that
 * proved an account's password keeps a token naming that account, with a random nonce and an expiry,
 * signed with a key derived from APP_SECRET. A sign-in that carries a valid token for the account it
 * tries is limited on that token alone, so failures others send from the same address, or to the
 * same email, cannot lock that browser out. Nothing is stored: the signature is the proof, and a
 * token's own failures are counted under its nonce.
 */
export const DEVICE_COOKIE = "rm_device";
/** How long a browser stays known without signing in again (renewed at each sign-in). */
export const DEVICE_DAYS = 365;
/** Accounts one browser is remembered for (newest first); an older one falls off. */
const MAX_TOKENS = 5;

export type DeviceToken = { userId: string; nonce: string; expires: number };

const keys = new Map<string, Buffer>();
const keyFor = (appSecret: string) => {
  let key = keys.get(appSecret);
  if (!key) keys.set(appSecret, (key = Buffer.from(hkdfSync("sha256", appSecret, "device-cookie", "login", 32))));
  return key;
};

const sign = (appSecret: string, t: DeviceToken) =>
  createHmac("sha256", keyFor(appSecret)).update(`${t.userId}.${t.nonce}.${t.expires}`).digest();
const encode = (appSecret: string, t: DeviceToken) => `${t.userId}.${t.nonce}.${t.expires}.${sign(appSecret, t).toString("base64url")}`;

const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

/** The request's tokens whose signature holds and that have not expired. */
export function deviceTokens(request: Request, appSecret: string, now = Date.now()): DeviceToken[] {
  const raw = readCookie(request, DEVICE_COOKIE);
  if (!raw || raw.length > 200 * MAX_TOKENS) return [];
  const out: DeviceToken[] = [];
  for (const part of raw.split("~").slice(0, MAX_TOKENS)) {
    const m = TOKEN.exec(part);
    if (!m) continue;
    const token = { userId: m[1], nonce: m[2], expires: Number(m[3]) };
    const given = Buffer.from(m[4], "base64url");
    const expected = sign(appSecret, token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) continue;
    if (token.expires * 1000 <= now) continue;
    out.push(token);
  }
  return out;
}

/** The request's valid token for this account, if the browser proved its password before. */
export const deviceTokenFor = (request: Request, appSecret: string, userId: string | undefined) =>
  userId === undefined ? undefined : deviceTokens(request, appSecret).find((t) => t.userId === userId);

/**
 * A fresh token for the account that just proved its password (a new nonce, so the old one's
 * failures are left behind), kept with the browser's other valid tokens; returns the Set-Cookie value.
 */
export function deviceCookie(request: Request, appSecret: string, userId: string): string {
  const fresh: DeviceToken = { userId, nonce: randomBytes(16).toString("base64url"), expires: Math.floor(Date.now() / 1000) + DEVICE_DAYS * 86_400 };
  const others = deviceTokens(request, appSecret).filter((t) => t.userId !== userId).slice(0, MAX_TOKENS - 1);
  return [
    `${DEVICE_COOKIE}=${[fresh, ...others].map((t) => encode(appSecret, t)).join("~")}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${DEVICE_DAYS * 86_400}`,
    ...(isHttps(request) ? ["Secure"] : []),
  ].join("; ");
}
