import { describe, expect, it } from "vitest";
import { addDecimals, parseUserId, unwrapProfile, userIdFromKey } from "../../app/economy/profile.server.js";
import { readProfile, SEED, seedFields } from "../../app/economy/currency-map.server.js";

/** The seed map's reading in the shape these tests were written for (null when skipped). */
function parseProfile(value: unknown) {
  const r = readProfile(SEED, value);
  if (!r.ok) return null;
  const { balances: _b, skipped_values: _s, skipped_count: _c, ...rest } = r.profile;
  return { ...seedFields(r.profile.balances), ...rest };
}

// Shaped like the RP game's saved table: two characters, each with its own wallet and bank.
const realProfile = {
  RPCharacterOne: { Name: "Marcus Vale", Cash: 1250, InATM: 40000, DarkCoin: 3, Job: "Police", Inventory: ["Radio"] },
  RPCharacterTwo: { FirstName: "Lena", LastName: "Hart", Cash: 75.5, InATM: 0, DarkCoin: 0 },
  DataCode: 7,
  Settings: { Music: false },
};

describe("parseProfile", () => {
  it("sums both characters and reads names and the data code", () => {
    expect(parseProfile(realProfile)).toEqual({
      cash: "1325.5",
      bank: "40000",
      dark_coin: "3",
      total: "41328.5",
      display_names: ["Marcus Vale", "Lena Hart"],
      data_code: "7",
    });
  });

  it("reads a profile with one character", () => {
    const p = parseProfile({ RPCharacterTwo: { DisplayName: "Solo", Cash: 10, InATM: 5, DarkCoin: 1 } });
    expect(p).toEqual({ cash: "10", bank: "5", dark_coin: "1", total: "16", display_names: ["Solo"], data_code: null });
  });

  it("counts missing and non-numeric amounts as 0", () => {
    const p = parseProfile({
      RPCharacterOne: { Cash: "100", InATM: null, DarkCoin: true },
      RPCharacterTwo: { Cash: 20, InATM: { nested: 1 } },
      DataCode: "abc",
    });
    expect(p).toMatchObject({ cash: "20", bank: "0", dark_coin: "0", total: "20", display_names: [], data_code: null });
  });

  it("reports the non-numeric amounts it skipped, with where they were and why", () => {
    const r = readProfile(SEED, { RPCharacterOne: { Cash: "100", InATM: null, DarkCoin: true }, RPCharacterTwo: { Cash: 20, InATM: { nested: 1 } } });
    expect(r.ok && r.profile.skipped_values).toEqual([
      { currency: "cash", path: "RPCharacterOne.Cash", reason: "is a string, not a number" },
      { currency: "bank", path: "RPCharacterTwo.InATM", reason: "is a table, not a number" },
      { currency: "dark_coin", path: "RPCharacterOne.DarkCoin", reason: "is a boolean, not a number" },
    ]);
    expect(r.ok && r.profile.skipped_count).toBe(3);
  });

  it("treats an empty Luau table ([] in JSON) as a character with nothing in it", () => {
    expect(parseProfile({ RPCharacterOne: [] })).toMatchObject({ cash: "0", total: "0" });
  });

  it("skips a profile with neither character, and values that are not tables", () => {
    expect(parseProfile({ Cash: 100, DataCode: 1 })).toBeNull();
    expect(parseProfile({ RPCharacterOne: "x", RPCharacterTwo: [1, 2] })).toBeNull();
    expect(parseProfile(null)).toBeNull();
    expect(parseProfile("profile")).toBeNull();
    expect(parseProfile([])).toBeNull();
  });

  it("unwraps ProfileService / ProfileStore values", () => {
    const wrapped = {
      Data: realProfile,
      MetaData: { ProfileCreateTime: 1700000000, SessionLoadCount: 12, ActiveSession: null, LastUpdate: 1763800000, MetaTags: {} },
      RobloxMetaData: {},
      UserIds: [123],
      GlobalUpdates: [0, []],
    };
    expect(parseProfile(wrapped)).toEqual(parseProfile(realProfile));
    // Data without MetaData is not a wrapper: it is just a key in the profile
    expect(unwrapProfile({ Data: realProfile })).toEqual({ Data: realProfile });
    expect(parseProfile({ Data: realProfile })).toBeNull();
  });

  it("adds huge and fractional amounts exactly", () => {
    const p = parseProfile({ RPCharacterOne: { Cash: 1e20 }, RPCharacterTwo: { Cash: 1, InATM: 1.7976931348623157e308, DarkCoin: 0.1 } });
    expect(p!.cash).toBe("100000000000000000001");
    expect(p!.bank).toBe("17976931348623157" + "0".repeat(292));
    expect(p!.dark_coin).toBe("0.1");
    expect(p!.total).toBe(addDecimals(p!.cash, p!.bank, p!.dark_coin));
    expect(p!.total.endsWith("100000000000000000001.1")).toBe(true);
  });

  it("keeps negative balances (debt) and sums them", () => {
    expect(parseProfile({ RPCharacterOne: { Cash: -50 }, RPCharacterTwo: { Cash: 20.25 } })).toMatchObject({ cash: "-29.75" });
  });

  it("takes names in the documented order and ignores blank ones", () => {
    const p = parseProfile({
      RPCharacterOne: { Name: "  ", DisplayName: "Shown", CharacterName: "Char", FullName: "Full" },
      RPCharacterTwo: { CharacterName: "", FullName: "Full Name", FirstName: "A", LastName: "B" },
    });
    expect(p!.display_names).toEqual(["Shown", "Full Name"]);
    expect(parseProfile({ RPCharacterOne: { FirstName: "Only" } })!.display_names).toEqual(["Only"]);
  });
});

describe("user ids", () => {
  it("accepts positive integers and digit strings", () => {
    expect(parseUserId(123)).toBe("123");
    expect(parseUserId(" 0042 ")).toBe("42");
    expect(parseUserId("9223372036854775807")).toBe("9223372036854775807");
  });

  it("rejects everything else", () => {
    for (const v of [0, -1, 1.5, "12a", "", "9223372036854775808", null, undefined, {}, 2 ** 60]) {
      expect(parseUserId(v)).toBeNull();
    }
  });

  it("derives the user id from data-store keys", () => {
    expect(userIdFromKey("123")).toBe("123");
    expect(userIdFromKey("Player_123")).toBe("123");
    expect(userIdFromKey("PlayerData/v2/456")).toBe("456");
    expect(userIdFromKey("____PS")).toBeNull();
    expect(userIdFromKey("settings")).toBeNull();
    expect(userIdFromKey("Player_0")).toBeNull();
  });
});
