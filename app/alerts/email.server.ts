import { createTransport } from "nodemailer";
import type { EmailMessage } from "./email-payloads.server";
import type { SendResult } from "./send.server";

/**
 * Sends one alert email through the operator's SMTP server (SMTP_URL) with nodemailer, shaped like
 * the webhook sender: a bounded number of attempts, each with fixed timeouts, and a result the
 * delivery log records (`status` is the SMTP reply code, when there was one).
 * - a 4xx reply is temporary (greylisting, a full mailbox queue, a rate limit): retried after a
 *   short backoff, as are connection failures and timeouts;
 * - a 5xx reply is permanent (an unknown recipient, a refused login, a policy rejection): not retried;
 * - a recipient refused while others were accepted does not fail the delivery; the error column
 *   names the refused addresses.
 */
export type EmailOptions = { smtpUrl: string; from: string; maxAttempts?: number; timeoutMs?: number };

const MAX_ATTEMPTS = 3;
const TIMEOUT_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type SmtpError = Error & { code?: string; responseCode?: number; response?: string; rejected?: string[] };

/** The reply code at the start of an SMTP response line ("250 2.0.0 OK: queued"). */
const replyCode = (response: string | undefined) => {
  const m = /^(\d{3})\b/.exec(response ?? "");
  return m ? Number(m[1]) : null;
};

/** What the log says about a failure: the SMTP reply when there was one, never the server's credentials. */
function describe(err: SmtpError): string {
  const reply = err.response?.trim().replace(/\s+/g, " ").slice(0, 300);
  if (err.code === "EAUTH") return `SMTP login refused${reply ? `: ${reply}` : `: ${err.message}`}`;
  if (reply) return `SMTP ${reply}`;
  return `SMTP ${err.code ?? "error"}: ${err.message}`.slice(0, 300);
}

export async function sendEmail(to: string[], msg: EmailMessage, opts: EmailOptions): Promise<SendResult> {
  const maxAttempts = opts.maxAttempts ?? MAX_ATTEMPTS;
  const timeout = opts.timeoutMs ?? TIMEOUT_MS;
  const transport = createTransport({
    url: opts.smtpUrl,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    logger: false,
    debug: false,
  });
  let last: SmtpError | undefined;
  try {
    for (let n = 1; n <= maxAttempts; n++) {
      try {
        const info = await transport.sendMail({ from: opts.from, to, subject: msg.subject, text: msg.text, html: msg.html });
        const refused = (info.rejected ?? []).map(String);
        return {
          ok: true,
          status: replyCode(info.response),
          error: refused.length ? `not accepted for ${refused.join(", ")}` : null,
          attempts: n,
        };
      } catch (err) {
        last = err as SmtpError;
        const code = last.responseCode ?? null;
        const permanent = code !== null && code >= 500;
        if (permanent || n === maxAttempts) return { ok: false, status: code, error: describe(last), attempts: n };
        await sleep(500 * n);
      }
    }
  } finally {
    transport.close();
  }
  return { ok: false, status: last?.responseCode ?? null, error: last ? describe(last) : "not sent", attempts: maxAttempts };
}
