import { describe, expect, it } from "vitest";
import { parseCurrencyMap, SEED_MAP, type CurrencyMap } from "../../app/economy/currency-map.server.js";
import { LAYOUT_IDS, LAYOUTS, layoutOf } from "../../app/economy/layouts.server.js";
import { lastPushedWarning, matchPathsWarning, matchWarning } from "../../app/economy/map-warnings.server.js";

/** A map in canonical form from a short description. */
const map = (currencies: Record<string, string[]>, rest: { names?: string[]; data_code?: string | null; match?: string[] } = {}): CurrencyMap =>
  parseCurrencyMap({ currencies: Object.entries(currencies).map(([key, paths]) => ({ key, name: key, paths })), ...rest });

describe("the structural rule: some match path must lead into a currency, name or data-code path", () => {
  it("finds nothing to say without match paths, or for every starting layout", () => {
    expect(matchPathsWarning(map({ coins: ["Coins"] }))).toBeNull();
    for (const id of LAYOUT_IDS) expect(matchPathsWarning(LAYOUTS[id].map), id).toBeNull();
  });

  it("warns when the seed's match paths are kept after the currencies were renamed", () => {
    const w = matchPathsWarning(map({ coins: ["Coins"], gems: ["Gems"] }, { match: ["RPCharacterOne", "RPCharacterTwo"] }));
    expect(w).toEqual({
      kind: "match_paths",
      paths: ["RPCharacterOne", "RPCharacterTwo"],
      message:
        "Every profile would likely be skipped: the match paths “RPCharacterOne”, “RPCharacterTwo” are kept, and none of them leads to a table the currency or name paths read from. A profile is read only when a match path reaches a table; clear the match paths or change them to a table the currencies are in.",
    });
  });

  it("is satisfied by one supported match path among stale ones", () => {
    expect(matchPathsWarning(map({ coins: ["Wallet.Coins"] }, { match: ["RPCharacterOne", "Wallet"] }))).toBeNull();
  });

  it("counts name and data-code paths as well as currency paths", () => {
    expect(matchPathsWarning(map({ coins: ["Coins"] }, { names: ["Profile.Name"], match: ["Profile"] }))).toBeNull();
    expect(matchPathsWarning(map({ coins: ["Coins"] }, { data_code: "Meta.Code", match: ["Meta"] }))).toBeNull();
  });

  it("lets a wildcard agree with any step, on either side", () => {
    expect(matchPathsWarning(map({ gems: ["Slots[*].Gems"] }, { match: ["Slots[1]"] }))).toBeNull();
    expect(matchPathsWarning(map({ gems: ["Slots[2].Gems"] }, { match: ["Slots[*]"] }))).toBeNull();
    expect(matchPathsWarning(map({ cash: ["Characters.*.Cash"] }, { match: ["Characters.Knight"] }))).toBeNull();
    // a different index or key is not a prefix
    expect(matchPathsWarning(map({ gems: ["Slots[2].Gems"] }, { match: ["Slots[1]"] }))).not.toBeNull();
    expect(matchPathsWarning(map({ cash: ["Characters.Mage.Cash"] }, { match: ["Characters.Knight"] }))).not.toBeNull();
  });

  it("needs a proper prefix: a match path that is a currency path reaches a number, never a table", () => {
    const w = matchPathsWarning(map({ coins: ["Coins"] }, { match: ["Coins"] }));
    expect(w?.message).toContain("“Coins” is a currency path: a currency holds a number, and a match path must reach a table");
    // deeper than the currency path: no profile holding the currency has a table there either
    expect(matchPathsWarning(map({ coins: ["Coins"] }, { match: ["Coins.Inner"] }))).not.toBeNull();
  });

  it("says “path … is” for one match path", () => {
    expect(matchPathsWarning(map({ coins: ["Coins"] }, { match: ["Old"] }))?.message).toContain("the match path “Old” is kept");
  });
});

describe("against the last pushed profile", () => {
  const sample = (profile: unknown) => ({ user_id: "123", observed_at: new Date(Date.now() - 5 * 60_000), profile });

  it("says who, when and why the profile would be skipped", async () => {
    const w = await lastPushedWarning(map({ coins: ["Wallet.Coins"] }, { match: ["Wallet"] }), sample({ Coins: 5 }));
    expect(w).toMatchObject({ kind: "last_pushed", user_id: "123", reason: "profile has no table at Wallet" });
    expect(w?.message).toBe("The last profile pushed (user 123, 5 min ago) would be skipped: profile has no table at Wallet.");
  });

  it("says nothing when the map reads the profile, or when there is none", async () => {
    expect(await lastPushedWarning(map({ coins: ["Coins"] }), sample({ Coins: 5 }))).toBeNull();
    expect(await lastPushedWarning(map({ coins: ["Coins"] }), null)).toBeNull();
  });

  it("unwraps a ProfileStore profile as a push does", async () => {
    expect(await lastPushedWarning(LAYOUTS.profilestore.map, sample({ Data: { Coins: 1, Gems: 2 }, MetaData: {} }))).toBeNull();
  });

  it("decides over the structural rule when a profile is at hand: the profile is the truth", async () => {
    // structurally stale, but this game's profiles do hold a Settings table
    const m = map({ coins: ["Coins"] }, { match: ["Settings"] });
    expect(matchPathsWarning(m)).not.toBeNull();
    expect(await matchWarning(m, sample({ Coins: 1, Settings: {} }))).toBeNull();
    // no profile: the structural rule answers
    expect((await matchWarning(m, null))?.kind).toBe("match_paths");
    // a map without match paths that reads nothing of the profile is caught by the profile too
    expect(await matchWarning(map({ coins: ["Coins"] }), sample({ Level: 3 }))).toMatchObject({ kind: "last_pushed", reason: "no path of the currency map is in the profile" });
  });
});

describe("layoutOf", () => {
  it("names a starting layout whatever the order of its keys (as jsonb stores them), and nothing for an edited map", () => {
    const stored = JSON.parse(JSON.stringify({ match: [], data_code: null, names: [], currencies: LAYOUTS.flat.map.currencies.map((c) => ({ paths: c.paths, name: c.name, key: c.key })) }));
    expect(layoutOf(stored)).toBe("flat");
    expect(layoutOf(SEED_MAP)).toBe("seed");
    expect(layoutOf(map({ coins: ["Coins"] }))).toBeNull();
  });
});
