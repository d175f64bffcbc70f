import { describe, expect, it } from "vitest";
import { parseCurrencyMap, SEED_MAP, type CurrencyMap } from "../../app/economy/currency-map.server.js";
import { ApiError } from "../../app/http.server.js";
import { draftFromForm, draftToBody, fieldErrors, mapToDraft, type MapDraft } from "../../app/economy/map-draft.js";

/** The settings form's fields for a draft, as a browser posts them. */
function post(d: MapDraft): FormData {
  const f = new FormData();
  f.set("intent", "save-map");
  d.currencies.forEach((c, i) => {
    f.set(`currencies[${i}].key`, c.key);
    f.set(`currencies[${i}].name`, c.name);
    f.set(`currencies[${i}].paths`, c.paths.replace(/\n/g, "\r\n")); // textareas post CRLF
  });
  for (const k of ["names", "data_code", "match", "profile"] as const) f.set(k, d[k]);
  return f;
}

const detailsOf = (body: unknown) => {
  try {
    parseCurrencyMap(body);
  } catch (err) {
    if (ApiError.is(err)) return err.details ?? [];
    throw err;
  }
  throw new Error("expected a 400");
};

const PROFILE_STORE: CurrencyMap = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Wallet.Coins"] },
    { key: "gems", name: "Gems", paths: ["Gems", "Slots[*].Gems", "Slots[1].Bonus", '["Event Vault"].Gems'] },
  ],
  names: ["Characters[*]"],
  data_code: null,
  match: [],
};

describe("the settings form's currency map draft", () => {
  it.each([
    ["the seed's map", SEED_MAP],
    ["a ProfileStore map with wildcards, an index and a quoted key", PROFILE_STORE],
  ])("round-trips %s exactly through the form", (_, map) => {
    const body = draftToBody(draftFromForm(post(mapToDraft(map))));
    expect(parseCurrencyMap(body)).toEqual(map);
  });

  it("drops blank lines, trims, and reads an empty data-code path as none", () => {
    const body = draftToBody({ currencies: [{ key: " coins ", name: "Coins", paths: "\n  Coins \n\n" }], names: "", data_code: "  ", match: "\n", profile: "" });
    expect(body).toEqual({ currencies: [{ key: "coins", name: "Coins", paths: ["Coins"] }], names: [], data_code: null, match: [] });
  });

  it("orders rows by their index and ignores fields that are not the editor's", () => {
    const f = new FormData();
    f.set("currencies[10].key", "b");
    f.set("currencies[2].key", "a");
    f.set("currencies[x].key", "nope");
    expect(draftFromForm(f).currencies.map((c) => c.key)).toEqual(["a", "b"]);
  });

  it("puts each 400 detail beside its field, in words", () => {
    const draft: MapDraft = {
      currencies: [
        { key: "coins", name: "Coins", paths: "Coins" },
        { key: "Coins", name: "", paths: "Gems\n\nSlots[*.Gems" },
        { key: "coins", name: "Again", paths: "X" },
      ],
      names: "ok\nbad name",
      data_code: "[0]",
      match: "",
      profile: "",
    };
    const errors = fieldErrors(detailsOf(draftToBody(draft)), draft);
    expect(errors["currencies[1].key"]).toEqual(["Key must be 1 to 32 lowercase letters, digits or _, starting with a letter."]);
    expect(errors["currencies[1].name"]).toEqual(["Display name must not be empty."]);
    expect(errors["currencies[1].paths"]).toEqual(["Path “Slots[*.Gems” is not a path: it has an unclosed [ at character 6."]);
    expect(errors["currencies[2].key"]).toEqual(["Key “coins” is already used by a currency above."]);
    expect(errors.names).toEqual(["Name path “bad name” is not a path: it has the key “bad name”: quote keys with other characters, like [\"bad name\"]."]);
    expect(errors.data_code?.[0]).toMatch(/^Data-code path is not a path: it has \[0\]/);
    expect(errors.form).toBeUndefined();
  });

  it("names a missing list and the preview's profile", () => {
    const draft: MapDraft = { currencies: [], names: "", data_code: "", match: "", profile: "" };
    expect(fieldErrors(detailsOf(draftToBody(draft)), draft).currencies).toEqual(["Currencies must list at least one currency."]);
    expect(fieldErrors([{ path: "profile", message: "is required until a profile has been pushed" }], draft).profile).toEqual([
      "The profile is required until a profile has been pushed.",
    ]);
  });
});
