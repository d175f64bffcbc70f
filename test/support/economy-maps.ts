/** A game with two currencies in one save key, `{Data: {Coins, Gems}}`: the map tests and pages use. */
export const COINS_GEMS_MAP = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Data.Coins"] },
    { key: "gems", name: "Gems", paths: ["Data.Gems"] },
  ],
  names: [],
  data_code: null,
  match: ["Data"],
};

/** A player of that game as a push lists it. */
export const coinsGemsPlayer = (userId: number, w: { coins?: number | string; gems?: number | string }, extra: Record<string, unknown> = {}) => ({
  user_id: userId,
  ...extra,
  profile: { Data: { Coins: w.coins ?? 0, Gems: w.gems ?? 0 } },
});

/** A ProfileStore game with Coins and Gems, template `{Coins = 0, Gems = 0}` (docs/economy.md): the SDK pushes `profile.Data`. */
export const PROFILESTORE_MAP = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Coins"] },
    { key: "gems", name: "Gems", paths: ["Gems"] },
  ],
  names: [],
  data_code: null,
  match: [],
};
