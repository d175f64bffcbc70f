import { createHash, randomBytes } from "node:crypto";
import { redirect } from "@remix-run/node";
import { deleteExpiredSessions, deleteSession, findSessionUser, insertSession } from "../../db/sessions.js";
import type { User } from "../../db/users.js";
import type { Sql } from "../../db/client.js";
import type { Config } from "~/env.server";
import { forbidden, unauthorized } from "~/http.server";
import { assertSameOrigin, isMutation } from "./csrf.server";

/**
 * Server-side sessions: the cookie holds 256 random bits; the database holds their SHA-256, the
 * user and the expiry. Signing out deletes the row, so a copied cookie dies with it.
 */
export const SESSION_COOKIE = "rm_session";

const hashToken = (token: string) => createHash("sha256").update(token).digest();

/** The value of the request's first cookie with this name. */
export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionToken(request: Request): string | undefined {
  const v = readCookie(request, SESSION_COOKIE);
  return v !== undefined && /^[A-Za-z0-9_-]{20,100}$/.test(v) ? v : undefined;
}

/** Secure when the browser talks https to us, directly or through a trusted proxy that says so (TRUST_PROXY). */
export const isHttps = (request: Request): boolean => new URL(request.url).protocol === "https:";

function cookie(request: Request, value: string, maxAgeSeconds: number): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${maxAgeSeconds}`,
    ...(isHttps(request) ? ["Secure"] : []),
  ].join("; ");
}

/** Creates a session for the user; returns the Set-Cookie header value. */
export async function startSession(deps: { sql: Sql; config: Pick<Config, "sessionDays"> }, request: Request, userId: string): Promise<string> {
  const token = randomBytes(32).toString("base64url");
  const maxAge = deps.config.sessionDays * 86_400;
  await insertSession(deps.sql, hashToken(token), userId, new Date(Date.now() + maxAge * 1000));
  // expired rows are only dead weight; sweep now and then rather than on a schedule
  if (Math.random() < 0.05) deleteExpiredSessions(deps.sql).catch(() => {});
  return cookie(request, token, maxAge);
}

/** Ends the request's session (if any); returns the Set-Cookie header that clears the cookie. */
export async function endSession(deps: { sql: Sql }, request: Request): Promise<string> {
  const token = sessionToken(request);
  if (token) await deleteSession(deps.sql, hashToken(token));
  return cookie(request, "", 0);
}

/**
 * A page's loaders (the frame's, the project's and the page's own) run side by side on one request
 * and each checks its session: a read (GET, HEAD) looks it up once for all of them.
 */
const sessionsOfReads = new WeakMap<Request, Promise<User | undefined>>();

export async function currentUser(deps: { sql: Sql }, request: Request): Promise<User | undefined> {
  const token = sessionToken(request);
  if (!token) return undefined;
  if (request.method !== "GET" && request.method !== "HEAD") return findSessionUser(deps.sql, hashToken(token));
  let found = sessionsOfReads.get(request);
  if (!found) sessionsOfReads.set(request, (found = findSessionUser(deps.sql, hashToken(token))));
  return found;
}

export const currentTokenHash = (request: Request) => {
  const token = sessionToken(request);
  return token ? hashToken(token) : null;
};

/**
 * Team API: the signed-in user, or 401. A user still on a temporary password gets 403 everywhere
 * but the few endpoints that let them change it (`beforePasswordChange`).
 */
export async function requireApiUser(deps: { sql: Sql }, request: Request, opts: { beforePasswordChange?: boolean } = {}): Promise<User> {
  const user = await currentUser(deps, request);
  if (!user) throw unauthorized("Sign in first: this endpoint needs a session cookie from POST /api/auth/login.");
  if (user.must_change_password && !opts.beforePasswordChange) {
    throw forbidden("Change your temporary password first: POST /api/auth/password {current_password, new_password}.");
  }
  return user;
}

/** Where a user on a temporary password is sent: the page with the change-password form. */
export const PASSWORD_CHANGE_PAGE = "/account";

/**
 * Dashboard pages: the signed-in user, or a redirect to the sign-in page that comes back here.
 * Form posts (any non-GET) must also come from our own origin. A user on a temporary password is
 * sent to the Account page until they have chosen their own (pages that allow it say so).
 */
export async function requirePageUser(deps: { sql: Sql; config: Pick<Config, "publicUrl"> }, request: Request, opts: { beforePasswordChange?: boolean } = {}): Promise<User> {
  const user = await currentUser(deps, request);
  if (!user) {
    const url = new URL(request.url);
    const next = isMutation(request) ? "/" : url.pathname + url.search;
    throw redirect(`/login?next=${encodeURIComponent(next)}`);
  }
  if (isMutation(request)) assertSameOrigin(request, deps.config.publicUrl);
  if (user.must_change_password && !opts.beforePasswordChange) throw redirect(PASSWORD_CHANGE_PAGE);
  return user;
}
