/**
 * A project's currency map: which values of a player's saved profile are its currencies, where its
 * names and data code are, and what makes a value one of this game's profiles. Pure: no I/O.
 *
 * A path is a chain of steps from the (unwrapped) profile: `Data.Wallet.Coins`, `Characters.*.Cash`,
 * `Slots[*].Gems`, `Slots[1].Gems` (Luau arrays count from 1), `["Key with spaces"].Cash`. `*` and
 * `[*]` step into every value of a table or element of an array. Each currency sums every number its
 * paths reach; a place reached twice (by two overlapping paths) counts once.
 *
 * A value a currency path reaches that is not a finite number (a string, a table, NaN or an infinity
 * as the SDK or a data store spells them) is a skipped value with its reason: it adds nothing and the
 * rest of the profile is still read. A path that reaches nothing adds nothing and is not an error.
 */
import { z } from "zod";
import { invalidPayload } from "~/http.server";
import { assertStorableText, clipNesting, tooDeep } from "~/text.server";
import type { SkippedValue } from "../../db/economy.js";
import { addDec, asTable, characterName, cleanName, decString, numberToDec, numberToDecimal, unwrapProfile, ZERO, type Dec } from "./profile.server";

// ---- the map as stored and sent -------------------------------------------------------------------

export type Currency = { key: string; name: string; paths: string[] };
export type CurrencyMap = {
  currencies: Currency[];
  /** paths to display names: a string is a name; a table is named by its Name, DisplayName, ... */
  names: string[];
  /** path to the profile's data code (the first finite number it reaches), or null */
  data_code: string | null;
  /** the value is one of this game's profiles when one of these paths reaches a table; empty: when any currency or name path reaches anything */
  match: string[];
};

/** The RP game's layout, which every project starts with: its keys keep their names in every answer. */
export const SEED_MAP: CurrencyMap = {
  currencies: [
    { key: "cash", name: "Cash", paths: ["RPCharacterOne.Cash", "RPCharacterTwo.Cash"] },
    { key: "bank", name: "Bank", paths: ["RPCharacterOne.InATM", "RPCharacterTwo.InATM"] },
    { key: "dark_coin", name: "Dark coin", paths: ["RPCharacterOne.DarkCoin", "RPCharacterTwo.DarkCoin"] },
  ],
  names: ["RPCharacterOne", "RPCharacterTwo"],
  data_code: "DataCode",
  match: ["RPCharacterOne", "RPCharacterTwo"],
};

/** The three fields every economy answer carries, whatever the map (0 where the map has no such key). */
export const SEED_KEYS = ["cash", "bank", "dark_coin"] as const;
/** The sum of every currency: a read parameter, never a currency's key. */
export const TOTAL = "total";

export const LIMITS = { currencies: 20, pathsPerCurrency: 20, namePaths: 10, matchPaths: 10, pathLength: 200, steps: 16, skippedValues: 20, names: 20 };

// ---- paths ---------------------------------------------------------------------------------------

export type Step = { kind: "key"; key: string } | { kind: "index"; index: number } | { kind: "all" };
export type Path = { text: string; steps: Step[] };

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses a path; throws an Error whose message says what is wrong, in words. */
export function parsePath(text: string): Path {
  const steps: Step[] = [];
  let i = 0;
  const n = text.length;
  if (n === 0) throw new Error("is empty");
  while (i < n) {
    const c = text[i];
    if (c === "[") {
      const close = text[i + 1] === '"' ? text.indexOf('"]', i + 2) : text.indexOf("]", i);
      if (close < 0) throw new Error(`has an unclosed [ at character ${i + 1}`);
      const inner = text[i + 1] === '"' ? text.slice(i + 1, close + 1) : text.slice(i + 1, close);
      if (inner === "*") steps.push({ kind: "all" });
      else if (/^[1-9]\d{0,8}$/.test(inner)) steps.push({ kind: "index", index: Number(inner) });
      else if (inner.startsWith('"')) {
        let key: unknown;
        try {
          key = JSON.parse(inner);
        } catch {
          key = undefined;
        }
        if (typeof key !== "string" || key === "") throw new Error(`has a bad quoted key ${inner}`);
        steps.push({ kind: "key", key });
      } else throw new Error(`has [${inner}]: use [*], an index from 1, or a quoted key like ["My Key"]`);
      i = text[i + 1] === '"' ? close + 2 : close + 1;
    } else {
      if (c === ".") {
        if (steps.length === 0 || i + 1 >= n || text[i + 1] === "." || text[i + 1] === "[") throw new Error(`has a misplaced . at character ${i + 1}`);
        i++;
      } else if (steps.length > 0) throw new Error(`needs a . before character ${i + 1}`);
      let j = i;
      while (j < n && text[j] !== "." && text[j] !== "[") j++;
      const word = text.slice(i, j);
      if (word === "*") steps.push({ kind: "all" });
      else if (IDENT.test(word)) steps.push({ kind: "key", key: word });
      else throw new Error(`has the key “${word}”: quote keys with other characters, like ["${word}"]`);
      i = j;
    }
  }
  if (steps.length > LIMITS.steps) throw new Error(`has more than ${LIMITS.steps} steps`);
  return { text, steps };
}

const stepText = (s: Step) => (s.kind === "all" ? "[*]" : s.kind === "index" ? `[${s.index}]` : IDENT.test(s.key) ? `.${s.key}` : `[${JSON.stringify(s.key)}]`);

/** The place one value was found, as a path without wildcards: `Slots[2].Gems`. */
function placeText(parent: string, step: { key: string } | { index: number }): string {
  if ("index" in step) return `${parent}[${step.index}]`;
  if (IDENT.test(step.key)) return parent === "" ? step.key : `${parent}.${step.key}`;
  return `${parent}[${JSON.stringify(step.key)}]`;
}

/** A path in its canonical spelling (what the API returns). */
export function pathText(p: Path): string {
  const s = p.steps.map(stepText).join("");
  return s.startsWith(".") ? s.slice(1) : s;
}

type Found = { place: string; value: unknown };

/** Every value a path reaches, with where it was found. JSON null counts as absent (Luau nil). */
function walk(root: unknown, steps: Step[], out: Found[]): void {
  const visit = (value: unknown, place: string, at: number) => {
    if (value === null || value === undefined) return;
    if (at === steps.length) {
      out.push({ place, value });
      return;
    }
    if (typeof value !== "object") return;
    const step = steps[at];
    if (Array.isArray(value)) {
      if (step.kind === "all") value.forEach((v, i) => visit(v, placeText(place, { index: i + 1 }), at + 1));
      else if (step.kind === "index") visit(value[step.index - 1], placeText(place, step), at + 1);
      else if (/^[1-9]\d*$/.test(step.key)) visit(value[Number(step.key) - 1], placeText(place, { index: Number(step.key) }), at + 1);
      return;
    }
    const table = value as Record<string, unknown>;
    if (step.kind === "all") {
      for (const k of Object.keys(table)) visit(table[k], placeText(place, { key: k }), at + 1);
    } else {
      const key = step.kind === "index" ? String(step.index) : step.key;
      if (Object.prototype.hasOwnProperty.call(table, key)) visit(table[key], placeText(place, { key }), at + 1);
    }
  };
  visit(root, "", 0);
}

// ---- validation ----------------------------------------------------------------------------------

const pathString = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(LIMITS.pathLength, `must be at most ${LIMITS.pathLength} characters`)
  .superRefine((s, ctx) => {
    try {
      parsePath(s);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `is not a path: it ${(err as Error).message}` });
    }
  });

export const currencyMapSchema = z
  .object({
    currencies: z
      .array(
        z.object({
          key: z
            .string()
            .trim()
            .regex(/^[a-z][a-z0-9_]{0,31}$/, "must be 1 to 32 lowercase letters, digits or _, starting with a letter")
            .refine((k) => k !== TOTAL, `must not be “${TOTAL}”: that name is the sum of every currency`),
          name: z.string().trim().min(1, "must not be empty").max(40, "must be at most 40 characters"),
          paths: z.array(pathString).min(1, "must list at least one path").max(LIMITS.pathsPerCurrency, `must list at most ${LIMITS.pathsPerCurrency} paths`),
        }),
      )
      .min(1, "must list at least one currency")
      .max(LIMITS.currencies, `must list at most ${LIMITS.currencies} currencies`)
      .superRefine((list, ctx) => {
        const seen = new Set<string>();
        list.forEach((c, i) => {
          if (seen.has(c.key)) ctx.addIssue({ code: "custom", path: [i, "key"], message: `repeats the key “${c.key}”` });
          seen.add(c.key);
        });
      }),
    names: z.array(pathString).max(LIMITS.namePaths, `must list at most ${LIMITS.namePaths} paths`).default([]),
    data_code: pathString.nullable().default(null),
    match: z.array(pathString).max(LIMITS.matchPaths, `must list at most ${LIMITS.matchPaths} paths`).default([]),
  })
  .strict();

/**
 * A map from a request body, in canonical form; a 400 naming every bad field otherwise (text
 * PostgreSQL cannot store and nesting past MAX_BODY_DEPTH included, as for every request body).
 */
export function parseCurrencyMap(body: unknown): CurrencyMap {
  const { value, cut } = clipNesting(body);
  const r = currencyMapSchema.safeParse(value);
  if (!r.success) {
    const details = r.error.issues.slice(0, 50).map((i) => ({ path: i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("").replace(/^\./, ""), message: i.message }));
    throw invalidPayload(`The currency map is not valid: ${details[0].path || "body"} ${details[0].message}.`, details);
  }
  if (cut) throw tooDeep(cut, "The currency map");
  assertStorableText(r.data, "The currency map");
  const m = r.data;
  const canon = (s: string) => pathText(parsePath(s));
  return {
    currencies: m.currencies.map((c) => ({ key: c.key, name: c.name, paths: c.paths.map(canon) })),
    names: m.names.map(canon),
    data_code: m.data_code === null ? null : canon(m.data_code),
    match: m.match.map(canon),
  };
}

// ---- reading a profile ---------------------------------------------------------------------------

export type CompiledMap = {
  map: CurrencyMap;
  currencies: { key: string; name: string; paths: Path[] }[];
  names: Path[];
  dataCode: Path | null;
  match: Path[];
};

const compiled = new Map<string, CompiledMap>();

/** Parses a (valid) map's paths once; maps are cached by their JSON text. */
export function compileMap(map: CurrencyMap): CompiledMap {
  const id = JSON.stringify(map);
  let c = compiled.get(id);
  if (!c) {
    c = {
      map,
      currencies: map.currencies.map((x) => ({ key: x.key, name: x.name, paths: x.paths.map(parsePath) })),
      names: map.names.map(parsePath),
      dataCode: map.data_code === null ? null : parsePath(map.data_code),
      match: map.match.map(parsePath),
    };
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(id, c);
  }
  return c;
}

export type { SkippedValue };

export type ReadProfile = {
  /** every currency of the map, as an exact decimal string (0 when no path reached a number) */
  balances: Record<string, string>;
  /** the sum of every currency */
  total: string;
  display_names: string[];
  data_code: string | null;
  /** values a currency path reached that are not finite numbers (at most LIMITS.skippedValues) */
  skipped_values: SkippedValue[];
  /** how many values were skipped in all (may exceed the list) */
  skipped_count: number;
};

export type Match = { currency: string; path: string; value: string };
export type ProfileReading = { ok: true; profile: ReadProfile; matches: Match[] } | { ok: false; reason: string };

const NAN_WORDS = new Set(["nan", "-nan", "+nan"]);
const INF_WORDS = new Set(["inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"]);

/** Why a reached value is not an amount, or null when it is a finite number. */
function notANumber(v: unknown): string | null {
  if (typeof v === "number") return Number.isNaN(v) ? "is NaN" : Number.isFinite(v) ? null : "is infinite (or past what a double holds)";
  if (typeof v === "string") {
    const w = v.trim().toLowerCase();
    if (NAN_WORDS.has(w)) return "is NaN";
    if (INF_WORDS.has(w)) return "is infinite";
    return "is a string, not a number";
  }
  if (typeof v === "boolean") return "is a boolean, not a number";
  return "is a table, not a number";
}

function listWords(paths: string[]): string {
  const shown = paths.slice(0, 3);
  if (paths.length === 1) return `no table at ${shown[0]}`;
  if (paths.length === 2) return `neither ${shown[0]} nor ${shown[1]}`;
  return `none of ${shown.join(", ")}${paths.length > 3 ? ", …" : ""}`;
}

/**
 * Reads one profile (ProfileService/ProfileStore wrappers unwrapped first) through a map. A value
 * that is not a table, or does not match the map, is not read: `{ok: false, reason}`. With
 * `withMatches`, every number each currency summed is listed too (the preview shows them).
 */
export function readProfile(map: CompiledMap, value: unknown, withMatches = false): ProfileReading {
  const profile = unwrapProfile(value);
  if (asTable(profile) === null) {
    return { ok: false, reason: "profile must be a table (a JSON object)" };
  }
  const found: Found[] = [];
  if (map.match.length > 0) {
    const hit = map.match.some((p) => {
      found.length = 0;
      walk(profile, p.steps, found);
      return found.some((f) => asTable(f.value) !== null);
    });
    if (!hit) return { ok: false, reason: `profile has ${listWords(map.match.map((p) => p.text))}` };
  }
  let any = map.match.length > 0;
  const balances: Record<string, string> = {};
  const skipped: SkippedValue[] = [];
  let skippedCount = 0;
  const matches: Match[] = [];
  let total = ZERO;
  for (const c of map.currencies) {
    let sum: Dec = ZERO;
    const places = c.paths.length > 1 ? new Set<string>() : null;
    for (const p of c.paths) {
      found.length = 0;
      walk(profile, p.steps, found);
      for (const f of found) {
        if (places) {
          if (places.has(f.place)) continue;
          places.add(f.place);
        }
        any = true;
        const why = notANumber(f.value);
        if (why) {
          skippedCount++;
          if (skipped.length < LIMITS.skippedValues) skipped.push({ currency: c.key, path: f.place, reason: why });
          continue;
        }
        const d = numberToDec(f.value as number);
        sum = addDec(sum, d);
        if (withMatches) matches.push({ currency: c.key, path: f.place, value: decString(d) });
      }
    }
    balances[c.key] = decString(sum);
    total = addDec(total, sum);
  }
  const names: string[] = [];
  for (const p of map.names) {
    found.length = 0;
    walk(profile, p.steps, found);
    for (const f of found) {
      any = true;
      const v = f.value;
      const table = asTable(v);
      const name = typeof v === "string" ? cleanName(v) : table ? characterName(table) : null;
      if (name && names.length < LIMITS.names) names.push(name);
    }
  }
  if (!any) return { ok: false, reason: "no path of the currency map is in the profile" };
  let dataCode: string | null = null;
  if (map.dataCode) {
    found.length = 0;
    walk(profile, map.dataCode.steps, found);
    dataCode = found.map((f) => numberToDecimal(f.value)).find((d) => d !== null) ?? null;
  }
  return {
    ok: true,
    profile: { balances, total: decString(total), display_names: names, data_code: dataCode, skipped_values: skipped, skipped_count: skippedCount },
    matches,
  };
}

/** The three seed fields of a reading: the map's currencies of those keys, else 0. */
export function seedFields(balances: Record<string, string>): { cash: string; bank: string; dark_coin: string } {
  return { cash: balances.cash ?? "0", bank: balances.bank ?? "0", dark_coin: balances.dark_coin ?? "0" };
}

export const SEED = compileMap(SEED_MAP);
