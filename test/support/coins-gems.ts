/** A currency map of two currencies in a ProfileStore-like `Data.Wallet`, for economy tests. */
export const COINS_GEMS = {
  currencies: [
    { key: "coins", name: "Coins", paths: ["Data.Wallet.Coins"] },
    { key: "gems", name: "Gems", paths: ["Data.Wallet.Gems"] },
  ],
  names: [],
  data_code: null,
  match: ["Data"],
};

/** A profile the map above reads. */
export const wallet = (coins: number, gems: number) => ({ Data: { Wallet: { Coins: coins, Gems: gems } } });
