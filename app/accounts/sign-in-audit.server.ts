import type { Sql } from "../../db/client.js";
import { recordAudit } from "../../db/audit.js";
import { hit } from "../../db/rate-limits.js";
import { log } from "../../log/logger.js";

/**
 * Failed sign-ins and lockouts in the instance's audit log (docs/audit.md, "Sign-in failures").
 *
 * - Only attempts at an existing account are recorded: a row for an unknown email would name
 *   addresses nobody owns, and could be written without bound by anyone.
 * - Only attempts the sign-in limits let through are recorded (a wrong password, a wrong or reused
 *   second-factor code), so the limits bound the rows: per account and window, at most the email's
 *   ceiling from unknown browsers, plus each known address's and each signed-in browser's own limit.
 *   Attempts refused by a limit write no row of their own; the first refusal of an account in a
 *   window writes one `account.sign_in_locked` row (a rate-limit key of its own decides "first",
 *   in one statement, across instances), whatever number of attempts follow.
 * - The answer never waits for these rows: a known email and an unknown one answer alike, in what
 *   they say and in how long they take. A row that fails to be written is logged and lost, like a
 *   request line; the sign-in protection itself does not depend on it.
 */
export type FailedStep = "password" | "two_factor_code";
export type Limit = "browser" | "email_and_address" | "email" | "address";

type Account = { id: string; email: string };

export function auditFailedSignIn(sql: Sql, user: Account, step: FailedStep, address: string): void {
  background(recordAudit(sql, { projectId: null, actorId: null, action: "account.sign_in_failed", target: user.email, details: { step, address } }));
}

export function auditLockout(sql: Sql, user: Account, limit: Limit, address: string, retryAfterSeconds: number, windowSeconds: number): void {
  background(
    (async () => {
      const first = await hit(sql, `audit:sign-in-locked:${user.id}`, windowSeconds);
      if (first.count !== 1) return;
      await recordAudit(sql, {
        projectId: null,
        actorId: null,
        action: "account.sign_in_locked",
        target: user.email,
        details: { limit, address, retry_after_seconds: retryAfterSeconds },
      });
    })(),
  );
}

const background = (work: Promise<unknown>) => {
  work.catch((err) => log.warn({ err }, "a sign-in audit row could not be written"));
};
