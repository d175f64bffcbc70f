import { Authenticator } from "remix-auth";
import { Strategy } from "remix-auth/strategy";
import { FormStrategy } from "remix-auth-form";
import { z } from "zod";
import { clearRateLimit, hit, pacedHit, pruneRateLimits, unhit } from "../../db/rate-limits.js";
import { findUserByEmail, type User } from "../../db/users.js";
import { isKnownAddress, pruneKnownAddresses, rememberAddress } from "../../db/login-addresses.js";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import type { BodyBudget } from "~/body-budget.server";
import { ApiError, readJson, unauthorized } from "~/http.server";
import { dummyHash, verifyPassword } from "./passwords.server";
import { deviceCookie, deviceTokenFor } from "./device-cookies.server";
import { parseOr400 } from "~/input.server";

const Credentials = z.object({
  email: z.string({ error: "is required" }).trim().toLowerCase().min(1, "is required").max(320),
  password: z.string({ error: "is required" }).min(1, "is required").max(1024),
});

/** What signing in reads: the database (users, attempt counts, known addresses), the limits and the body budget. */
type LoginDeps = {
  sql: Sql;
  config: Pick<Config, "appSecret" | "loginWindowSeconds" | "loginMaxFailures" | "loginEmailMaxFailures" | "sessionDays">;
  bodies: BodyBudget;
};

/**
 * The largest sign-in body: an email of 320 and a password of 1,024 characters, each of them a JSON
 * escape. Anyone may post here, so nobody gets to send (or have decoded) more than credentials.
 */
export const LOGIN_MAX_BODY_BYTES = 16 * 1024;

/** The Team API's strategy: credentials in a JSON body (415/413/400 as everywhere else). */
class JsonStrategy<U> extends Strategy<U, { body: unknown; request: Request }> {
  name = "json";
  constructor(
    private readonly bodies: BodyBudget,
    verify: Strategy.VerifyFunction<U, { body: unknown; request: Request }>,
  ) {
    super(verify);
  }
  async authenticate(request: Request): Promise<U> {
    return this.verify({ body: await readJson(request, LOGIN_MAX_BODY_BYTES, this.bodies), request });
  }
}

/** A proven sign-in: the user, and the device cookie the browser keeps (see device-cookies.server.ts). */
export type SignIn = { user: User; deviceCookie: string };

/**
 * remix-auth with two strategies over the same check: "form" for the sign-in page, "json" for
 * POST /api/auth/login. Built per request because the check needs the client's address.
 */
export function authenticator(deps: LoginDeps, clientAddress: string): Authenticator<SignIn> {
  const check = (request: Request, input: unknown) => checkCredentials(deps, clientAddress, request, input);
  return new Authenticator<SignIn>()
    .use(
      new FormStrategy<SignIn>(({ form, request }) =>
        check(request, { email: form.get("email") ?? undefined, password: form.get("password") ?? undefined }),
      ),
    )
    .use(new JsonStrategy<SignIn>(deps.bodies, ({ body, request }) => check(request, body)));
}

/** Failures a pair (email, address) or a device may make before each further attempt must wait, doubling from 1 s. */
const PACE_FREE = 3;
const PACE_CAP_SECONDS = 300;

const tooMany = (retryAfter: number) =>
  new ApiError(429, "rate_limited", `Too many failed sign-ins; try again in ${retryAfter} seconds.`, undefined, {
    "Retry-After": String(retryAfter),
  });

/**
 * Email + password, with failed attempts counted in PostgreSQL (shared by every instance), after
 * OWASP's device-cookie scheme:
 * - a browser carrying a valid device cookie for the account it tries (it proved the password
 *   before) is limited on that cookie alone: after 3 failures each attempt must wait 1, 2, 4, 8…
 *   seconds after the last, and past LOGIN_MAX_FAILURES in the window the cookie answers 429 until
 *   the window ends. Nobody else's failures count there, so a lockout cannot be aimed at it;
 * - any other attempt (an unknown device) is limited per (email, client address) the same way, per
 *   email from every address together (LOGIN_EMAIL_MAX_FAILURES, a higher ceiling that bounds a
 *   distributed guess; attempts refused by the pair limit do not count, and it does not apply at an
 *   address the user signed in from within SESSION_DAYS), and per address across emails (three times
 *   LOGIN_MAX_FAILURES: password spraying).
 * Every attempt is counted before the password is checked, so a burst of parallel guesses cannot
 * slip past a limit; a correct one clears its own pacing, takes its other counts back and gets a
 * fresh device cookie.
 */
async function checkCredentials(deps: LoginDeps, clientAddress: string, request: Request, input: unknown): Promise<SignIn> {
  const { email, password } = parseOr400(Credentials, input);
  const { sql, config } = deps;
  const window = config.loginWindowSeconds;
  const user = await findUserByEmail(sql, email);
  const device = deviceTokenFor(request, config.appSecret, user?.id);
  const paceKey = device ? `login:device:${device.nonce}` : `login:pair:${email}|${clientAddress}`;
  const paced = await pacedHit(sql, paceKey, window, PACE_FREE, Math.min(PACE_CAP_SECONDS, window));
  if (!paced.allowed) throw tooMany(paced.retryAfterSeconds);
  if (paced.count > config.loginMaxFailures) throw tooMany(secondsLeft(paced.windowStart, window));
  const known = !device && (await isKnownAddress(sql, email, clientAddress, config.sessionDays));
  const limits = device
    ? []
    : [
        ...(known ? [] : [{ key: `login:email:${email}`, max: config.loginEmailMaxFailures }]),
        { key: `login:addr:${clientAddress}`, max: config.loginMaxFailures * 3 },
      ];
  const hits = await Promise.all(limits.map((l) => hit(sql, l.key, window)));
  if (Math.random() < 0.01) {
    pruneRateLimits(sql, Math.max(86_400, window)).catch(() => {});
    pruneKnownAddresses(sql, config.sessionDays).catch(() => {});
  }
  const blocked = hits.filter((h, i) => h.count > limits[i].max);
  if (blocked.length > 0) throw tooMany(Math.max(...blocked.map((h) => h.retryAfterSeconds)));
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash()));
  if (!user || !ok) throw unauthorized("The email or password is wrong.");
  await Promise.all([
    clearRateLimit(sql, paceKey),
    rememberAddress(sql, user.id, clientAddress),
    ...hits.map((h, i) => unhit(sql, limits[i].key, h.windowStart)),
  ]);
  return {
    user: { id: user.id, email: user.email, created_at: user.created_at, must_change_password: user.must_change_password },
    deviceCookie: deviceCookie(request, config.appSecret, user.id),
  };
}

const secondsLeft = (windowStart: Date, windowSeconds: number) =>
  Math.max(1, Math.ceil((windowStart.getTime() + windowSeconds * 1000 - Date.now()) / 1000));
