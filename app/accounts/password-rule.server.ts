import { adjacencyGraphs } from "@zxcvbn-ts/language-common";
import { isCommonPassword } from "./common-passwords.server";

/**
 * The one rule for a password someone chooses (setup, the CLI, a change, an operator's reset), after
 * NIST SP 800-63B: a minimum length and no composition rules, but refuse what guessers try first:
 * common and breached passwords, repetitive or sequential characters, and context-specific words
 * (the product's name, the account's own email).
 */
export const PASSWORD_MIN_CHARACTERS = 8;
export const PASSWORD_MAX_LENGTH = 1024;

export const PASSWORD_REPETITIVE =
  "repeats or runs through one character sequence (like aaaaaaaa or abcdefgh); choose a longer, less predictable one";
export const PASSWORD_CONTEXTUAL =
  "is mostly the product's name or your own email address; choose one that is about neither";

/**
 * Why the password is refused, phrased to follow the field's name ("password must be at least 8
 * characters"), or undefined when it is fine. Length counts characters (code points), as NIST says.
 */
export function passwordProblem(password: string, account: { email?: string } = {}): string | undefined {
  if ([...password].length < PASSWORD_MIN_CHARACTERS) return `must be at least ${PASSWORD_MIN_CHARACTERS} characters`;
  if (password.length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  if (password.trim() === "") return "must not be only spaces";
  if (isCommonPassword(password)) return "is one of the most common passwords; choose another";
  const folded = password.normalize("NFKC").toLowerCase();
  if (isPredictable(folded.replace(/\s+/gu, ""))) return PASSWORD_REPETITIVE;
  if (leansOnContext(folded, account.email)) return PASSWORD_CONTEXTUAL;
  return undefined;
}

const KEYBOARD_ROWS = ["`1234567890-=", "qwertyuiop[]\\", "asdfghjkl;'", "zxcvbnm,./"];
const keyAt = new Map<string, { row: number; col: number }>();
KEYBOARD_ROWS.forEach((r, row) => [...r].forEach((ch, col) => keyAt.set(ch, { row, col })));
// a shifted character sits on its unshifted one's key (`!@#$%^&*` is the digit row with shift held):
// zxcvbn-ts's QWERTY graph spells each neighbouring key as its two characters, unshifted then shifted
for (const neighbours of Object.values(adjacencyGraphs.qwerty as Record<string, (string | null)[]>)) {
  for (const key of neighbours) {
    const at = key && key.length === 2 ? keyAt.get(key[0]) : undefined;
    if (at && !keyAt.has(key![1])) keyAt.set(key![1], at);
  }
}

const isLetter = (c: string) => c >= "a" && c <= "z";
const isDigit = (c: string) => c >= "0" && c <= "9";

/**
 * The ways one character can follow another inside a run: same, next or previous in a-z / 0-9 or
 * along a keyboard row, with or without shift (`)(*&^%$#` runs back along the digit row).
 */
const STEPS: ((a: string, b: string) => boolean)[] = [
  (a, b) => a === b,
  ...[1, -1].map((d) => (a: string, b: string) => (isLetter(a) ? isLetter(b) : isDigit(a) && isDigit(b)) && b.charCodeAt(0) - a.charCodeAt(0) === d),
  ...[1, -1].map((d) => (a: string, b: string) => {
    const ka = keyAt.get(a);
    const kb = keyAt.get(b);
    return ka !== undefined && kb !== undefined && ka.row === kb.row && kb.col - ka.col === d;
  }),
];

/**
 * Repetitive or sequential: the text repeats a unit of at most 4 characters (aaaaaaaa, abababab,
 * 123123123), or splits into at most two runs that each keep one step (abcdefgh, 87654321, qwertyui,
 * !@#$%^&*, aaaa1111, abcd1234, 78901234).
 */
export function isPredictable(text: string): boolean {
  const chars = [...text];
  const n = chars.length;
  if (n === 0) return true;
  for (let unit = 1; unit <= 4 && unit * 2 <= n; unit++) {
    if (chars.every((c, i) => i < unit || c === chars[i - unit])) return true;
  }
  // reach[i]: the furthest end of a run starting at i (any shorter piece of a run is a run too)
  const reach = new Array<number>(n).fill(0);
  for (const step of STEPS) {
    let end = n;
    for (let i = n - 1; i >= 0; i--) {
      if (i === n - 1 || !step(chars[i], chars[i + 1])) end = i + 1;
      reach[i] = Math.max(reach[i], end);
    }
  }
  // one run from the start to the end, or one to some point and a second from there to the end
  if (reach[0] === n) return true;
  for (let i = 1; i <= reach[0]; i++) if (reach[i] === n) return true;
  return false;
}

/** Words that say nothing an attacker would not try first: the product's name and the account's email. */
function contextWords(email: string | undefined): string[] {
  const words = ["robloxmonitor", "roblox", "monitor"];
  if (email) {
    const [local, domain = ""] = email.normalize("NFKC").toLowerCase().split("@");
    words.push(alnum(local), ...local.split(/[^\p{L}\p{N}]+/u), ...domain.split(".").slice(0, -1));
  }
  return [...new Set(words.filter((w) => [...w].length >= 3))].sort((a, b) => b.length - a.length);
}

const alnum = (s: string) => s.replace(/[^\p{L}\p{N}]+/gu, "");

/**
 * True when the password holds the whole email, or holds the product's name or a piece of the
 * email and what is left beside them is short (under 6 characters), common, or predictable.
 */
function leansOnContext(folded: string, email: string | undefined): boolean {
  if (email && folded.includes(email.normalize("NFKC").toLowerCase())) return true;
  const letters = alnum(folded);
  let rest = letters;
  for (const w of contextWords(email)) rest = rest.split(w).join("");
  if (rest === letters) return false;
  return [...rest].length < 6 || isCommonPassword(rest) || isPredictable(rest);
}
