/** Deterministic formatting (UTC, fixed locale) so server and browser render the same text. */
const pad = (n: number) => String(n).padStart(2, "0");

export function utc(d: Date | string | null | undefined, withSeconds = false): string {
  if (!d) return "—";
  const t = new Date(d);
  const s = `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())} ${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}`;
  return (withSeconds ? `${s}:${pad(t.getUTCSeconds())}` : s) + " UTC";
}

export function ago(d: Date | string | null | undefined, now: Date | string): string {
  if (!d) return "never";
  const s = Math.max(0, (new Date(now).getTime() - new Date(d).getTime()) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

export const num = (n: number | string) => Number(n).toLocaleString("en-US");

/** Compact axis numbers: 950, 1.2k, 3.4M. */
export function compact(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/**
 * A count with its noun, singular or plural: plural(1, "issue") is "1 issue", plural(1200, "issue")
 * "1,200 issues". Nouns whose plural is not noun + "s" pass it: plural(2, "reply", "replies").
 */
export function plural(n: number | string, noun: string, nouns = `${noun}s`): string {
  return `${num(n)} ${Number(n) === 1 ? noun : nouns}`;
}

/** A list's total as counted (exact up to 10,000 matches): "10,000+ issues" when more match. */
export function pluralTotal(n: number, exact: boolean, noun: string, nouns = `${noun}s`): string {
  return exact ? plural(n, noun, nouns) : `${num(n)}+ ${nouns}`;
}

/**
 * "all N things" that reads right for small N: allOf(1, "issue") is "the 1 issue", allOf(2, "issue")
 * "both issues", allOf(30, "issue") "all 30 issues".
 */
export function allOf(n: number | string, noun: string, nouns = `${noun}s`): string {
  const count = Number(n);
  if (count === 1) return `the 1 ${noun}`;
  if (count === 2) return `both ${nouns}`;
  return `all ${plural(count, noun, nouns)}`;
}

export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
