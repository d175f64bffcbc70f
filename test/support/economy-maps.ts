/** A ProfileStore game with Coins and Gems, template `{Coins = 0, Gems = 0}` (docs/economy.md). */
export const COINS_GEMS_MAP = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Coins"] },
    { key: "gems", name: "Gems", paths: ["Gems"] },
  ],
  names: [],
  data_code: null,
  match: [],
};
