/**
 * What a log line may not carry, removed from the whole serialized line just before it is written, so
 * that no call site (an error message from a library, a PostgreSQL error's text, a URL) can let one
 * through: share tokens (`/share/<token>`, `shr_…`), API keys (`rbx_…`), DSN keys in a query string or
 * an `X-Sentry-Auth` value (`sentry_key=…`, `sentry_secret=…`), the password or user of a URL
 * (`postgres://user:pass@host`), email addresses, the values PostgreSQL quotes from a row
 * (`Key (user_id)=(…)`, `Failing row contains (…)`) and the value of a `password`, `token`, `secret`,
 * `cookie` or `authorization` field written as `name=value` or `"name":"value"`.
 *
 * Every replacement keeps the line valid JSON: the patterns stop at a quote, a backslash or white
 * space, and what they put in holds none of those.
 */

/** Share tokens are credentials: a logged URL keeps its shape but not the token. */
export const redactUrl = (url: string) =>
  url.replace(/(\/share\/)[^/?#\s"\\]+/gi, "$1[redacted]").replace(/shr_[A-Za-z0-9_-]+/g, "shr_[redacted]");

/** [a substring every match holds (lowercase; the rule is skipped without it), pattern, replacement] */
const RULES: [string, RegExp, string][] = [
  // API keys: 192 random bits behind the rbx_ prefix (a stored 10-character prefix is no secret)
  ["rbx_", /rbx_[A-Za-z0-9_-]{12,}/g, "rbx_[redacted]"],
  // DSN keys in a query string, an X-Sentry-Auth header or a DSN's own parameters
  ["sentry_", /\b(sentry_(?:key|secret))=[^&,\s"\\]+/gi, "$1=[redacted]"],
  // the user and password of a URL (a DSN, a database or SMTP URL)
  ["@", /\b([a-z][a-z0-9+.-]*:\/\/)[^/@\s"\\]+@/gi, "$1[redacted]@"],
  // email addresses
  ["@", /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g, "[email]"],
  // row values PostgreSQL quotes in an error's text or detail
  ["key (", /\b(Key \([^)"\\]*\))=\([^)"\\]*\)/g, "$1=([redacted])"],
  ["failing row", /\b(Failing row contains )\([^"\\]*?\)/g, "$1([redacted])"],
  // name=value and "name":"value" of fields that are secrets by name
  ["=", /\b((?:password|passwd|secret|token|cookie|authorization|api[_-]?key|x-api-key|client[_-]?secret)=)[^&;,\s"\\]+/gi, "$1[redacted]"],
  ['":"', /("(?:password|passwd|secret|token|cookie|set-cookie|authorization|api_?key|x-api-key|x-sentry-auth|client_?secret|recovery_codes)":)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"'],
];

/** A log line (or any text) without the secrets and personal data above. */
export function redactText(text: string): string {
  let out = text.includes("hr_") || /\/share\//i.test(text) ? redactUrl(text) : text;
  let lower: string | undefined;
  for (const [guard, re, to] of RULES) {
    lower ??= out.toLowerCase();
    if (!lower.includes(guard)) continue;
    const next = out.replace(re, to);
    if (next !== out) {
      out = next;
      lower = undefined;
    }
  }
  return out;
}
