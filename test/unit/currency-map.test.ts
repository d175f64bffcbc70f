import { describe, expect, it } from "vitest";
import {
  compileMap,
  parseCurrencyMap,
  parsePath,
  pathText,
  PLACES_PER_PROFILE,
  ProfileReader,
  readProfile,
  tooManyPlaces,
  SEED,
  SEED_MAP,
  seedFields,
  type CurrencyMap,
} from "../../app/economy/currency-map.server.js";

const map = (m: Partial<CurrencyMap> & Pick<CurrencyMap, "currencies">) => compileMap(parseCurrencyMap(m));
const read = (m: ReturnType<typeof compileMap>, value: unknown) => {
  const r = readProfile(m, value, { matches: { perCurrency: Infinity, total: Infinity } });
  if (!r.ok) throw new Error(`not read: ${r.reason}`);
  return r;
};
/** The 400 a bad map answers: each bad field's path and message. */
function refusal(body: unknown): { path: string; message: string }[] {
  try {
    parseCurrencyMap(body);
  } catch (err) {
    return (err as { details: { path: string; message: string }[] }).details;
  }
  throw new Error("the map was accepted");
}

describe("paths", () => {
  it("parses keys, wildcards, 1-based indexes and quoted keys, and spells them canonically", () => {
    expect(parsePath("Data.Wallet.Coins").steps).toEqual([
      { kind: "key", key: "Data" },
      { kind: "key", key: "Wallet" },
      { kind: "key", key: "Coins" },
    ]);
    expect(parsePath("Characters.*.Cash").steps[1]).toEqual({ kind: "all" });
    expect(parsePath("Slots[*].Gems").steps[1]).toEqual({ kind: "all" });
    expect(parsePath("Slots[2].Gems").steps[1]).toEqual({ kind: "index", index: 2 });
    expect(parsePath('["Key with spaces"].Cash').steps[0]).toEqual({ kind: "key", key: "Key with spaces" });
    expect(pathText(parsePath("Characters.*.Cash"))).toBe("Characters[*].Cash");
    expect(pathText(parsePath('["Plain"]["Two words"]'))).toBe('Plain["Two words"]');
  });

  it("says what is wrong with a path, in words", () => {
    const wrong: [string, RegExp][] = [
      ["", /empty/],
      ["Coins..Gold", /misplaced \./],
      [".Coins", /misplaced \./],
      ["Coins.", /misplaced \./],
      ["Slots[0].Gems", /\[0\].*index from 1/],
      ["Slots[x]", /\[x\]/],
      ["Slots[1", /unclosed \[/],
      ["My Coins", /quote keys.*\["My Coins"\]/],
      ["Cash-2", /quote keys/],
      ['[""]', /bad quoted key/],
      ["Slots[1]Gems", /needs a \. before/],
      [Array.from({ length: 17 }, () => "a").join("."), /more than 16 steps/],
    ];
    for (const [text, message] of wrong) expect(() => parsePath(text), text).toThrow(message);
  });

  it("names every bad field of a map in its 400", () => {
    const details = refusal({
      currencies: [
        { key: "Coins", name: "", paths: ["Coins..x"] },
        { key: "total", name: "Total", paths: [] },
      ],
      data_code: "Data[",
    });
    expect(details.map((d) => d.path)).toEqual(
      expect.arrayContaining(["currencies[0].key", "currencies[0].name", "currencies[0].paths[0]", "currencies[1].key", "currencies[1].paths", "data_code"]),
    );
    expect(details.find((d) => d.path === "currencies[1].key")!.message).toContain("sum of every currency");
    expect(details.find((d) => d.path === "currencies[0].paths[0]")!.message).toMatch(/^is not a path: it has a misplaced \./);
    expect(refusal({ currencies: [{ key: "a", name: "A", paths: ["A"] }, { key: "a", name: "B", paths: ["B"] }] })[0]).toEqual({
      path: "currencies[1].key",
      message: "repeats the key “a”",
    });
    expect(refusal({ currencies: [{ key: "a", name: "A", paths: ["A"] }], unknown: 1 })[0].path).toBe("");
    expect(refusal(null)).toHaveLength(1);
  });
});

describe("three layouts", () => {
  it("the seed's: two characters, summed per currency, names and data code", () => {
    const r = read(SEED, {
      RPCharacterOne: { Name: "Marcus Vale", Cash: 100, InATM: 2000, DarkCoin: 1 },
      RPCharacterTwo: { FirstName: "Lena", LastName: "Hart", Cash: 50.5, InATM: 10, DarkCoin: 0 },
      DataCode: 4,
    });
    expect(r.profile).toEqual({
      balances: { cash: "150.5", bank: "2010", dark_coin: "1" },
      total: "2161.5",
      display_names: ["Marcus Vale", "Lena Hart"],
      data_code: "4",
      skipped_values: [],
      skipped_count: 0,
    });
    expect(seedFields(r.profile.balances)).toEqual({ cash: "150.5", bank: "2010", dark_coin: "1" });
    expect(parseCurrencyMap(SEED_MAP)).toEqual(SEED_MAP);
  });

  it("a flat Coins/Gems profile in a ProfileStore wrapper", () => {
    const m = map({ currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }, { key: "gems", name: "Gems", paths: ["Gems"] }], names: ["Name"] });
    const r = read(m, { Data: { Coins: 250, Gems: 12, Name: "Ava" }, MetaData: { ProfileCreateTime: 1, SessionLoadCount: 3 }, UserIds: [1] });
    expect(r.profile).toMatchObject({ balances: { coins: "250", gems: "12" }, total: "262", display_names: ["Ava"], data_code: null });
    expect(seedFields(r.profile.balances)).toEqual({ cash: "0", bank: "0", dark_coin: "0" });
  });

  it("an array of slots, every slot summed, or one slot by its index", () => {
    const profile = { Slots: [{ Gems: 5, Name: "Main" }, { Gems: 7 }, { Coins: 1 }] };
    const all = map({ currencies: [{ key: "gems", name: "Gems", paths: ["Slots[*].Gems"] }], names: ["Slots[*]"] });
    const r = read(all, profile);
    expect(r.profile).toMatchObject({ balances: { gems: "12" }, total: "12", display_names: ["Main"] });
    expect(r.matches).toEqual([
      { currency: "gems", path: "Slots[1].Gems", value: "5" },
      { currency: "gems", path: "Slots[2].Gems", value: "7" },
    ]);
    expect(read(map({ currencies: [{ key: "gems", name: "Gems", paths: ["Slots[2].Gems"] }] }), profile).profile.balances).toEqual({ gems: "7" });
    // a Luau array with holes arrives as a table keyed by index strings: the index still finds it
    expect(read(map({ currencies: [{ key: "gems", name: "Gems", paths: ["Slots[2].Gems"] }] }), { Slots: { "2": { Gems: 3 } } }).profile.balances).toEqual({
      gems: "3",
    });
  });
});

describe("wildcards and overlapping paths", () => {
  it("Characters.*.Cash reads every character table", () => {
    const m = map({ currencies: [{ key: "cash", name: "Cash", paths: ["Characters.*.Cash"] }] });
    const r = read(m, { Characters: { Knight: { Cash: 10 }, Mage: { Cash: 2.5 }, Rogue: { Level: 3 } } });
    expect(r.profile.balances).toEqual({ cash: "12.5" });
    expect(r.matches.map((x) => x.path)).toEqual(["Characters.Knight.Cash", "Characters.Mage.Cash"]);
  });

  it("counts a place reached by two paths of one currency once", () => {
    const m = map({ currencies: [{ key: "cash", name: "Cash", paths: ["Characters.*.Cash", "Characters.Knight.Cash", "Characters[*].Cash"] }] });
    expect(read(m, { Characters: { Knight: { Cash: 10 }, Mage: { Cash: 1 } } }).profile.balances).toEqual({ cash: "11" });
  });

  it("lets two currencies read the same place (each counts it)", () => {
    const m = map({ currencies: [{ key: "a", name: "A", paths: ["Coins"] }, { key: "b", name: "B", paths: ["Coins"] }] });
    expect(read(m, { Coins: 4 }).profile).toMatchObject({ balances: { a: "4", b: "4" }, total: "8" });
  });

  it("adds nothing for a path that reaches nothing, or reaches through a non-table", () => {
    const m = map({ currencies: [{ key: "coins", name: "Coins", paths: ["Coins", "Wallet.Coins", "Bank.Vault.Coins"] }] });
    expect(read(m, { Coins: 3, Bank: 5 }).profile).toMatchObject({ balances: { coins: "3" }, skipped_count: 0 });
  });
});

describe("amounts", () => {
  const coins = map({ currencies: [{ key: "coins", name: "Coins", paths: ["A", "B"] }, { key: "gems", name: "Gems", paths: ["G"] }] });

  it("sums huge values exactly, past 2^53 and up to 1e308", () => {
    expect(read(coins, { A: 2 ** 53, B: 1 }).profile.balances.coins).toBe("9007199254740993");
    const r = read(coins, { A: 1e308, B: 1e308, G: 0.1 });
    expect(r.profile.balances.coins).toBe(`2${"0".repeat(308)}`);
    expect(r.profile.total).toBe(`2${"0".repeat(308)}.1`);
    expect(read(coins, { A: -5, B: 2.25 }).profile.balances.coins).toBe("-2.75");
  });

  it("skips non-finite and non-numeric values with their reasons; the rest is read", () => {
    const r = readProfile(coins, { A: "NaN", B: 7, G: "Infinity" });
    expect(r).toMatchObject({
      ok: true,
      profile: {
        balances: { coins: "7", gems: "0" },
        total: "7",
        skipped_values: [
          { currency: "coins", path: "A", reason: "is NaN" },
          { currency: "gems", path: "G", reason: "is infinite" },
        ],
        skipped_count: 2,
      },
    });
    const reasons = (v: unknown) => (readProfile(coins, { A: v }) as any).profile.skipped_values[0]?.reason;
    expect(reasons(Number.NaN)).toBe("is NaN");
    expect(reasons(Infinity)).toMatch(/infinite/);
    expect(reasons("-inf")).toBe("is infinite");
    expect(reasons("12")).toBe("is a string, not a number");
    expect(reasons(true)).toBe("is a boolean, not a number");
    expect(reasons({ Amount: 1 })).toBe("is a table, not a number");
    expect(reasons([1, 2])).toBe("is a table, not a number");
    // JSON null is Luau nil: absent, not skipped
    expect((readProfile(coins, { A: null, B: 1 }) as any).profile.skipped_count).toBe(0);
  });

  it("lists at most 20 skipped values and counts them all", () => {
    const m = map({ currencies: [{ key: "gems", name: "Gems", paths: ["Slots[*].Gems"] }] });
    const r = read(m, { Slots: Array.from({ length: 30 }, () => ({ Gems: "x" })) });
    expect(r.profile.skipped_values).toHaveLength(20);
    expect(r.profile.skipped_count).toBe(30);
    expect(r.profile.skipped_values[19].path).toBe("Slots[20].Gems");
  });
});

describe("match rules, names and data code", () => {
  it("reads a value only when a match path reaches a table", () => {
    const m = map({ currencies: [{ key: "coins", name: "Coins", paths: ["Wallet.Coins"] }], match: ["Wallet"] });
    expect(read(m, { Wallet: {} }).profile.balances).toEqual({ coins: "0" });
    expect(read(m, { Wallet: [] }).profile.balances).toEqual({ coins: "0" });
    expect(readProfile(m, { Wallet: 5 })).toEqual({ ok: false, reason: "profile has no table at Wallet" });
    expect(readProfile(m, { Other: {} })).toEqual({ ok: false, reason: "profile has no table at Wallet" });
    const two = map({ currencies: [{ key: "coins", name: "Coins", paths: ["A.Coins"] }], match: ["A", "B"] });
    expect(readProfile(two, {})).toEqual({ ok: false, reason: "profile has neither A nor B" });
  });

  it("without match paths, reads a value any currency or name path reaches", () => {
    const m = map({ currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }] });
    expect(readProfile(m, { Coins: "NaN" }).ok).toBe(true);
    expect(readProfile(m, { Level: 3 })).toEqual({ ok: false, reason: "no path of the currency map is in the profile" });
    for (const v of [null, "text", 5, [1, 2]]) expect(readProfile(m, v).ok).toBe(false);
  });

  it("reads names from strings and from tables, and the first finite data code", () => {
    const m = map({
      currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }],
      names: ["Profile.Nick", "Characters[*]"],
      data_code: "Meta.Version",
    });
    const r = read(m, {
      Coins: 1,
      Profile: { Nick: "  Ava  " },
      Characters: [{ DisplayName: "Knight" }, { FirstName: "Sam", LastName: "Reed" }, { Level: 2 }],
      Meta: { Version: 12 },
    });
    expect(r.profile).toMatchObject({ display_names: ["Ava", "Knight", "Sam Reed"], data_code: "12" });
    expect(read(m, { Coins: 1, Meta: { Version: "12" } }).profile.data_code).toBeNull();
  });
});

describe("bounded readings", () => {
  /** `n` keys at the top of a profile, key i holding i % 10 (their sum is exact and known) */
  const flat = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [i.toString(36), i % 10]));
  const sumOf = (n: number) => Array.from({ length: n }, (_, i) => i % 10).reduce((a, b) => a + b, 0);
  const stars = (count: number, paths = ["*"]) => map({ currencies: Array.from({ length: count }, (_, i) => ({ key: `c${i}`, name: `C${i}`, paths })) });

  it("skips a profile its map would read past the place limit, with the reason, instead of reading on", () => {
    // 20 currencies of * over 100,000 keys: 2,000,000 places
    const r = readProfile(stars(20), flat(100_000));
    expect(r).toEqual({ ok: false, reason: tooManyPlaces(PLACES_PER_PROFILE) });
    expect(tooManyPlaces(PLACES_PER_PROFILE)).toBe("the currency map visits more than 100,000 places in this profile: narrow its wildcard paths");
    // exactly at the limit is read, one place more is not
    expect(readProfile(stars(2), flat(50))).toMatchObject({ ok: true, visited: 100 });
    expect(readProfile(stars(2), flat(50), { maxPlaces: 100 })).toMatchObject({ ok: true, visited: 100 });
    expect(readProfile(stars(2), flat(50), { maxPlaces: 99 })).toEqual({ ok: false, reason: tooManyPlaces(99) });
    // under it, every sum is exact
    const under = readProfile(stars(20), flat(4_000));
    expect(under.ok && under.profile.balances.c19).toBe(String(sumOf(4_000)));
    expect(under.ok && under.visited).toBe(80_000);
  });

  it("lists at most so many places per currency and in all, and counts every one", () => {
    const r = readProfile(stars(20), flat(4_000), { matches: { perCurrency: 20, total: 200 } });
    if (!r.ok) throw new Error(r.reason);
    expect(r.matches).toHaveLength(200);
    const perCurrency = new Map<string, number>();
    for (const m of r.matches) perCurrency.set(m.currency, (perCurrency.get(m.currency) ?? 0) + 1);
    // the first ten currencies fill the 200 places; the rest are counted, not listed
    expect([...perCurrency.values()]).toEqual(Array(10).fill(20));
    expect(r.places).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`c${i}`, 4_000])));
    expect(r.profile.total).toBe(String(20 * sumOf(4_000)));
    expect(r.partial).toEqual([]);
  });

  it("reads in slices that resume where they paused; stopped early, it says which sums are partial", () => {
    const m = stars(3, ["*", "[*]"]);
    const profile = flat(1_000);
    const whole = readProfile(m, profile);
    const reader = new ProfileReader(m, profile);
    let slices = 0;
    for (;;) {
      reader.meter.pauseAt = reader.meter.visited + 97;
      slices++;
      if (reader.resume()) break;
    }
    expect(slices).toBeGreaterThan(20);
    expect(reader.result()).toEqual(whole);

    // stopped inside the second currency: the first is exact, the others are sums so far
    const stopped = new ProfileReader(m, profile);
    stopped.meter.pauseAt = 2_500;
    expect(stopped.resume()).toBe(false);
    const r = stopped.result();
    if (!r.ok) throw new Error(r.reason);
    expect(r.partial).toEqual(["c1", "c2"]);
    expect(r.profile.balances.c0).toBe(String(sumOf(1_000)));
    expect(r.places).toEqual({ c0: 1_000, c1: 500, c2: 0 });
    expect(r.visited).toBe(2_500);
    // stopped before the match paths found a table: not read, with the given reason
    const early = new ProfileReader(map({ currencies: [{ key: "c", name: "C", paths: ["*"] }], match: ["*.Wallet"] }), { a: { x: 1 }, b: { Wallet: {} } });
    early.meter.pauseAt = 1;
    expect(early.resume()).toBe(false);
    expect(early.result("stopped")).toEqual({ ok: false, reason: "stopped" });
  });

  it("counts a place reached by two paths once however many places there are, and spells long keys short", () => {
    const m = map({ currencies: [{ key: "c", name: "C", paths: ["*.*", "A[*]"] }] });
    const long = "k".repeat(10_000);
    const profile = { A: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`${long}${i}`, 1])) };
    const r = readProfile(m, profile, { matches: { perCurrency: 5, total: 5 } });
    if (!r.ok) throw new Error(r.reason);
    expect(r.profile.balances.c).toBe("300");
    expect(r.places.c).toBe(300);
    for (const x of r.matches) expect(x.path.length).toBeLessThanOrEqual(301);
    expect(r.matches[0].path).toBe(`A["${"k".repeat(64)}…"]`);
    const skipped = readProfile(map({ currencies: [{ key: "c", name: "C", paths: ["*"] }] }), { [long]: "NaN" });
    expect(skipped.ok && skipped.profile.skipped_values[0].path).toBe(`["${"k".repeat(64)}…"]`);
  });
});
