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
import { assertStorableText, clipNesting, cutText, tooDeep } from "~/text.server";
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

/** A path in its canonical spelling (what the API returns). */
export function pathText(p: Path): string {
  const s = p.steps.map(stepText).join("");
  return s.startsWith(".") ? s.slice(1) : s;
}

// ---- walking a profile ---------------------------------------------------------------------------

/** Where a value was found: its key (a 1-based index in an array) under its parent's place. */
type Place = { up: Place | null; key: string | number };
/** A value a path reached; `container` and `key` identify its place without spelling it. */
type Found = { value: unknown; container: object; key: string | number; place: Place };
type Frame = { value: object; place: Place | null; at: number; keys: string[] | null; i: number };

/** Shared by every walk of one reading: places visited so far, and where the reading pauses. */
type Meter = { visited: number; pauseAt: number };
const PAUSED = Symbol("paused");

/** how much of a key and of a place the answers spell out (a key may be megabytes long) */
const KEY_SHOWN = 64;
const PLACE_SHOWN = 300;

/** The place one value was found, as a path without wildcards: `Slots[2].Gems`; long keys cut with “…”. */
function placeText(p: Place): string {
  const keys: (string | number)[] = [];
  for (let q: Place | null = p; q; q = q.up) keys.push(q.key);
  let s = "";
  for (let i = keys.length - 1; i >= 0 && s.length <= PLACE_SHOWN; i--) {
    const k = keys[i];
    if (typeof k === "number") s += `[${k}]`;
    else if (k.length > KEY_SHOWN) s += `[${JSON.stringify(`${cutText(k, KEY_SHOWN)}…`)}]`;
    else if (IDENT.test(k)) s += s === "" ? k : `.${k}`;
    else s += `[${JSON.stringify(k)}]`;
  }
  return s.length > PLACE_SHOWN ? `${cutText(s, PLACE_SHOWN)}…` : s;
}

/**
 * Every value a path reaches, one at a time, with where it was found; JSON null counts as absent
 * (Luau nil). Depth-first in key order, without recursion, and resumable: each step into a value is a
 * place visited on the meter, and `next` answers PAUSED instead of visiting one past its pause point.
 */
class Walk {
  private readonly stack: Frame[] = [];

  constructor(
    root: unknown,
    private readonly steps: Step[],
    private readonly meter: Meter,
    private readonly keysOf: (table: object) => string[],
  ) {
    if (typeof root === "object" && root !== null) this.stack.push({ value: root, place: null, at: 0, keys: null, i: 0 });
  }

  next(): Found | null | typeof PAUSED {
    const { stack, steps, meter } = this;
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const step = steps[top.at];
      const v = top.value;
      let key: string | number;
      let child: unknown;
      if (step.kind === "all") {
        if (Array.isArray(v)) {
          if (top.i >= v.length) {
            stack.pop();
            continue;
          }
          if (meter.visited >= meter.pauseAt) return PAUSED;
          key = top.i + 1;
          child = v[top.i++];
        } else {
          const keys = (top.keys ??= this.keysOf(v));
          if (top.i >= keys.length) {
            stack.pop();
            continue;
          }
          if (meter.visited >= meter.pauseAt) return PAUSED;
          key = keys[top.i++];
          child = (v as Record<string, unknown>)[key];
        }
      } else {
        // one child at most: the frame ends as it is taken
        if (meter.visited >= meter.pauseAt) return PAUSED;
        stack.pop();
        if (Array.isArray(v)) {
          const index = step.kind === "index" ? step.index : /^[1-9]\d*$/.test(step.key) ? Number(step.key) : 0;
          if (index === 0) continue;
          key = index;
          child = v[index - 1];
        } else {
          key = step.kind === "index" ? String(step.index) : step.key;
          if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
          child = (v as Record<string, unknown>)[key];
        }
      }
      meter.visited++;
      if (child === null || child === undefined) continue;
      const place: Place = { up: top.place, key };
      if (top.at + 1 === steps.length) return { value: child, container: v, key, place };
      if (typeof child === "object") stack.push({ value: child, place, at: top.at + 1, keys: null, i: 0 });
    }
    return null;
  }
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

/** What a reading lists of the numbers each currency summed (the preview shows them): at most so many per currency and in all. */
export type MatchLimits = { perCurrency: number; total: number };

export type ProfileReading =
  | {
      ok: true;
      profile: ReadProfile;
      /** the numbers summed, as far as the reading's MatchLimits list them (none without) */
      matches: Match[];
      /** how many numbers each currency summed (listed or not) */
      places: Record<string, number>;
      /** places the map's paths visited in the profile */
      visited: number;
      /** currencies whose amount is a sum so far: the reading stopped before it read all of them */
      partial: string[];
    }
  | { ok: false; reason: string };

/**
 * The places (each step of a path into a value) a push or a scan visits in one profile. A map of
 * wildcards over a huge profile would otherwise hold the process for seconds per player: past this,
 * the profile is not read and the player is skipped with the reason below.
 */
export const PLACES_PER_PROFILE = 100_000;

export const tooManyPlaces = (limit: number) =>
  `the currency map visits more than ${limit.toLocaleString("en-US")} places in this profile: narrow its wildcard paths`;

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
 * One profile (ProfileService/ProfileStore wrappers unwrapped first) read through a map, resumable:
 * `resume` reads until the meter's pause point or the end, so a caller can bound the places visited
 * (a push) or spread the reading over several turns of the event loop (the preview). A value that is
 * not a table, or does not match the map, is not read: `{ok: false, reason}`.
 *
 * What a reading answers is bounded whatever the profile: at most LIMITS.skippedValues skipped
 * values and LIMITS.names names, the numbers summed only as far as `matches` lists them, and every
 * place spelled in at most a few hundred characters. The sums are exact for every currency read
 * to its end; a reading stopped early says which are partial.
 */
export class ProfileReader {
  readonly meter: Meter = { visited: 0, pauseAt: Infinity };
  private readonly profile: unknown;
  private readonly steps: Generator<void, string | null, void>;
  private finished: { reason: string | null } | null = null;
  private matched = false;
  private any = false;
  private readonly sums: Dec[];
  /** whole amounts are added as doubles while the sum stays a safe integer (exact, and far cheaper than decimals) */
  private readonly wholeSums: number[];
  private readonly places: number[];
  /** currencies read to their end */
  private done = 0;
  private readonly skipped: SkippedValue[] = [];
  private skippedCount = 0;
  private readonly matches: Match[] = [];
  private readonly listed: number[];
  private readonly names: string[] = [];
  private dataCode: string | null = null;
  private readonly keys = new WeakMap<object, string[]>();

  constructor(
    private readonly map: CompiledMap,
    value: unknown,
    private readonly matchLimits: MatchLimits | null = null,
  ) {
    this.profile = unwrapProfile(value);
    this.sums = map.currencies.map(() => ZERO);
    this.wholeSums = map.currencies.map(() => 0);
    this.places = map.currencies.map(() => 0);
    this.listed = map.currencies.map(() => 0);
    this.steps = this.read();
  }

  /** Reads on until the meter's pause point; true when the whole map has been read. */
  resume(): boolean {
    if (this.finished) return true;
    const r = this.steps.next();
    if (!r.done) return false;
    this.finished = { reason: r.value };
    return true;
  }

  /** The reading: whole once `resume` answered true, else what was read so far (partial sums). */
  result(stoppedReason = "the reading stopped before it reached any path of the map"): ProfileReading {
    if (this.finished?.reason) return { ok: false, reason: this.finished.reason };
    if (!this.finished && !this.matched) return { ok: false, reason: stoppedReason };
    const { currencies } = this.map;
    const balances: Record<string, string> = {};
    const places: Record<string, number> = {};
    let total = ZERO;
    currencies.forEach((c, i) => {
      const sum = addDec(this.sums[i], numberToDec(this.wholeSums[i]));
      balances[c.key] = decString(sum);
      places[c.key] = this.places[i];
      total = addDec(total, sum);
    });
    return {
      ok: true,
      profile: {
        balances,
        total: decString(total),
        display_names: [...this.names],
        data_code: this.dataCode,
        skipped_values: [...this.skipped],
        skipped_count: this.skippedCount,
      },
      matches: [...this.matches],
      places,
      visited: this.meter.visited,
      partial: this.finished ? [] : currencies.slice(this.done).map((c) => c.key),
    };
  }

  private walk(steps: Step[]): Walk {
    return new Walk(this.profile, steps, this.meter, (t) => {
      let k = this.keys.get(t);
      if (!k) this.keys.set(t, (k = Object.keys(t)));
      return k;
    });
  }

  /** The reading's steps in order; yields whenever the meter pauses it; returns why the profile is not read, or null. */
  private *read(): Generator<void, string | null, void> {
    const { map } = this;
    if (asTable(this.profile) === null) return "profile must be a table (a JSON object)";
    if (map.match.length > 0) {
      let hit = false;
      for (const p of map.match) {
        const w = this.walk(p.steps);
        for (let f = w.next(); f !== null; f = w.next()) {
          if (f === PAUSED) {
            yield;
            continue;
          }
          if (asTable(f.value) !== null) {
            hit = true;
            break;
          }
        }
        if (hit) break;
      }
      if (!hit) return `profile has ${listWords(map.match.map((p) => p.text))}`;
      this.any = true;
    }
    this.matched = true;
    for (let i = 0; i < map.currencies.length; i++) {
      const c = map.currencies[i];
      // a place reached by two paths of one currency counts once: known by its table and key
      const seen = c.paths.length > 1 ? new Map<object, Set<string | number>>() : null;
      for (const p of c.paths) {
        const w = this.walk(p.steps);
        for (let f = w.next(); f !== null; f = w.next()) {
          if (f === PAUSED) {
            yield;
            continue;
          }
          if (seen) {
            let keys = seen.get(f.container);
            if (!keys) seen.set(f.container, (keys = new Set()));
            if (keys.has(f.key)) continue;
            keys.add(f.key);
          }
          this.any = true;
          const why = notANumber(f.value);
          if (why) {
            this.skippedCount++;
            if (this.skipped.length < LIMITS.skippedValues) this.skipped.push({ currency: c.key, path: placeText(f.place), reason: why });
            continue;
          }
          const n = f.value as number;
          const whole = this.wholeSums[i];
          if (Number.isSafeInteger(n) && Math.abs(whole) + Math.abs(n) <= Number.MAX_SAFE_INTEGER) this.wholeSums[i] = whole + n;
          else this.sums[i] = addDec(this.sums[i], numberToDec(n));
          this.places[i]++;
          const lim = this.matchLimits;
          if (lim && this.listed[i] < lim.perCurrency && this.matches.length < lim.total) {
            this.listed[i]++;
            this.matches.push({ currency: c.key, path: placeText(f.place), value: decString(numberToDec(n)) });
          }
        }
      }
      this.done = i + 1;
    }
    for (const p of map.names) {
      const w = this.walk(p.steps);
      for (let f = w.next(); f !== null; f = w.next()) {
        if (f === PAUSED) {
          yield;
          continue;
        }
        this.any = true;
        if (this.names.length >= LIMITS.names) continue;
        const v = f.value;
        const table = asTable(v);
        const name = typeof v === "string" ? cleanName(v) : table ? characterName(table) : null;
        if (name) this.names.push(name);
      }
    }
    if (!this.any) return "no path of the currency map is in the profile";
    if (map.dataCode) {
      const w = this.walk(map.dataCode.steps);
      for (let f = w.next(); f !== null; f = w.next()) {
        if (f === PAUSED) {
          yield;
          continue;
        }
        const d = numberToDecimal(f.value);
        if (d !== null) {
          this.dataCode = d;
          break;
        }
      }
    }
    return null;
  }
}

/**
 * Reads with `reader` in slices of `slice` places, awaiting `turn()` between them (so other work
 * runs meanwhile), until the end of the map ("done"), `maxPlaces` ("places") or `budgetMs` ("time").
 */
export async function readInSlices(
  reader: ProfileReader,
  o: { slice: number; maxPlaces: number; budgetMs: number; turn: () => Promise<void> },
): Promise<"done" | "places" | "time"> {
  const started = performance.now();
  for (;;) {
    reader.meter.pauseAt = Math.min(o.maxPlaces, reader.meter.visited + o.slice);
    if (reader.resume()) return "done";
    if (reader.meter.visited >= o.maxPlaces) return "places";
    if (performance.now() - started >= o.budgetMs) return "time";
    await o.turn();
  }
}

/** `readProfile`'s answer, read in slices of `slice` places with `turn()` between them (pushes, scans). */
export async function readProfileInSlices(map: CompiledMap, value: unknown, turn: () => Promise<void>, slice = 5_000): Promise<ProfileReading> {
  const reader = new ProfileReader(map, value);
  const end = await readInSlices(reader, { slice, maxPlaces: PLACES_PER_PROFILE, budgetMs: Infinity, turn });
  return end === "done" ? reader.result() : { ok: false, reason: tooManyPlaces(PLACES_PER_PROFILE) };
}

export type ReadOptions = {
  /** list the numbers each currency summed, this far */
  matches?: MatchLimits;
  /** places the reading may visit (PLACES_PER_PROFILE by default); past them the profile is not read */
  maxPlaces?: number;
};

/**
 * Reads one profile through a map at once, visiting at most `maxPlaces` places: a profile the map
 * would read further is not read (`tooManyPlaces`), as a push and a scan skip it.
 */
export function readProfile(map: CompiledMap, value: unknown, opts: ReadOptions = {}): ProfileReading {
  const maxPlaces = opts.maxPlaces ?? PLACES_PER_PROFILE;
  const reader = new ProfileReader(map, value, opts.matches ?? null);
  reader.meter.pauseAt = maxPlaces;
  if (!reader.resume()) return { ok: false, reason: tooManyPlaces(maxPlaces) };
  return reader.result();
}

/** The three seed fields of a reading: the map's currencies of those keys, else 0. */
export function seedFields(balances: Record<string, string>): { cash: string; bank: string; dark_coin: string } {
  return { cash: balances.cash ?? "0", bank: balances.bank ?? "0", dark_coin: balances.dark_coin ?? "0" };
}

export const SEED = compileMap(SEED_MAP);
