import { Authenticator } from "remix-auth";
import { Strategy } from "remix-auth/strategy";
import { FormStrategy } from "remix-auth-form";
import { z } from "zod";
import { hit, pruneRateLimits, unhit } from "../../db/rate-limits.js";
import { findUserByEmail, type User } from "../../db/users.js";
import type { Services } from "~/services.server";
import { ApiError, readJson, unauthorized } from "~/http.server";
import { dummyHash, verifyPassword } from "./passwords.server";
import { parseOr400 } from "./users.server";

const Credentials = z.object({
  email: z.string({ error: "is required" }).trim().toLowerCase().min(1, "is required").max(320),
  password: z.string({ error: "is required" }).min(1, "is required").max(1024),
});

/** The Team API's strategy: credentials in a JSON body (415/413/400 as everywhere else). */
class JsonStrategy<U> extends Strategy<U, { body: unknown; request: Request }> {
  name = "json";
  constructor(
    private readonly maxBytes: number,
    verify: Strategy.VerifyFunction<U, { body: unknown; request: Request }>,
  ) {
    super(verify);
  }
  async authenticate(request: Request): Promise<U> {
    return this.verify({ body: await readJson(request, this.maxBytes), request });
  }
}

/**
 * remix-auth with two strategies over the same check: "form" for the sign-in page, "json" for
 * POST /api/auth/login. Built per request because the check needs the client's address.
 */
export function authenticator(services: Services, clientAddress: string): Authenticator<User> {
  const check = (input: unknown) => checkCredentials(services, clientAddress, input);
  return new Authenticator<User>()
    .use(new FormStrategy<User>(({ form }) => check({ email: form.get("email") ?? undefined, password: form.get("password") ?? undefined })))
    .use(new JsonStrategy<User>(services.config.maxBodyBytes, ({ body }) => check(body)));
}

/**
 * Email + password, with failed attempts counted per email and per client address in PostgreSQL
 * (shared by every instance). Every attempt is counted before the password is checked, so a burst
 * of parallel guesses cannot slip past the limit; a correct one takes its count back. Once an email
 * has LOGIN_MAX_FAILURES failures in the window (or an address three times that), attempts answer
 * 429 until the window ends, even with the right password.
 */
async function checkCredentials(services: Services, clientAddress: string, input: unknown): Promise<User> {
  const { email, password } = parseOr400(Credentials, input);
  const { sql, config } = services;
  const limits = [
    { key: `login:email:${email}`, max: config.loginMaxFailures },
    { key: `login:addr:${clientAddress}`, max: config.loginMaxFailures * 3 },
  ];
  const hits = await Promise.all(limits.map((l) => hit(sql, l.key, config.loginWindowSeconds)));
  if (Math.random() < 0.01) pruneRateLimits(sql, Math.max(86_400, config.loginWindowSeconds)).catch(() => {});
  const blocked = hits.filter((h, i) => h.count > limits[i].max);
  if (blocked.length > 0) {
    const retryAfter = Math.max(...blocked.map((h) => h.retryAfterSeconds));
    throw new ApiError(429, "rate_limited", `Too many failed sign-ins; try again in ${retryAfter} seconds.`, undefined, {
      "Retry-After": String(retryAfter),
    });
  }
  const user = await findUserByEmail(sql, email);
  const ok = await verifyPassword(password, user?.password_hash ?? (await dummyHash()));
  if (!user || !ok) throw unauthorized("The email or password is wrong.");
  await Promise.all(hits.map((h, i) => unhit(sql, limits[i].key, h.windowStart)));
  return { id: user.id, email: user.email, created_at: user.created_at };
}
