import { Authenticator } from "remix-auth";
import { Strategy } from "remix-auth/strategy";
import { FormStrategy } from "remix-auth-form";
import { z } from "zod";
import { clearRateLimit, hit, pacedHit, pruneRateLimits, unhit } from "../../db/rate-limits.js";
import { findUserByEmail, findUserById, type User } from "../../db/users.js";
import { isKnownAddress, pruneKnownAddresses, rememberAddress } from "../../db/login-addresses.js";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import type { BodyBudget } from "~/body-budget.server";
import { ApiError, readJson, unauthorized } from "~/http.server";
import { dummyHash, verifyPassword } from "./passwords.server";
import { deviceCookie, deviceTokenFor } from "./device-cookies.server";
import { parseOr400 } from "~/input.server";
import { hasSecondFactor, newChallenge, openChallenge, verifySecondFactor } from "./two-factor.server";
import { auditFailedSignIn, auditLockout, type Limit } from "./sign-in-audit.server";

export const Credentials = z.object({
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

/**
 * A proven sign-in: the user, and the device cookie the browser keeps (see device-cookies.server.ts);
 * or, for an account with two-factor on, the password proved and a challenge to send back with a code.
 */
export type SignIn = { user: User; deviceCookie: string } | { secondFactor: { challenge: string; expiresAt: Date; user: User } };

export const SecondStep = z.object({
  challenge: z.string({ error: "is required" }).max(200, "must be at most 200 characters"),
  code: z.string({ error: "is required" }).trim().min(1, "is required").max(64, "must be at most 64 characters"),
});

/** The second request of a two-factor sign-in carries `challenge` (and `code`) instead of a password. */
const isSecondStep = (input: unknown) => typeof input === "object" && input !== null && "challenge" in input;

/**
 * remix-auth with two strategies over the same check: "form" for the sign-in page, "json" for
 * POST /api/auth/login. Built per request because the check needs the client's address.
 */
export function authenticator(deps: LoginDeps, clientAddress: string): Authenticator<SignIn> {
  const check = (request: Request, input: unknown) =>
    isSecondStep(input) ? checkSecondFactor(deps, clientAddress, request, input) : checkCredentials(deps, clientAddress, request, input);
  return new Authenticator<SignIn>()
    .use(
      new FormStrategy<SignIn>(({ form, request }) =>
        check(
          request,
          form.has("challenge")
            ? { challenge: form.get("challenge") ?? undefined, code: form.get("code") ?? undefined }
            : { email: form.get("email") ?? undefined, password: form.get("password") ?? undefined },
        ),
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
  const user = await findUserByEmail(deps.sql, email);
  const attempt = await countAttempt(deps, clientAddress, request, email, user);
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash()));
  if (user && !ok) auditFailedSignIn(deps.sql, user, "password", clientAddress);
  if (!user || !ok) throw unauthorized("The email or password is wrong.");
  const proven = { id: user.id, email: user.email, created_at: user.created_at, must_change_password: user.must_change_password };
  if (await hasSecondFactor(deps.sql, user.id)) {
    // the password was right, so this attempt is taken back; but the pacing is cleared, the address
    // remembered and a device cookie handed out only once the second factor proves too, so wrong
    // codes keep counting however often the password is given again
    await attempt.takeBack();
    return { secondFactor: { ...newChallenge(deps.config.appSecret, user.id), user: proven } };
  }
  return { user: proven, deviceCookie: await attempt.succeeded(user.id) };
}

/**
 * The second step of a two-factor sign-in: the challenge from the first answer (the password was
 * right within the last 5 minutes) and a code from the authenticator app or a recovery code. Counted
 * and paced exactly as a password attempt, under the same keys (the device cookie's, else the
 * (email, address) pair's, the email's ceiling and the address's), so a wrong code costs what a wrong
 * password costs and the lockout rules hold for both factors together.
 */
async function checkSecondFactor(deps: LoginDeps, clientAddress: string, request: Request, input: unknown): Promise<SignIn> {
  const { challenge, code } = parseOr400(SecondStep, input);
  const userId = openChallenge(deps.config.appSecret, challenge);
  const user = userId ? await findUserById(deps.sql, userId) : undefined;
  if (!user) throw unauthorized("The sign-in expired or is not valid; sign in with your email and password again.");
  const attempt = await countAttempt(deps, clientAddress, request, user.email, user);
  if (!(await verifySecondFactor(deps, user.id, code))) {
    auditFailedSignIn(deps.sql, user, "two_factor_code", clientAddress);
    throw unauthorized("The code is wrong or was already used.");
  }
  return { user, deviceCookie: await attempt.succeeded(user.id) };
}

/**
 * Counts one sign-in attempt before anything is checked, so a burst of parallel guesses cannot slip
 * past a limit (429 when a limit is reached; the first of an existing account's in a window is
 * audited, a pacing wait is not). Returns what to do when it proves right.
 */
async function countAttempt(deps: LoginDeps, clientAddress: string, request: Request, email: string, user: { id: string; email: string } | undefined) {
  const { sql, config } = deps;
  const window = config.loginWindowSeconds;
  const device = deviceTokenFor(request, config.appSecret, user?.id);
  const locked = (limit: Limit, retryAfter: number) => {
    if (user) auditLockout(sql, user, limit, clientAddress, retryAfter, window);
    return tooMany(retryAfter);
  };
  const paceKey = device ? `login:device:${device.nonce}` : `login:pair:${email}|${clientAddress}`;
  const paced = await pacedHit(sql, paceKey, window, PACE_FREE, Math.min(PACE_CAP_SECONDS, window));
  if (!paced.allowed) throw tooMany(paced.retryAfterSeconds);
  if (paced.count > config.loginMaxFailures) throw locked(device ? "browser" : "email_and_address", secondsLeft(paced.windowStart, window));
  const known = !device && (await isKnownAddress(sql, email, clientAddress, config.sessionDays));
  const limits: { key: string; max: number; limit: Limit }[] = device
    ? []
    : [
        ...(known ? [] : [{ key: `login:email:${email}`, max: config.loginEmailMaxFailures, limit: "email" as const }]),
        { key: `login:addr:${clientAddress}`, max: config.loginMaxFailures * 3, limit: "address" as const },
      ];
  const hits = await Promise.all(limits.map((l) => hit(sql, l.key, window)));
  if (Math.random() < 0.01) {
    pruneRateLimits(sql, Math.max(86_400, window)).catch(() => {});
    pruneKnownAddresses(sql, config.sessionDays).catch(() => {});
  }
  const blocked = hits.flatMap((h, i) => (h.count > limits[i].max ? [{ ...h, limit: limits[i].limit }] : []));
  if (blocked.length > 0) {
    const longest = blocked.reduce((a, b) => (b.retryAfterSeconds > a.retryAfterSeconds ? b : a));
    throw locked(longest.limit, longest.retryAfterSeconds);
  }
  const unhitAll = () => Promise.all(hits.map((h, i) => unhit(sql, limits[i].key, h.windowStart)));
  return {
    /** The sign-in is complete: the pacing clears, the address is remembered, the browser gets a fresh device cookie. */
    succeeded: async (id: string) => {
      await Promise.all([clearRateLimit(sql, paceKey), rememberAddress(sql, id, clientAddress), unhitAll()]);
      return deviceCookie(request, config.appSecret, id);
    },
    /** A right answer that does not finish the sign-in: this attempt is not counted. */
    takeBack: async () => {
      await Promise.all([unhit(sql, paceKey, paced.windowStart), unhitAll()]);
    },
  };
}

const secondsLeft = (windowStart: Date, windowSeconds: number) =>
  Math.max(1, Math.ceil((windowStart.getTime() + windowSeconds * 1000 - Date.now()) / 1000));
