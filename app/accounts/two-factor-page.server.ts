import { isHttps, readCookie } from "./sessions.server";
import { CHALLENGE_SECONDS } from "./two-factor.server";

/**
 * The sign-in page's second step keeps the challenge (proof that the password was right, signed,
 * good for 5 minutes) in an HttpOnly cookie scoped to /login, so it never shows in a URL or a form
 * that scripts could read.
 */
export const CHALLENGE_COOKIE = "rm_2fa";

export const twoFactorPage = (next: string) => `/login/two-factor${next !== "/projects" ? `?next=${encodeURIComponent(next)}` : ""}`;

export function challengeCookie(request: Request, challenge: string, maxAge = CHALLENGE_SECONDS): string {
  return [`${CHALLENGE_COOKIE}=${challenge}`, "Path=/login", "HttpOnly", "SameSite=Lax", `Max-Age=${maxAge}`, ...(isHttps(request) ? ["Secure"] : [])].join("; ");
}

export const readChallenge = (request: Request) => readCookie(request, CHALLENGE_COOKIE);
