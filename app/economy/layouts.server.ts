/**
 * The starting layouts a new project chooses from: the currency maps of the save layouts Roblox games
 * use most, each with a sample profile as the SDK pushes it and the Luau line that pushes it. `seed`
 * (the RP layout the service was first built for) stays the default of the Team API and the CLI, so
 * a script that creates projects gets what it always got.
 */
import { SEED_MAP, type CurrencyMap } from "./currency-map.server";

import { layoutTitle, type LayoutId } from "./layout-titles";

export type { LayoutId };
export const LAYOUT_IDS = ["seed", "profilestore", "flat", "slots"] as const satisfies readonly LayoutId[];
export const DEFAULT_LAYOUT: LayoutId = "seed";

export type Layout = {
  id: LayoutId;
  title: string;
  /** one line for the new-project form */
  description: string;
  map: CurrencyMap;
  /** a profile as `Monitor.economy.push` sends it (ProfileStore's `Data`, unwrapped) */
  sample: unknown;
  /** the Luau that pushes a leaving player's profile in this layout */
  push: string;
};

const map = (currencies: CurrencyMap["currencies"], rest: Partial<CurrencyMap> = {}): CurrencyMap => ({
  currencies,
  names: [],
  data_code: null,
  match: [],
  ...rest,
});

/** Coins and Gems at the top of the profile, spelled as the game spells them. */
const coinsAndGems = (coins: string, gems: string) =>
  map([
    { key: "coins", name: "Coins", paths: [coins] },
    { key: "gems", name: "Gems", paths: [gems] },
  ]);

export const LAYOUTS: Record<LayoutId, Layout> = {
  profilestore: {
    id: "profilestore",
    title: layoutTitle("profilestore")!,
    description: "One profile per player whose Data holds each currency at the top: a template like {Coins = 0, Gems = 0}.",
    map: coinsAndGems("Coins", "Gems"),
    sample: { Coins: 1250, Gems: 40, Inventory: { Sword: true } },
    push: "Monitor.economy.push(player, profile.Data)",
  },
  flat: {
    id: "flat",
    title: layoutTitle("flat")!,
    description: "One value per key, combined into one table per player (DataStore2.Combine(\"DATA\", \"coins\", \"gems\")).",
    map: coinsAndGems("coins", "gems"),
    sample: { coins: 1250, gems: 40, level: 7 },
    push: 'Monitor.economy.push(player, { coins = DataStore2("coins", player):Get(0), gems = DataStore2("gems", player):Get(0) })',
  },
  slots: {
    id: "slots",
    title: layoutTitle("slots")!,
    description: "Several characters or save slots per player, each with its own currencies, summed per player.",
    map: map([{ key: "gems", name: "Gems", paths: ["Slots[*].Gems"] }], { names: ["Slots[*]"] }),
    sample: { Slots: [{ Name: "Knight", Gems: 10 }, { Name: "Mage", Gems: 3 }] },
    push: "Monitor.economy.push(player, profile.Data)",
  },
  seed: {
    id: "seed",
    title: layoutTitle("seed")!,
    description: "Two characters per player (RPCharacterOne and RPCharacterTwo) with Cash, InATM and DarkCoin, and a DataCode.",
    map: SEED_MAP,
    sample: { RPCharacterOne: { Name: "Bob", Cash: 100, InATM: 5000, DarkCoin: 2 }, DataCode: 4 },
    push: "Monitor.economy.push(player, profile.Data)",
  },
};

/** The layouts in the order the new-project form offers them. */
export const LAYOUT_LIST: Layout[] = [LAYOUTS.profilestore, LAYOUTS.flat, LAYOUTS.slots, LAYOUTS.seed];

/** The layout whose map is exactly `m`, if any (a project may have edited its map since). */
export function layoutOf(m: CurrencyMap): LayoutId | null {
  const text = canonical(m);
  return LAYOUT_IDS.find((id) => canonical(LAYOUTS[id].map) === text) ?? null;
}

/** JSON with every object's keys sorted: a stored map (jsonb reorders keys) compares equal to the same map. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/**
 * What the empty economy page shows to get a first push in: the map's currencies and paths, the
 * layout it is (when it is one of the starting ones, unchanged) and the Luau line that pushes it.
 */
export function setupView(m: CurrencyMap) {
  const id = layoutOf(m);
  return {
    layout: id && { id, title: LAYOUTS[id].title },
    push: LAYOUTS[id ?? "profilestore"].push,
    currencies: m.currencies.map((c) => ({ key: c.key, name: c.name, paths: c.paths })),
    match: m.match,
  };
}
