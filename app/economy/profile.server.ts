/**
 * Profile helpers shared by the push endpoint, the Open Cloud scan and the currency map
 * (currency-map.server.ts reads a profile through a project's map). Pure: no I/O, no clock.
 *
 * ProfileService / ProfileStore save `{Data, MetaData, ...}`, so a value with both tables is
 * unwrapped to its Data first.
 *
 * Amounts are exact decimal strings: Luau numbers are doubles, and summing two large doubles in
 * JavaScript would silently round, so each value is taken at its shortest round-trip decimal form
 * and added exactly.
 */

import { cutText } from "~/text.server";

const NAME_KEYS = ["Name", "DisplayName", "CharacterName", "FullName"] as const;
const MAX_NAME = 200;
const MAX_INT64 = 9223372036854775807n;

type Table = Record<string, unknown>;

/** A Luau table as JSON: an object, or `[]` (how an empty table is encoded); a non-empty array is a list, not a table. */
export function asTable(v: unknown): Table | null {
  if (typeof v !== "object" || v === null) return null;
  if (Array.isArray(v)) return v.length === 0 ? {} : null;
  return v as Table;
}

/** ProfileService/ProfileStore values are `{Data, MetaData, ...}`: the profile is Data. */
export function unwrapProfile(value: unknown): unknown {
  const t = asTable(value);
  if (t && asTable(t.Data) && asTable(t.MetaData)) return t.Data;
  return value;
}

// ---- exact decimals ------------------------------------------------------------------------------

export type Dec = { m: bigint; e: number }; // value = m * 10^e

/**
 * A decimal string, plain (a numeric's text, "123.5") or as JavaScript spells a number ("1e+21",
 * "5e-324"), exactly.
 */
export function stringToDec(s: string): Dec {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  if (!match) throw new Error(`not a decimal: ${s}`);
  const [, sign, int, frac = "", exp = "0"] = match;
  return { m: BigInt(sign + int + frac), e: Number(exp) - frac.length };
}

/** A finite double at its shortest round-trip decimal form, exactly. */
export const numberToDec = (n: number): Dec => stringToDec(String(n));

export function addDec(a: Dec, b: Dec): Dec {
  const e = Math.min(a.e, b.e);
  return { m: a.m * 10n ** BigInt(a.e - e) + b.m * 10n ** BigInt(b.e - e), e };
}

export const subDec = (a: Dec, b: Dec): Dec => addDec(a, { m: -b.m, e: b.e });

export const mulDec = (a: Dec, b: Dec): Dec => ({ m: a.m * b.m, e: a.e + b.e });

/** Negative, zero or positive as `a` is below, equal to or above `b`. */
export const compareDec = (a: Dec, b: Dec): number => {
  const d = subDec(a, b).m;
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};

export function decString({ m, e }: Dec): string {
  if (m === 0n) return "0";
  if (e >= 0) return (m * 10n ** BigInt(e)).toString();
  const neg = m < 0n;
  const digits = (neg ? -m : m).toString().padStart(-e + 1, "0");
  const int = digits.slice(0, digits.length + e);
  const frac = digits.slice(digits.length + e).replace(/0+$/, "");
  return `${neg ? "-" : ""}${int}${frac ? `.${frac}` : ""}`;
}

export const ZERO: Dec = { m: 0n, e: 0 };
const isNumber = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Exact sum of decimal strings (used for totals). */
export function addDecimals(...values: string[]): string {
  return decString(values.map(parseDecimal).reduce(addDec, ZERO));
}

function parseDecimal(s: string): Dec {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(s);
  if (!match) throw new Error(`not a decimal: ${s}`);
  const [, sign, int, frac = ""] = match;
  return { m: BigInt(sign + int + frac), e: -frac.length };
}

/** A finite number as an exact decimal string; anything else is null. */
export function numberToDecimal(v: unknown): string | null {
  return isNumber(v) ? decString(numberToDec(v)) : null;
}

// ---- names -------------------------------------------------------------------------------------

/** A name as given: a non-empty string, trimmed and cut to MAX_NAME characters; else null. */
export function cleanName(v: unknown): string | null {
  if (typeof v !== "string") return null;
  const s = v.trim();
  return s === "" ? null : cutText(s, MAX_NAME);
}

/** A character's name: Name, DisplayName, CharacterName or FullName, else FirstName + LastName. */
export function characterName(ch: Table): string | null {
  for (const k of NAME_KEYS) {
    const s = cleanName(ch[k]);
    if (s) return s;
  }
  const parts = [cleanName(ch.FirstName), cleanName(ch.LastName)].filter((p): p is string => p !== null);
  return parts.length ? cutText(parts.join(" "), MAX_NAME) : null;
}

// ---- user ids ----------------------------------------------------------------------------------

/** A positive int64 from a JSON number or a string of digits, as a canonical string; else null. */
export function parseUserId(v: unknown): string | null {
  let s: string;
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v)) return null;
    s = String(v);
  } else if (typeof v === "string") {
    s = v.trim();
  } else return null;
  if (!/^\d{1,19}$/.test(s)) return null;
  const n = BigInt(s);
  return n > 0n && n <= MAX_INT64 ? n.toString() : null;
}

/**
 * The user id a data-store key names: `123`, `Player_123`, or any key ending in digits.
 * ProfileService's probe key `____PS` and keys without trailing digits name no player.
 */
export function userIdFromKey(key: string): string | null {
  if (key === "____PS") return null;
  const m = /(\d+)$/.exec(key);
  return m ? parseUserId(m[1]) : null;
}
